package future

import "math"

// This file holds the cooperative budget: what a leaf future spends when it
// makes progress, so that one task cannot keep its worker for ever with
// operations that are always ready. See the package doc, "The cooperative
// budget".

// TaskBudget is how many operations the leaf futures of a task may complete
// in one poll before they return not-ready and the task yields.
const TaskBudget = 128

// unlimited is the budget inside Unconstrained: more than any poll spends.
const unlimited = math.MaxInt32

// Budget is the cooperative budget of one task poll. An executor keeps one
// per worker, calls Reset before each poll of a task, hands it to the poll
// with Context.SetBudget, and after the poll asks Yielded whether the task
// asked to run again after the other runnable tasks (it yielded, or spent
// its budget). The zero Budget is spent: Reset it before use.
//
// A Budget belongs to the goroutine making the poll, like the Context that
// points at it; copies of the Context (Context.WithWaker) share it, so a
// combinator's children draw on the same budget.
type Budget struct {
	// left is what the poll may still spend; Context.Spend decrements it,
	// Context.Proceed reads it, Unconstrained raises and restores it.
	// Owned by the polling goroutine.
	left int32
	// yielded is set by Context.Yield (directly, or from Proceed on a
	// spent budget) and read by the executor after the poll. Owned by the
	// polling goroutine.
	yielded bool
	// wakerTaken is set by Context.Waker and read by the executor after
	// the poll (WakerTaken). Owned by the polling goroutine.
	wakerTaken bool
}

// Reset gives the budget TaskBudget units and clears its yield and its
// record of the Waker taken. Executors call it before each task poll.
func (b *Budget) Reset() { b.left, b.yielded, b.wakerTaken = TaskBudget, false, false }

// WakerTaken reports whether the poll since the last Reset took the task's
// Waker (Context.Waker, on the task's Context or a copy of it): a poll that
// returns not-ready without taking it registered nothing that can wake the
// task, unless a Waker registered by an earlier poll still will. A task
// dump warns of such a task (a lost wake-up, most often).
func (b *Budget) WakerTaken() bool { return b.wakerTaken }

// Yielded reports whether the poll since the last Reset asked its task to
// run again after the other runnable tasks (Context.Yield, or a spent
// budget): the executor then queues the task behind them, and behind its
// driver (I/O, timers), rather than at once. Executors call it after every
// poll that returned not-ready, and must reschedule the task when it
// reports true whether or not the task was woken: a yield with the task's
// own Waker wakes nothing (see Context.Yield).
func (b *Budget) Yielded() bool { return b.yielded }

// Remaining returns the units left in the current poll.
func (b *Budget) Remaining() int { return int(b.left) }

// SetBudget makes b the budget of the poll cx is for; nil means none (every
// operation proceeds). Executors call it after Reset(cx), which clears it,
// for the polls of their tasks; a Context from NewContext has none.
func (cx *Context) SetBudget(b *Budget) { cx.budget = b }

// Budget returns the budget of the poll, nil when it has none (outside an
// executor).
func (cx *Context) Budget() *Budget { return cx.budget }

// Proceed is the budget check of a leaf future (a channel receive, a lock, an
// I/O operation, a timer): a leaf calls it at the top of its Poll, before it
// looks at its resource, and calls Spend when the poll completes. Proceed
// reports true while the task has budget left, and always when the poll has
// no budget (outside an executor, or inside Unconstrained). When the budget
// is spent it wakes the task as a yield (see Yield) and reports false: the
// leaf then returns not-ready at once, without registering anything, since
// the task will be polled again after the other runnable tasks have run.
// A leaf that returns not-ready for another reason spends nothing, so
// polling many pending leaves (a Select over many futures) never spends the
// budget. The polling goroutine calls it.
func (cx *Context) Proceed() bool {
	b := cx.budget
	if b == nil || b.left > 0 {
		return true
	}
	cx.Yield()
	return false
}

// Spend spends one unit of the task's budget: a leaf future calls it when
// its poll completes (makes progress), after Proceed reported true. Without
// a budget it does nothing. The polling goroutine calls it.
func (cx *Context) Spend() {
	if b := cx.budget; b != nil {
		b.left--
	}
}

// Yield wakes the task being polled as a yield: the future that calls it
// returns not-ready, and the executor runs the task again after the tasks
// already waiting on its worker and after polling its driver (I/O
// completions, timers), so that a task yielding in a loop lets those
// through. Outside an executor it is cx.Waker().Wake(). The polling
// goroutine calls it.
//
// In a budgeted poll (SetBudget), the yield is recorded in the Budget, and
// the executor, which reschedules every task whose poll returned not-ready
// with Budget.Yielded set, needs no wake: Yield wakes nothing when cx
// carries the task's own Waker (the one Reset installed), which saves a
// compare-and-swap on the task's state per yield. Under a combinator's
// child Waker (a Context from WithWaker) it still wakes that Waker, so the
// combinator learns which child to poll again.
func (cx *Context) Yield() {
	b := cx.budget
	if b == nil {
		cx.waker.Wake()
		return
	}
	b.yielded = true
	if cx.child {
		cx.waker.Wake()
	}
}

// unconstrainedFut is Unconstrained's future.
type unconstrainedFut[T any] struct {
	f  Future[T] // the child; nil once it completed or was cancelled; owner only
	ph phase     // owner only
}

// Unconstrained returns a future that polls f without the cooperative
// budget: the leaf futures inside f proceed however much the task has
// spent, and what they spend is not counted against it. Use it for a short
// burst of work that must not be split across polls; a loop over an
// always-ready source inside it keeps its worker from every other task, as
// it would without a budget. Explicit yields (Yield futures inside f) still
// yield. Cancel cancels f unless it completed. It panics with ErrNilFuture if
// f is nil. Any goroutine may call Unconstrained; the result takes ownership
// of f.
func Unconstrained[T any](f Future[T]) Future[T] {
	mustFuture(f)
	return &unconstrainedFut[T]{f: f}
}

// Poll polls f with an unlimited budget and puts the task's budget back
// afterwards. The owner calls it.
func (u *unconstrainedFut[T]) Poll(cx *Context) (T, bool) {
	u.ph.checkPoll()
	v, ok := u.pollUnlimited(cx)
	if ok {
		u.f, u.ph = nil, phaseDone
	}
	return v, ok
}

// pollUnlimited polls f with the budget raised to unlimited, restoring it
// even if f panics (a combinator above may recover).
func (u *unconstrainedFut[T]) pollUnlimited(cx *Context) (T, bool) {
	b := cx.budget
	if b == nil {
		return u.f.Poll(cx)
	}
	saved := b.left
	b.left = unlimited
	defer func() { b.left = saved }()
	return u.f.Poll(cx)
}

// Cancel cancels f unless it completed. It is idempotent. The owner calls it.
func (u *unconstrainedFut[T]) Cancel() {
	if u.ph != phasePending {
		return
	}
	f := u.f
	u.f, u.ph = nil, phaseCancelled
	Cancel(f)
}

// consumeFut is ConsumeBudget's future.
type consumeFut struct {
	ph phase // owner only
}

// ConsumeBudget returns a future that spends one unit of the task's budget
// and completes, unless the budget is spent: then it yields (see
// Context.Yield) and completes on the next poll. A loop that does work
// touching no leaf future (a computation, a drain of a plain slice) awaits
// it between steps to yield only when the task has used its share, rather
// than on every step as a Yield would. Outside an executor it completes at
// once. Any goroutine may call ConsumeBudget.
func ConsumeBudget() Future[struct{}] { return &consumeFut{} }

// Poll spends a unit, or yields when none is left. The owner calls it.
func (c *consumeFut) Poll(cx *Context) (struct{}, bool) {
	c.ph.checkPoll()
	if !cx.Proceed() {
		return struct{}{}, false
	}
	cx.Spend()
	c.ph = phaseDone
	return struct{}{}, true
}

// Cancel marks the future cancelled. The owner calls it.
func (c *consumeFut) Cancel() {
	if c.ph == phasePending {
		c.ph = phaseCancelled
	}
}
