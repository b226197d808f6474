package scheduler

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/header"
	"github.com/blitz-go/blitz/waker"
)

// taskBase is the untyped part of every task: the header the queues hold,
// the links of the owned-task list (see owned.go), and the lock and flags of
// the handoff to the JoinHandle. The small fields share one word.
type taskBase struct {
	header.Header
	// s is the scheduler that owns the task, which wakes push it to (the
	// task's header.Task.Scheduler). Set by the spawn before the task is
	// shared, read-only afterwards, kept by a recycled task.
	s *Scheduler
	// prev and next link the task into its owned shard. Guarded by the
	// shard's mutex; nil when unlinked.
	prev, next *taskBase
	// mu guards the Wakers of the JoinHandle's awaiters (core's join and
	// more), and orders the handle's reads of the outcome (core's res)
	// with its release by Detach (see finish).
	mu sync.Mutex
	// shard is the index of the owned shard the task is counted in and
	// linked into. Set by the spawn before the task is shared; read-only
	// afterwards.
	shard uint32
	// linked is true while the task is in its owned shard. Written under
	// the shard's mutex; see ownedTasks.remove for its unlocked read.
	// Whoever unlinks the task (its completion, or the shutdown sweep) is
	// the one that finishes it.
	linked bool
	// counted says where the task is counted as live (notCounted,
	// countedInShard, countedBounded). Set by the spawn before the task is
	// shared, reset by its finish.
	counted uint8
	// dropped is set when a valueTask's future completed or was cancelled
	// and has been zeroed. Owned, like the future, by the worker that moved
	// the header to Running.
	dropped bool
	// The task's identity and what Dump shows of it (see identity.go and
	// the package doc, "Task identity"). id, parent and born are written by
	// the spawn before the task is shared (or by the reuse of a recycled
	// task, which owns it), and read-only while the task is live; Dump
	// reads them under the owned shard's mutex, which the link that made
	// the task visible to it took after the spawn.
	//
	// id is unique in the scheduler, never 0; parent the id of the task
	// whose poll spawned this one, 0 for a spawn from outside the tasks;
	// born the coarse time of the spawn (worker.clock), or, for a spawn
	// from outside the workers, of the first poll (notePoll).
	id, parent uint64
	born       int64
	// run packs the number of polls (low 32 bits) and the coarse time of
	// the last poll's start in milliseconds (high 32 bits, wrapping). Stored
	// by the worker that polls the task, at each poll (notePoll); loaded
	// by Dump.
	run atomic.Uint64
	// wait is what the task waits on, recorded by the leaf futures of its
	// polls (future.Context.Waiting); loaded by Dump, which trusts it only
	// if its Seq is the last poll's (run's low 8 bits).
	wait future.WaitSlot
	// ext is the side record of what few tasks carry (a name, a spawn
	// site, the profiler's labels, the tracer's task, the poll time), nil
	// for most. Stored only by whoever owns the task (its spawn, the worker
	// polling it); loaded by Dump.
	ext atomic.Pointer[taskExt]
}

// pending links the task into its owned shard after a poll that did not
// complete, if it is not linked yet: from now on it may wait in no queue.
// Called only by the worker polling the task (see ownedTasks.remove for
// why linked may be read here without the lock).
func (b *taskBase) pending() {
	if !b.linked {
		b.sched().owned.link(b) // on a worker: the list is not closed yet
	}
}

// sched returns the scheduler that owns the task.
func (b *taskBase) sched() *Scheduler { return b.s }

// Scheduler returns the scheduler that owns the task, for its header (see
// header.Task).
func (b *taskBase) Scheduler() header.Scheduler { return b.s }

// hashShard hashes the task's address to an owned shard, for a spawn from
// outside the workers. The address is only hashed, never turned back into a
// pointer.
func (b *taskBase) hashShard(mask uint32) uint32 {
	a := uintptr(unsafe.Pointer(b))
	return uint32(a>>7^a>>13) & mask
}

// core is the typed part that every kind of task shares: the outcome that
// the JoinHandle collects. A JoinHandle[T] points to it, whatever holds the
// future (task or valueTask, which embed it).
type core[T any] struct {
	taskBase
	// res is the outcome: the value, or the error of a panic, a
	// cancellation or the shutdown. Written by finish before the completing
	// transition, which publishes it; read, and zeroed when nobody can
	// collect it any more, under mu by the handle, or by the party holding
	// the last reference (see finish).
	res future.Result[T]
	// join is the Waker the JoinHandle registered, woken once at completion;
	// more holds the Wakers of any further awaiters (copies of the handle
	// polled or waited on by several tasks or goroutines), nil in the common
	// case of one. Guarded by mu.
	join waker.Waker
	more *awaiters
}

// awaiters holds the Wakers of the awaiters of a task beyond the first:
// ws, in inline for the first few, so that they take one allocation.
type awaiters struct {
	ws     []waker.Waker
	inline [3]waker.Waker
}

// task is the task of a future held in an interface (Spawn, TrySpawn).
type task[T any] struct {
	core[T]
	// fut is the user's future. Owned by the worker that moved the header to
	// Running (only it polls or cancels it); set to nil when the task
	// completes or is aborted, so the GC can reclaim it.
	fut future.Future[T]
}

// valueTask is the task of a future held by value (SpawnValue,
// SpawnValueDetached): the future lives in the task's own allocation, and
// is polled through its address.
type valueTask[T any, F any, PF interface {
	*F
	future.Future[T]
}] struct {
	core[T]
	// fut is the user's future. Owned by the worker that moved the header to
	// Running (only it polls or cancels it); zeroed, and dropped set, when
	// the task completes or is aborted, so the GC can reclaim what it
	// referred to.
	fut F
}

// addJoin registers wk to be woken at completion, unless a registered Waker
// already wakes the same target. Called with mu held.
func (t *core[T]) addJoin(wk waker.Waker) {
	if t.join.IsZero() || t.join.WillWake(wk) {
		t.join = wk
		return
	}
	if t.more == nil {
		t.more = new(awaiters)
		t.more.ws = t.more.inline[:0]
	}
	for i, w := range t.more.ws {
		if w.WillWake(wk) {
			t.more.ws[i] = wk
			return
		}
	}
	t.more.ws = append(t.more.ws, wk)
}

// removeJoin forgets wk (a Wait whose context ended). Called with mu held.
func (t *core[T]) removeJoin(wk waker.Waker) {
	if t.join.WillWake(wk) {
		t.join = waker.Waker{}
	}
	if t.more == nil {
		return
	}
	ws := t.more.ws[:0]
	for _, w := range t.more.ws {
		if !w.WillWake(wk) {
			ws = append(ws, w)
		}
	}
	clear(t.more.ws[len(ws):]) // drop the removed Wakers' targets
	t.more.ws = ws
}

// Poll polls the future once. On completion it completes the header and
// delivers the value; a panic is caught and delivered as a *PanicError. Called
// only by the worker that moved the header to Running.
func (t *task[T]) Poll(cx *future.Context) bool {
	v, ok, perr := t.pollFuture(cx)
	switch {
	case perr != nil:
		t.failPoll(cx, perr, t.cancelFuture())
		return true
	case ok:
		t.fut = nil
		t.finish(cx, future.Ok(v))
		return true
	}
	t.pending()
	return false
}

// pollFuture polls t.fut and converts a panic into a *PanicError.
func (t *task[T]) pollFuture(cx *future.Context) (v T, ok bool, perr *PanicError) {
	defer func() {
		if r := recover(); r != nil {
			perr = recoverPanic(r)
		}
	}()
	v, ok = t.fut.Poll(cx)
	return v, ok, nil
}

// cancelFuture cancels t.fut and drops it. A panic of its Cancel is
// recovered and returned, for the caller to report: the future is dropped
// all the same.
func (t *task[T]) cancelFuture() (perr *PanicError) {
	f := t.fut
	t.fut = nil
	if f == nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			perr = recoverPanic(r)
		}
	}()
	future.Cancel(f)
	return nil
}

// Abort cancels the future and finishes the task with err. If the future's
// Cancel panics, the outcome wraps both err and the *PanicError, so that
// errors.Is matches err and ErrPanicked and errors.As finds the panic.
// Called only by the party that moved the header to Running for the
// purpose (a worker whose transition said abort, or the shutdown).
func (t *task[T]) Abort(err error) { t.abort(err, t.cancelFuture()) }

// Poll polls the future once, through its address; see task.Poll.
func (t *valueTask[T, F, PF]) Poll(cx *future.Context) bool {
	v, ok, perr := t.pollFuture(cx)
	switch {
	case perr != nil:
		t.failPoll(cx, perr, t.cancelFuture())
		return true
	case ok:
		t.dropFuture()
		if t.finish(cx, future.Ok(v)) {
			t.sched().recycle(cx, t)
		}
		return true
	}
	t.pending()
	return false
}

// pollFuture polls t.fut and converts a panic into a *PanicError.
func (t *valueTask[T, F, PF]) pollFuture(cx *future.Context) (v T, ok bool, perr *PanicError) {
	defer func() {
		if r := recover(); r != nil {
			perr = recoverPanic(r)
		}
	}()
	v, ok = PF(&t.fut).Poll(cx)
	return v, ok, nil
}

// dropFuture zeroes the future, once it will not be polled or cancelled
// again.
func (t *valueTask[T, F, PF]) dropFuture() {
	var zero F
	t.fut = zero
	t.dropped = true
}

// cancelFuture cancels the future, unless it completed or was cancelled
// before, and drops it; see task.cancelFuture.
func (t *valueTask[T, F, PF]) cancelFuture() (perr *PanicError) {
	if t.dropped {
		return nil
	}
	defer func() {
		t.dropFuture()
		if r := recover(); r != nil {
			perr = recoverPanic(r)
		}
	}()
	future.Cancel(PF(&t.fut))
	return nil
}

// Abort cancels the future and finishes the task with err; see task.Abort.
func (t *valueTask[T, F, PF]) Abort(err error) { t.abort(err, t.cancelFuture()) }

// failPoll finishes the task whose poll panicked with perr. The future was
// in an unknown state, so the caller cancelled it to release what it
// registered; a second panic, cpe of that Cancel, has no handle to go to:
// it is reported on its own.
func (t *core[T]) failPoll(cx *future.Context, perr, cpe *PanicError) {
	if cpe != nil {
		t.sched().ReportPanic("the Cancel of a task's future, after its poll panicked", cpe)
	}
	t.finish(cx, future.Fail[T](perr))
}

// abort finishes an aborted task with err, whose future's Cancel panicked
// with cpe if cpe is not nil.
func (t *core[T]) abort(err error, cpe *PanicError) {
	if cpe != nil {
		err = fmt.Errorf("%w; then its future's Cancel panicked: %w", err, cpe)
	}
	t.finish(nil, future.Fail[T](err))
}

// finish completes the header, unlinks the task from the owned list and
// hands res to the JoinHandle (waking its awaiters through cx when there is
// one, so a joining task on this worker runs next). If the handle was
// detached, res is dropped and a panic is reported (Config.OnPanic, or the
// log).
//
// The handoff takes no lock unless an awaiter registered a Waker. The
// outcome is written before the completing transition, which publishes it
// (a handle reads res only once it sees Complete) and drops the
// scheduler's reference in the same compare-and-swap. Whoever then holds
// the last reference releases a detached task's outcome: finish, when the
// handle's Detach dropped its reference before that transition (or before
// finish began, and then finish wrote nothing), or the Detach that drops
// it after. A task spawned without a handle (SpawnValueDetached) has
// neither join interest nor the detached bit, for good: its outcome is
// dropped, and finish reports true, for the caller to recycle the task
// object, which nothing references any more but stale Wakers (see
// recycle).
func (t *core[T]) finish(cx *future.Context, res future.Result[T]) (noHandle bool) {
	s := t.sched()
	before := t.Load()
	handleless := !before.JoinInterest() && !before.Detached()
	// Join interest is cleared only by Detach: with it, a handle may still
	// collect the outcome. Nobody reads res before the transition below.
	stored := before.JoinInterest()
	if stored {
		// res is still zero: write only what is not (a pointer write
		// costs a write barrier while the GC marks, which a spawn-heavy
		// program makes it do much of the time; a nil error, or a
		// struct{} value, costs nothing then).
		t.res.Value = res.Value
		if res.Err != nil {
			t.res.Err = res.Err
		}
	}
	prev := t.TransitionToCompleteAndUnref()
	s.owned.remove(&t.taskBase)
	if t.ext.Load() != nil {
		t.endTrace(s.localWorker(cx))
	}
	s.countFinish(cx, res.Err)
	switch {
	case handleless:
		t.dropOutcome(s, res.Err)
		return true
	case prev.Detached() && (!stored || prev.RefCount() == 1):
		if stored {
			t.res = future.Result[T]{} // the last reference: nobody reads it now
		}
		t.dropOutcome(s, res.Err)
		// The Detach that set the bit has yet to drop the handle's
		// reference when it is not the last: being the last then, it
		// releases the stored outcome and reports its panic.
	}
	// Wake the awaiters, also those of a handle detached since they
	// registered: their Poll answers ErrDetached.
	if !prev.JoinWaiter() {
		return false
	}
	t.mu.Lock()
	w, more := t.join, t.more
	t.join, t.more = waker.Waker{}, nil
	t.mu.Unlock()
	wakeFrom(cx, w)
	if more != nil {
		for _, w := range more.ws {
			wakeFrom(cx, w)
		}
	}
	return false
}

// dropOutcome is the end of a finish that nobody will collect: a panic is
// reported, any other outcome forgotten.
func (t *core[T]) dropOutcome(s *Scheduler, err error) {
	if err == nil {
		return // panicOf allocates, even for nil
	}
	if pe := panicOf(err); pe != nil {
		s.deliverPanic("a detached task", pe)
	}
}

// wakeFrom wakes w through cx (the waking worker's LIFO) when there is one,
// directly otherwise.
func wakeFrom(cx *future.Context, w waker.Waker) {
	if cx != nil {
		cx.Wake(w)
	} else {
		w.Wake()
	}
}

// moreWakers returns the Wakers of the awaiters beyond the first. Called
// with mu held.
func (t *core[T]) moreWakers() []waker.Waker {
	if t.more == nil {
		return nil
	}
	return t.more.ws
}
