package scheduler

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/header"
	"github.com/blitz-go/blitz/waker"
)

// taskBase is the untyped part of every task: the header the queues hold and
// the links of the owned-task list (see owned.go).
type taskBase struct {
	header.Header
	// prev and next link the task into its owned shard. Guarded by the
	// shard's mutex; nil when unlinked.
	prev, next *taskBase
	// linked is true while the task is in its owned shard, guarded by the
	// shard's mutex. Whoever unlinks the task (its completion, or the
	// shutdown sweep) is the one that finishes it.
	linked bool
}

// sched returns the scheduler that owns the task.
func (b *taskBase) sched() *Scheduler { return b.Scheduler().(*Scheduler) }

// shardIndex hashes the task's address to an owned shard. The address is only
// hashed, never turned back into a pointer.
func (b *taskBase) shardIndex(mask uintptr) uintptr {
	a := uintptr(unsafe.Pointer(b))
	return (a>>7 ^ a>>13) & mask
}

// task is the concrete task behind a header: the future and, once it is
// done, the result for the JoinHandle.
type task[T any] struct {
	taskBase
	// fut is the user's future. Owned by the worker that moved the header to
	// Running (only it polls or cancels it); set to nil when the task
	// completes or is aborted, so the GC can reclaim it.
	fut future.Future[T]
	// mu guards done, res and join: the handoff between the worker that
	// completes the task and the JoinHandle.
	mu sync.Mutex
	// done is set once, when res holds the outcome. Guarded by mu.
	done bool
	// res is the outcome: the value, or the error of a panic, a cancellation
	// or the shutdown. Guarded by mu; zeroed when nobody can collect it.
	res future.Result[T]
	// join is the Waker the JoinHandle registered, woken once at completion;
	// more holds the Wakers of any further awaiters (copies of the handle
	// polled or waited on by several tasks or goroutines), nil in the common
	// case of one, so that a task stays one 160-byte allocation. Guarded by
	// mu.
	join waker.Waker
	more *[]waker.Waker
}

// addJoin registers wk to be woken at completion, unless a registered Waker
// already wakes the same target. Called with mu held.
func (t *task[T]) addJoin(wk waker.Waker) {
	if t.join.IsZero() || t.join.WillWake(wk) {
		t.join = wk
		return
	}
	if t.more == nil {
		t.more = new([]waker.Waker)
	}
	for i, w := range *t.more {
		if w.WillWake(wk) {
			(*t.more)[i] = wk
			return
		}
	}
	*t.more = append(*t.more, wk)
}

// removeJoin forgets wk (a Wait whose context ended). Called with mu held.
func (t *task[T]) removeJoin(wk waker.Waker) {
	if t.join.WillWake(wk) {
		t.join = waker.Waker{}
	}
	if t.more == nil {
		return
	}
	ws := (*t.more)[:0]
	for _, w := range *t.more {
		if !w.WillWake(wk) {
			ws = append(ws, w)
		}
	}
	*t.more = ws
}

// Poll polls the future once. On completion it completes the header and
// delivers the value; a panic is caught and delivered as a *PanicError. Called
// only by the worker that moved the header to Running.
func (t *task[T]) Poll(cx *future.Context) bool {
	v, ok, perr := t.pollFuture(cx)
	switch {
	case perr != nil:
		// The future is in an unknown state: cancel it so it releases what
		// it registered, and report the panic. A second panic, in that
		// Cancel, has no handle to go to: it is reported on its own.
		if cpe := t.cancelFuture(); cpe != nil {
			t.sched().ReportPanic("the Cancel of a task's future, after its poll panicked", cpe)
		}
		t.finish(cx, future.Fail[T](perr))
		return true
	case ok:
		t.fut = nil
		t.finish(cx, future.Ok(v))
		return true
	}
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
func (t *task[T]) Abort(err error) {
	if pe := t.cancelFuture(); pe != nil {
		err = fmt.Errorf("%w; then its future's Cancel panicked: %w", err, pe)
	}
	t.finish(nil, future.Fail[T](err))
}

// finish completes the header, unlinks the task from the owned list and
// hands res to the JoinHandle (waking it through cx when there is one, so a
// joining task on this worker runs next). If the handle was detached, res is
// dropped and a panic is reported (Config.OnPanic, or the log).
func (t *task[T]) finish(cx *future.Context, res future.Result[T]) {
	s := t.sched()
	prev := t.TransitionToComplete()
	s.owned.remove(&t.taskBase)
	s.countFinish(cx, res.Err)
	t.mu.Lock()
	if prev.Detached() {
		t.mu.Unlock()
		t.Unref()
		if pe := panicOf(res.Err); pe != nil {
			s.deliverPanic("a detached task", pe)
		}
		return
	}
	t.res, t.done = res, true
	w, more := t.join, t.more
	t.join, t.more = waker.Waker{}, nil
	t.mu.Unlock()
	// The handle still holds its reference, so this is not the last one:
	// the result stays for it (see JoinHandle.Detach).
	t.Unref()
	wakeFrom(cx, w)
	if more != nil {
		for _, w := range *more {
			wakeFrom(cx, w)
		}
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
