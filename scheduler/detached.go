package scheduler

// The task of SpawnValueDetached: a future held by value, and nothing for
// an outcome.

import (
	"fmt"

	"github.com/blitz-go/blitz/future"
)

// detachedTask is the task of a future held by value that nothing joins
// (SpawnValueDetached): the future lives in the task's own allocation, and
// the task keeps no outcome and no awaiter, which a valueTask keeps for its
// JoinHandle. So a detached task of an 8-byte future (a server's
// connection) is 120 bytes, a size class of 128, where a valueTask of it is
// 152 (160). A finished one is recycled (see Scheduler.recycle).
type detachedTask[T any, F any, PF interface {
	*F
	future.Future[T]
}] struct {
	taskBase
	// fut is the user's future. Owned by the worker that moved the header to
	// Running (only it polls or cancels it); zeroed, and dropped set, when
	// the task completes or is aborted, so the GC can reclaim what it
	// referred to.
	fut F
}

// Poll polls the future once, through its address; see task.Poll. A task
// that completed is recycled.
func (t *detachedTask[T, F, PF]) Poll(cx *future.Context) bool {
	v, ok, perr := t.pollFuture(cx)
	switch {
	case perr != nil:
		if cpe := t.cancelFuture(); cpe != nil {
			t.sched().ReportPanic("the Cancel of a task's future, after its poll panicked", cpe)
		}
		t.finish(cx, perr)
		return true
	case ok:
		_ = v // nobody collects it
		t.dropFuture()
		t.finish(cx, nil)
		t.sched().recycle(cx, t)
		return true
	}
	t.pending(cx)
	return false
}

// pollFuture polls the future and converts a panic into a *PanicError.
func (t *detachedTask[T, F, PF]) pollFuture(cx *future.Context) (v T, ok bool, perr *PanicError) {
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
func (t *detachedTask[T, F, PF]) dropFuture() {
	var zero F
	t.fut = zero
	t.dropped = true
}

// cancelFuture cancels the future, unless it completed or was cancelled
// before, and drops it; see task.cancelFuture.
func (t *detachedTask[T, F, PF]) cancelFuture() (perr *PanicError) {
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

// Abort cancels the future and ends the task with err; see task.Abort.
// The error goes nowhere, but a panic of the future's Cancel is reported.
func (t *detachedTask[T, F, PF]) Abort(err error) {
	if cpe := t.cancelFuture(); cpe != nil {
		err = fmt.Errorf("%w; then its future's Cancel panicked: %w", err, cpe)
	}
	t.finish(nil, err)
}

// finish unlinks and uncounts the task and completes its header, as
// core.finish does for a task spawned without a handle; err, the task's
// failure if any, is reported if it holds a panic, and otherwise
// forgotten.
func (t *detachedTask[T, F, PF]) finish(cx *future.Context, err error) {
	s := t.sched()
	if err != nil {
		s.noteFailed(&t.taskBase, err)
	}
	s.owned.remove(&t.taskBase, s.workerIndex(cx))
	t.TransitionToCompleteAndUnref()
	if t.ext.Load() != nil {
		t.endTrace(s.localWorker(cx))
	}
	s.countFinish(cx, err)
	if err == nil {
		return
	}
	if pe := panicOf(err); pe != nil {
		s.deliverPanic("a detached task", pe)
	}
}

// toSpares puts t, a finished task that nothing references but stale
// Wakers, in its scheduler's spares of its type.
func (t *detachedTask[T, F, PF]) toSpares() { sparesOf[T, F, PF](t.sched()).Put(t) }
