// Package future holds the poll contract of blitz for Go (Future, Context,
// explicit cancellation) and the combinators that compose futures without
// writing a Poll by hand: Map, Then, joins, try-joins, races and selects,
// and Block, the bridge that drives a future from an ordinary goroutine. It
// imports only the standard library and the sibling waker module.
//
// Comments elsewhere in the package, and in the modules built on it, cite
// the sections below by name.
//
// # The poll contract
//
// A [Future] is a state machine that its owner advances by calling Poll.
// Poll must not block. It returns the value and true when the future is
// complete, or the zero value and false when it is not; in the second case
// it has first arranged for cx.Waker() to be woken when polling again can
// make progress: it registered the Waker with whatever it waits on (a
// waiter list, a timer, an I/O operation, a child future that does so), or,
// if it can go on at once, woke it itself. Returning false without such an
// arrangement is a lost wakeup: nothing ever polls the future again and its
// task hangs. Wakes may be spurious and they coalesce (see "Wakers" in the
// waker package), so a Poll after a wake rechecks its state and may return
// false again, re-registering as needed (waker.Waker.WillWake saves a
// re-registration when the task is the same).
//
// A future has one owner at a time: the task it is part of (through the
// executor), the combinator it was handed to, or a goroutine in [Block].
// Only the owner calls Poll and Cancel, one call at a time, so a future's
// own state needs no lock; what other goroutines touch (the value a waker
// hands over) is guarded by the primitive that owns it. Handing a future to
// a combinator hands over its ownership.
//
// Once Poll has returned true the future is finished and is never polled
// again. Every future of this package panics with [ErrPolledAfterCompletion]
// if it is, and with [ErrPolledAfterCancel] if polled after Cancel; a
// misuse is a bug in the owner, so it panics rather than returning an error.
//
// # Context
//
// A [Context] is what a poll receives: the Waker of the task being polled,
// and what a runtime in another language would keep in thread-locals (the
// current executor, task and worker, the runtime's services, the task's
// cooperative budget): Go has no goroutine-local storage, so the poll
// carries them. The executor makes one per worker and [Context.Reset]s it
// before each poll, so a poll allocates nothing; the flip side is that a
// Context is valid only during the Poll it was passed to. A future keeps a
// copy of cx.Waker(), never cx itself.
//
// A future that wakes another task while being polled (a channel send that
// completes a receive) calls cx.Wake(w) rather than w.Wake(): the same wake,
// but the executor may run the woken task next on this worker (its LIFO
// slot), which makes a ping-pong between two tasks cheap. Code outside a
// poll, such as a goroutine that completes an operation, calls w.Wake().
// The combinators pass their own cx to their children unchanged: a child's
// wake wakes the whole task, which polls the combinator, which polls its
// children.
//
// # The cooperative budget
//
// A task poll can do a great deal of work before it returns: a loop over a
// channel that stays ready, or a lock that is always free, never returns
// not-ready, and the worker running it runs nothing else, not the other
// tasks, not the I/O completions and timers. So each task poll on an
// executor gets a budget of [TaskBudget] (128) operations. The leaf futures
// of blitz (channel receives and sends, locks, semaphores, notifications,
// JoinHandles, socket and file I/O, sleeps) consume a unit each time they
// complete; once the budget is spent, the next leaf returns not-ready
// instead, having woken its task as a yield, and the task runs again after
// the other runnable tasks and after the executor has polled its I/O and
// timers, with a new budget. A leaf that is not ready spends nothing, so a
// Select over many pending futures never spends the budget and never
// spins. Outside an executor (Block, NewContext) there is no budget.
//
// A leaf written by hand joins in with two calls: [Context.Proceed] at the
// top of its Poll (return not-ready at once when it reports false: the wake
// is arranged) and [Context.Spend] when the poll completes. [ConsumeBudget]
// is the same as a future, for a loop that does work of its own between
// awaits. [Context.Yield] wakes the task as a yield, which is what a yield
// future does. [Unconstrained] runs a future without the budget, for a
// short burst that must not be split across polls.
//
// An executor keeps a [Budget] per worker, resets it before each task
// poll, hands it to the poll with [Context.SetBudget], and asks
// [Budget.Yielded] after the poll whether to queue the task behind the
// others; it must then reschedule the task itself, because in a budgeted
// poll a yield with the task's own Waker records the yield and wakes
// nothing (a child Waker from [Context.WithWaker] is still woken). The
// copies that [Context.WithWaker] makes share the budget.
//
// # Cancellation
//
// A Rust future is deregistered when it is dropped; Go has no destructors,
// so cancellation is explicit. A future that is abandoned while it still has a Waker registered in a waiter list, a timer
// entry in the wheel or an operation in flight would keep all of them alive
// and would, later, be woken, handed a permit or a value that nobody takes.
// So every future that registers something outside itself implements
// [Canceler], and whoever abandons a future calls [Cancel] on it: the
// combinator that no longer needs it, the scheduler when it drops a task,
// Block when its context is done, any owner that stops polling. Cancel
// removes everything the future registered, passes on what it was handed
// but had not delivered, is idempotent, and may be called whether or not
// the future was ever polled; after it, nothing outside the future refers to
// it, and it is never polled again.
//
// Every future of this package implements Canceler. A combinator's Cancel
// cancels, in argument order, every child it has not finished with (children
// that completed are never cancelled: they have nothing left registered, and
// a Cancel could wrongly give back what they delivered) and drops its
// references. The combinators also cancel on their own:
//
//   - Race, Select and Select2 cancel every loser in the Poll that finds the
//     winner, polled or not;
//   - TryJoin2 and TryJoinAll cancel every child still pending in the Poll
//     that sees a child fail;
//   - Then cancels only the future it is running (the first, then the
//     second);
//   - Block cancels its future when its context is done.
//
// When a combinator completes or is cancelled it sets its references to its
// children and to their values to nil, so that a finished combinator held by
// a long-lived task does not keep them from the garbage collector.
//
// # Combinators
//
// Leaves: [Ready] (a value), [Pending] (never completes), [PollFn] (a
// function as Poll). Sequence: [Map] (transform the value), [Then] (chain a
// second future made from the first's value, polled in the same Poll). Joins,
// which poll every unfinished child on each Poll, in argument order, with
// the same Context: [Join2] into a [Pair], [JoinAll] into a slice in argument
// order. Try-joins, over [Result] values: [TryJoin2], [TryJoinAll], which
// stop at the first error, return it as is, and cancel the rest. Races:
// [Race] (the winner's value), [Select] (with its index, as [Selected]),
// [Select2] (two types, as [Selected2]). Bridge: [Block], and [Blocker] (the
// pooled Signal and Context it polls and waits with) for a blocking call of
// one's own.
//
// Races really race: a race that awaited its children one after another
// would let a slow first child delay a fast second one and leave the losers
// running. Races poll every unfinished child on each Poll, in index order,
// and stop at the first that is ready; every loser is cancelled in that
// same Poll, so nothing it registered outlives the race (the tests prove
// that each loser is cancelled exactly once and leaves nothing
// registered). The polling is biased, as Tokio's select! with biased;.
// When several children are ready at the same Poll the lowest index wins,
// deterministically, which is what a deterministic runtime and its tests
// need, and which lets a caller give priority (a shutdown signal first);
// the price is that a child that is always ready starves the children after
// it. Put such a child last, or race something that is not always ready. A
// race of no futures could never complete, so Race and Select panic with
// [ErrEmpty] at construction, as they do with [ErrNilFuture] for a nil
// child.
//
// In an async function, a select statement whose cases receive from [On]
// and [OnKeep] waits for one of several futures of different types, as
// Go's select waits for channels; unlike the races, a future given to
// OnKeep is not cancelled when it loses, so that a long-lived future (an
// Interval, a signal) serves every iteration of a loop. The generator
// compiles it with [Selecting], which generated code alone uses. A range
// over [Each] receives the values of a stream (a channel's Recv) until its
// first error, as a range over a Go channel does until its close.
//
// No combinator allocates in Poll: each makes what it needs (itself, a copy
// of its children, the result slice of a join) at construction.
//
// # Writing a future by hand
//
// Writing Poll by hand is the exception: the primitives of syncprim and
// channels and the combinators here cover most needs. When it is needed,
// the future is a struct holding its state, and Poll is a switch on that
// state that either completes, moves on, or registers and returns false.
// A future that registers outside itself also implements Cancel. For
// example, a future that waits for an event set by another goroutine, built
// on the waker package's waiter list (see "The waiting protocol" there):
//
//	type event struct {
//		mu      sync.Mutex
//		set     bool
//		waiters waker.List[struct{}] // guarded by mu
//	}
//
//	// waitFuture is event.Wait's future; its owner polls and cancels it.
//	type waitFuture struct {
//		ev *event                 // set at construction, read-only
//		w  waker.Waiter[struct{}] // in ev.waiters while waiting; ev.mu
//	}
//
//	func (f *waitFuture) Poll(cx *future.Context) (struct{}, bool) {
//		f.ev.mu.Lock()
//		defer f.ev.mu.Unlock()
//		switch {
//		case f.ev.set:
//			f.ev.waiters.Remove(&f.w) // woken or not, leave the list
//			return struct{}{}, true
//		case f.w.Linked(): // polled again: keep or refresh the Waker
//			if !f.w.Waker().WillWake(cx.Waker()) {
//				f.w.SetWaker(cx.Waker())
//			}
//		default: // first poll: register, so that Set wakes us
//			f.ev.waiters.PushBack(&f.w, cx.Waker())
//		}
//		return struct{}{}, false
//	}
//
//	// Cancel leaves the list, so that nothing refers to f afterwards.
//	func (f *waitFuture) Cancel() {
//		f.ev.mu.Lock()
//		f.ev.waiters.Remove(&f.w)
//		f.ev.mu.Unlock()
//	}
//
// (event.Set sets set and wakes every waiter under mu.) The runnable
// examples of this package include a self-waking countdown and a one-shot
// cell woken from a goroutine.
//
// # Alternatives rejected
//
//   - Spending the budget on every leaf poll, ready or not, and refunding
//     nothing: a Select over many pending futures would spend it in one poll
//     and then yield in every poll, a spin. Only completions spend.
//   - Leaving the budget to the executor (a cap on polls per tick): it
//     cannot see inside a poll, which is where a task that never returns
//     not-ready spends its time.
//   - Fair (random-start) races, as Go's select statement and Tokio's
//     default select!: they avoid starvation, but a deterministic runtime
//     would have to seed them, and most races here are of a few futures
//     that are not always ready. A caller wanting fairness can rotate the
//     children.
//   - A Waker per child (Context.WithWaker), so that a join polls only the
//     children that were woken, as Tokio's FuturesUnordered: it costs an
//     allocation per child and a shared ready set, which the small joins
//     that dominate do not repay. Context.WithWaker leaves the door open.
//   - Cancelling through a context.Context or a Done channel per future: an
//     allocation and a goroutine-visible channel per future, and a
//     cancellation that arrives asynchronously instead of when the owner
//     decides; Cancel is a synchronous call by the owner.
//   - Returning an error for Race of no futures: it could never complete, so
//     it is a misuse at construction, not an outcome.
package future
