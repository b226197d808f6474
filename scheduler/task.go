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
// the links of the owned-task list (see owned.go), and the flags of the
// handoff to the JoinHandle, whose lock the task shares with others (see
// joinStripe). The small fields share one word. The fields a poll reads
// or writes (the header, run, wait, the flags) come first, so that they
// share as few cache lines as the task's placement allows.
type taskBase struct {
	header.Header
	// run packs the number of polls divided by 2^16 (bits 0-15, wrapping;
	// the header's state counts the rest, State.Polls), the await site at
	// which the task's async function last suspended (bits 16-31, 0 for
	// none or a site past 2^16-1; RecordSite), and the coarse time of the
	// last poll's start in milliseconds (bits 32-63, wrapping). Stored by
	// the worker that polls the task, when a poll changes it (notePoll,
	// RecordSite), a first poll's stamp only at the link (pending); loaded
	// by Dump.
	run atomic.Uint64
	// wait is what the task waits on, recorded by the leaf futures of its
	// polls (future.Context.Waiting); loaded by Dump, which trusts it only
	// if its Seq is the last poll's (the low 8 bits of its count).
	wait future.WaitSlot
	// s is the scheduler that owns the task, which wakes push it to (the
	// task's header.Task.Scheduler). Set by the spawn before the task is
	// shared, read-only afterwards, kept by a recycled task.
	s *Scheduler
	// shard is the index of the owned shard the task is counted in and
	// linked into. Set by the spawn before the task is shared, and by the
	// link, which may move the task to the linking worker's shard
	// (ownedTasks.rehome); read by the task's finish, which the poll that
	// linked it happens before.
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
	// dropped is set when the future held by value of a valueTask or a
	// detachedTask completed or was cancelled and has been zeroed. Owned,
	// like the future, by the worker that moved the header to Running.
	dropped bool
	// hasMore says the task's join stripe holds Wakers of awaiters beyond
	// the first for it (joinStripe.more). Guarded by the stripe's mutex.
	hasMore bool
	// prev and next link the task into its owned shard. Guarded by the
	// shard's mutex; nil when unlinked.
	prev, next *taskBase
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
	// from outside the workers, of the first poll (notePollFirst).
	id, parent uint64
	born       int64
	// ext is the side record of what few tasks carry (a name, a spawn
	// site, the profiler's labels, the tracer's task, the poll time), nil
	// for most. Stored only by whoever owns the task (its spawn, the worker
	// polling it); loaded by Dump.
	ext atomic.Pointer[taskExt]
}

// pending links the task into the owned shard of the worker polling it
// (cx's) after a poll that did not complete, or during a poll that takes
// a shield (ShieldFuture), if it is not linked yet: from now on it may
// wait in no queue. Called only by the worker polling the task
// (see ownedTasks.remove for why linked may be read here without the lock).
func (b *taskBase) pending(cx *future.Context) {
	if !b.linked {
		b.storeFirstRun(cx)
		b.sched().owned.link(b, uint32(cx.Worker())) // on a worker: the list is not closed yet
	}
}

// join returns the task's join stripe: the lock that guards the Wakers of
// its JoinHandle's awaiters (core's join, and the stripe's more) and
// orders the handle's reads of the outcome (core's res) with its release
// by Detach (see finish). Chosen by hashing the task's address, which is
// only hashed, never turned back into a pointer.
func (b *taskBase) join() *joinStripe {
	a := uintptr(unsafe.Pointer(b))
	return &b.s.joins[(a>>7^a>>13)&(joinStripes-1)]
}

// joinStripes is the number of join stripes of a scheduler (a power of
// two). A task's JoinHandle takes its stripe's lock at each poll, and the
// completion of a task that an awaiter registered with takes it once: with
// 64, two workers rarely want the same stripe at the same time, and no
// task carries a lock of its own (8 bytes each).
const joinStripes = 64

// joinStripe is one of the locks that the JoinHandles of a scheduler's tasks
// share (see taskBase.join).
type joinStripe struct {
	mu sync.Mutex
	// more holds, for each task of the stripe with several awaiters
	// (copies of its handle polled or waited on by several tasks or
	// goroutines), the Wakers beyond the first (core's join). Guarded by
	// mu; an entry lives from the second awaiter's registration to the
	// completion (or the last awaiter's removal), and the task's hasMore
	// says it exists.
	more map[*taskBase]*awaiters
	_    pad
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
	// collect it any more, under the join stripe's mutex by the handle, or
	// by the party holding the last reference (see finish).
	res future.Result[T]
	// awaiter is the Waker the JoinHandle registered, woken once at
	// completion; the Wakers of any further awaiters are in the join
	// stripe (hasMore). Guarded by the join stripe's mutex.
	awaiter waker.Waker
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
// already wakes the same target. Called with st, the task's join stripe,
// locked.
func (t *core[T]) addJoin(st *joinStripe, wk waker.Waker) {
	if t.awaiter.IsZero() || t.awaiter.WillWake(wk) {
		t.awaiter = wk
		return
	}
	var more *awaiters
	if t.hasMore {
		more = st.more[&t.taskBase]
	} else {
		if st.more == nil {
			st.more = make(map[*taskBase]*awaiters)
		}
		more = new(awaiters)
		more.ws = more.inline[:0]
		st.more[&t.taskBase] = more
		t.hasMore = true
	}
	for i, w := range more.ws {
		if w.WillWake(wk) {
			more.ws[i] = wk
			return
		}
	}
	more.ws = append(more.ws, wk)
}

// removeJoin forgets wk (a Wait whose context ended). Called with st, the
// task's join stripe, locked.
func (t *core[T]) removeJoin(st *joinStripe, wk waker.Waker) {
	if t.awaiter.WillWake(wk) {
		t.awaiter = waker.Waker{}
	}
	if !t.hasMore {
		return
	}
	more := st.more[&t.taskBase]
	ws := more.ws[:0]
	for _, w := range more.ws {
		if !w.WillWake(wk) {
			ws = append(ws, w)
		}
	}
	clear(more.ws[len(ws):]) // drop the removed Wakers' targets
	more.ws = ws
	if len(ws) == 0 {
		delete(st.more, &t.taskBase)
		t.hasMore = false
	}
}

// takeAwaiters removes and returns the Wakers of the awaiters: the first,
// and the others (nil when there are none). Called with st, the task's
// join stripe, locked.
func (t *core[T]) takeAwaiters(st *joinStripe) (waker.Waker, []waker.Waker) {
	w := t.awaiter
	t.awaiter = waker.Waker{}
	if !t.hasMore {
		return w, nil
	}
	more := st.more[&t.taskBase]
	delete(st.more, &t.taskBase)
	t.hasMore = false
	return w, more.ws
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
	t.pending(cx)
	return false
}

// pollFuture polls t.fut and converts a panic into a *PanicError.
func (t *task[T]) pollFuture(cx *future.Context) (v T, ok bool, perr *PanicError) {
	return pollHeld(t.fut, cx)
}

// cancelFuture cancels t.fut and drops it. A panic of its Cancel is
// recovered and returned, for the caller to report: the future is dropped
// all the same.
func (t *task[T]) cancelFuture() (perr *PanicError) {
	f := t.fut
	t.fut = nil
	return cancelHeld(f)
}

// pollHeld polls f, a task's future held in an interface (task,
// notifyTask), and converts a panic into a *PanicError. The tasks that
// hold their future by value (valueTask, detachedTask) keep their own
// copies of this and of cancelHeld: a shared generic helper made a chain
// of detached spawns 10 % slower (95 → 106 µs per 1,000).
func pollHeld[T any](f future.Future[T], cx *future.Context) (v T, ok bool, perr *PanicError) {
	defer func() {
		if r := recover(); r != nil {
			perr = recoverPanic(r)
		}
	}()
	v, ok = f.Poll(cx)
	return v, ok, nil
}

// cancelHeld cancels f, a future that its task dropped (nil: none), and
// returns the panic of its Cancel, recovered.
func cancelHeld[T any](f future.Future[T]) (perr *PanicError) {
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
		t.finish(cx, future.Ok(v))
		return true
	}
	t.pending(cx)
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

// finish unlinks and uncounts the task, completes the header and
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
// it after. A task without a handle would have neither join interest nor
// the detached bit, for good: its outcome is dropped, and finish reports
// true. (SpawnValueDetached's tasks are detachedTasks, which keep no
// outcome and have a finish of their own.)
func (t *core[T]) finish(cx *future.Context, res future.Result[T]) (noHandle bool) {
	s := t.sched()
	if res.Err != nil {
		s.noteFailed(&t.taskBase, res.Err)
	}
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
	// Uncounted before the transition publishes the outcome: a caller who
	// joined the task then sees it gone from Stats().Live, and its slot
	// free for a TrySpawn under Config.MaxLiveTasks.
	s.owned.remove(&t.taskBase, s.workerIndex(cx))
	prev := t.TransitionToCompleteAndUnref()
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
	st := t.join()
	st.mu.Lock()
	w, more := t.takeAwaiters(st)
	st.mu.Unlock()
	wakeFrom(cx, w)
	for _, w := range more {
		wakeFrom(cx, w)
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
