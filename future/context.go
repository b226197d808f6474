package future

import "github.com/blitz-go/blitz/waker"

// NoWorker is Context.Worker's answer when the poll is not made by one of an
// executor's workers (a goroutine blocked in BlockOn, a test).
const NoWorker = -1

// Context is what a poll receives: the Waker of the task being polled, the
// current worker, executor and task, and the task's cooperative budget,
// which a runtime in another language would keep in thread-locals: Go has
// no goroutine-local storage, so the poll carries them.
//
// A Context is valid only during the Poll call it was passed to: the executor
// reuses it for the next poll. A future must not keep it or hand it to another
// goroutine; it keeps a copy of cx.Waker() instead. Context's methods are
// called by the goroutine making the poll.
type Context struct {
	waker waker.Waker
	// child is set in the copies WithWaker makes: their Waker is a
	// combinator's child Waker, not the task's own, so Yield must wake it
	// for the combinator to learn which child to poll again; with the
	// task's own Waker the executor's budget carries the yield without a
	// wake.
	child  bool
	exec   Executor
	task   any
	worker int
	// budget is the cooperative budget of the task poll (see Budget), nil
	// when the poll has none. Copies made by WithWaker share it.
	budget *Budget
}

// NewContext returns a Context for polling a future outside any executor,
// from an ordinary goroutine or a test: w is woken when the future can make
// progress (typically a *waker.Signal the goroutine waits on).
func NewContext(w waker.Waker) *Context {
	return &Context{waker: w, worker: NoWorker}
}

// Reset points cx at a new poll. Executors call it before each poll so that
// one Context serves a worker's whole life and a poll allocates nothing.
// task is the executor's handle of the task being polled (the scheduler's is
// a *header.Header), worker the index of the polling worker or NoWorker.
// Reset leaves cx without a budget; an executor that budgets its tasks'
// polls calls SetBudget after it.
func (cx *Context) Reset(w waker.Waker, exec Executor, task any, worker int) {
	cx.waker, cx.child, cx.exec, cx.task, cx.worker, cx.budget = w, false, exec, task, worker, nil
}

// Waker returns the Waker that wakes the task being polled.
func (cx *Context) Waker() waker.Waker { return cx.waker }

// Executor returns the executor making this poll, nil outside one.
func (cx *Context) Executor() Executor { return cx.exec }

// Task returns the executor's handle of the task being polled, nil outside an
// executor. Its dynamic type belongs to the executor.
func (cx *Context) Task() any { return cx.task }

// Worker returns the index of the worker making this poll, or NoWorker.
func (cx *Context) Worker() int { return cx.worker }

// Services returns the runtime services of the executor making this poll
// (Executor.Services), nil outside one.
func (cx *Context) Services() any {
	if cx.exec == nil {
		return nil
	}
	return cx.exec.Services()
}

// Wake wakes w on behalf of this poll. It is the same as w.Wake(), except
// that a task woken by a task keeps running on the waking task's worker when
// the executor allows it (the LIFO slot), which is what makes a ping-pong
// between two tasks cheap. Primitives that wake a waiter while being polled
// (a channel send that completes a receive) call cx.Wake(w) rather than
// w.Wake().
func (cx *Context) Wake(w waker.Waker) {
	if cx.exec != nil && cx.exec.WakeLocal(cx, w) {
		return
	}
	w.Wake()
}

// WithWaker returns a copy of cx whose Waker is w, for a combinator that
// gives a child its own waker (to learn which child was woken). The copy
// keeps the executor, task and worker of cx, shares its budget, and is
// valid as long as cx is.
func (cx *Context) WithWaker(w waker.Waker) Context {
	c := *cx
	c.waker, c.child = w, true
	return c
}
