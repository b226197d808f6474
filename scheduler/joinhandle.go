package scheduler

import (
	"context"
	"fmt"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/header"
)

// JoinHandle is the caller's side of a spawned task: a future of the task's
// outcome, a blocking Wait for goroutines, and the task's cancel and detach.
// It is a small value, copied freely; all copies refer to the same task. The
// zero JoinHandle refers to no task and its methods panic with
// ErrZeroHandle.
//
// The outcome is a future.Result: the task's value, or an error that is a
// *PanicError (the task panicked), ErrCancelled (Cancel took effect before
// the task completed), ErrShutdown (the scheduler shut down first) or
// ErrNilFuture (Spawn was given a nil future). When the future's Cancel
// panics during a cancellation or the shutdown, the error matches both
// ErrCancelled or ErrShutdown and ErrPanicked, and errors.As finds the
// *PanicError.
type JoinHandle[T any] struct {
	t *core[T]
}

// waitJoin is what a task awaiting a JoinHandle waits on, in Dump.
var waitJoin = future.NewWaitKind("JoinHandle", future.WaitTask)

// task returns the task, panicking for the zero handle.
func (j JoinHandle[T]) task() *core[T] {
	if j.t == nil {
		panic(ErrZeroHandle)
	}
	return j.t
}

// Poll returns the task's outcome once it finished; until then it registers
// cx's Waker, which the task's completion wakes. It may be polled again
// after it returned the outcome, and returns the same outcome. It makes
// JoinHandle a future.Future[future.Result[T]]. Returning the outcome
// consumes a unit of the polling task's budget; with none left, Poll yields
// instead (see the future package, "The cooperative budget"). Called by the
// task or goroutine awaiting the handle.
func (j JoinHandle[T]) Poll(cx *future.Context) (future.Result[T], bool) {
	t := j.task()
	if !cx.Proceed() {
		return future.Result[T]{}, false
	}
	js := t.join()
	js.mu.Lock()
	defer js.mu.Unlock()
	st := t.Load()
	if st.Detached() {
		cx.Spend()
		return future.Fail[T](ErrDetached), true
	}
	// Register, then tell the completion so (SetJoinWaiter); a completion
	// that came first, which will not wake anyone, is seen either way.
	if st.Lifecycle() != header.Complete {
		t.addJoin(js, cx.Waker())
		if !t.SetJoinWaiter() {
			cx.Waiting(waitJoin, t.id)
			return future.Result[T]{}, false
		}
	}
	cx.Spend()
	return t.res, true
}

// Future returns j as a future.Future, for the combinators, whose type
// inference does not see through to the interface a struct implements:
// future.Map(j.Future(), f) rather than future.Map(j, f).
func (j JoinHandle[T]) Future() future.Future[future.Result[T]] { return j }

// Wait blocks the calling goroutine until the task finished and returns its
// value or error; if ctx ends first it returns an error wrapping ctx's cause,
// and the task goes on (Wait bounds the wait, not the task; call Cancel to
// stop it). It is the bridge from task code back to goroutines. A task must
// not wait (it would block its worker; on one worker, forever): called on a
// worker for a task that has not finished, Wait returns an error wrapping
// ErrBlockingInTask at once, and a task polls the handle instead. That
// check walks the stack, about a microsecond, and only a Wait that would
// block pays it (see the package doc, "Blocking calls inside a task").
func (j JoinHandle[T]) Wait(ctx context.Context) (T, error) {
	t := j.task()
	b := future.GetBlocker() // no allocation of its own once warm
	defer b.Put()
	cx := b.Context()
	for first := true; ; first = false {
		if r, ok := j.Poll(cx); ok {
			return r.Value, r.Err
		}
		var err error
		if first && OnWorker() {
			err = ErrBlockingInTask
		} else {
			err = b.Signal().Wait(ctx)
		}
		if err != nil {
			js := t.join()
			js.mu.Lock()
			t.removeJoin(js, cx.Waker())
			js.mu.Unlock()
			var zero T
			return zero, fmt.Errorf("scheduler: wait for task: %w", err)
		}
	}
}

// Cancel requests the task's cancellation. A task that has not completed is
// aborted by the next worker to see it: right away if it is idle, after its
// current poll if it is running, and once its last shield is removed if it
// is shielded; its future's Cancel runs and the handle resolves with
// ErrCancelled (with an error also matching ErrPanicked if that Cancel
// panicked). A task that already completed keeps its outcome. Whoever
// awaits the handle is woken with the outcome. It makes JoinHandle a
// future.Canceler, so a race or timeout that abandons the handle cancels
// the task (and gets one harmless wake when the abort completes); Detach
// first to let the task run on unobserved. Any goroutine may call it, any
// number of times.
func (j JoinHandle[T]) Cancel() {
	t := j.task()
	if t.Header.Cancel() == header.CancelEnqueue {
		t.sched().Schedule(&t.Header)
	}
}

// Detach gives up the outcome: the task runs on, and when it completes its
// value is dropped. A panic, which nobody will collect any more, is
// reported (see Scheduler.ReportPanic: Config.OnPanic, or the standard
// logger), also when the task had already finished. After Detach the
// handle is not polled or waited on: Poll and Wait then return
// ErrDetached. Any goroutine may call it.
func (j JoinHandle[T]) Detach() {
	t := j.task()
	prev := t.Header.Detach()
	if prev.Detached() {
		return // detached before: its reference is already dropped
	}
	if !t.Unref() {
		return // the task will see the detached bit when it finishes
	}
	// The task already finished: release the outcome now, and report a
	// panic that nobody will collect any more. Awaiters that registered
	// before (another copy's Wait) are woken, not dropped: the finish may
	// not have taken them yet, and their Poll now answers ErrDetached.
	js := t.join()
	js.mu.Lock()
	err := t.res.Err
	t.res = future.Result[T]{}
	w, more := t.takeAwaiters(js)
	js.mu.Unlock()
	w.Wake()
	for _, w := range more {
		w.Wake()
	}
	if pe := panicOf(err); pe != nil {
		t.sched().deliverPanic("a detached task", pe)
	}
}

// IsFinished reports whether the task finished (completed, panicked, was
// cancelled or dropped by the shutdown) and its outcome waits in the
// handle, so that Poll would return it at once. A detached handle keeps no
// outcome: it reports false. Any goroutine may call it; it takes no lock.
func (j JoinHandle[T]) IsFinished() bool {
	st := j.task().Load()
	return st.Lifecycle() == header.Complete && !st.Detached()
}
