// Package header is the task header of the scheduler: the packed 64-bit
// state word of a task, the transitions that move it, its reference count,
// its cancellation shields, and the type erasure that lets every queue,
// waker and wait list hold a *[Header] whatever the task's future. It is
// modelled on Tokio's task state (runtime/task/state.rs): the word is a
// [State] value with pure accessors, the cell is the Header, and every
// transition returns a small typed result the caller must switch on.
// Comments elsewhere cite the sections below by name.
//
// # The state word
//
// One atomic.Uint64 in the Header holds everything the scheduler and the
// wakers race on, laid out as follows (bit 0 least significant):
//
//	 63            40 39      32 31  29 28 27  26  25  24 23       16 15      0
//	+----------------+----------+------+---+---+---+---+---+-----------+---------+
//	| ref count (24) |shield (8)| rsvd |jw |det|join|can|ntf| lifecycle | reserved|
//	+----------------+----------+------+---+---+---+---+---+-----------+---------+
//
// Who writes which field:
//
//   - lifecycle: the worker that owns the task's turn (TransitionToRunning,
//     TransitionToIdle, TransitionToComplete); a waker (TransitionToScheduled)
//     and a canceller (Cancel) only for Idle -> Scheduled, which hands the
//     turn to whoever pushes the task.
//   - notified: set by any waker (TransitionToScheduled); cleared by the
//     worker (TransitionToRunning, TransitionToIdle, TransitionToComplete).
//   - cancelled: set once by any goroutine (Cancel), never cleared.
//   - join interest and detached: set by Init; Detach (the JoinHandle's
//     owner) clears join interest and sets detached.
//   - join waiter: set by an awaiter of the JoinHandle that registered its
//     Waker ([Header.SetJoinWaiter]), never cleared; the completion reads
//     it to know whether to wake anyone.
//   - shield depth: the task's own poll (AddShield, RemoveShield), so only
//     the worker running it.
//   - reference count: anyone holding a reference (Ref, Unref).
//
// Every write is a CAS loop over the whole word, so a transition reads and
// writes all fields as one value: a transition that reads notified and
// lifecycle cannot be split by a wake. Reading a State is free; it is a
// snapshot that may be stale as soon as [Header.Load] returns.
//
// # Lifecycle
//
// A task moves between four lifecycles:
//
//	                       Init
//	                         |
//	                         v
//	             +-------> IDLE
//	             |           |  Wake: TransitionToScheduled == ScheduleEnqueue,
//	             |           |  or Cancel == CancelEnqueue
//	             |           v
//	TransitionTo |       SCHEDULED <----------+
//	Idle ==      |           |                |
//	IdleWaiting  |           |  TransitionTo  |  TransitionToIdle == IdleReschedule
//	             |           |  Running       |  (a wake came during the poll)
//	             |           v                |
//	             +------- RUNNING ------------+
//	                         |
//	                         |  TransitionToComplete: after a poll that completed,
//	                         |  or after Abort (RunAbort, IdleAbort)
//	                         v
//	                     COMPLETE
//
// Idle: in no queue, waiting for a wake. Scheduled: in exactly one run queue
// (or about to be pushed by whoever moved it there). Running: exactly one
// worker is polling it. Complete: its future finished or it was aborted;
// wakes are ignored from now on.
//
// The worker loop around one task, after popping h:
//
//  1. [Header.TransitionToRunning]. On [RunAbort] go to step 4.
//  2. Poll the task. If it completed, [Header.TransitionToComplete] and
//     stop.
//  3. [Header.TransitionToIdle]: on [IdleWaiting] stop (some waker will
//     reschedule it); on [IdleReschedule] push h to a run queue and stop; on
//     [IdleAbort] go to step 4.
//  4. The cancel path: call the task's Abort, then
//     [Header.TransitionToComplete]; the task is never polled again.
//
// Transitions from a lifecycle that forbids them (running a task that is not
// Scheduled, idling or completing one that is not Running) are broken
// invariants of the scheduler and panic with an error wrapping
// [ErrBadTransition].
//
// # The notified bit
//
// A wake can land at any moment, including while the task is being polled,
// after its future has looked at its event source and found nothing. The
// notified bit is the one signal for "poll it again", and the protocol is:
//
//  1. A wake of an Idle task moves it to Scheduled and its caller pushes it
//     ([ScheduleEnqueue]): the only way a wake enqueues.
//  2. A wake of a Scheduled or Running task sets notified and enqueues
//     nothing ([ScheduleNotified]); the task is already in a queue or on a
//     worker, and a second push would put it in two queues at once.
//  3. TransitionToRunning clears notified: the poll about to start sees
//     every event published before it, so earlier wakes are consumed.
//  4. When the poll returns not-ready, TransitionToIdle reads and clears
//     notified and leaves Running in one CAS: if notified was clear the task
//     goes Idle; if it was set, a wake came during the poll, perhaps after
//     the future last looked, and the task goes straight back to Scheduled
//     ([IdleReschedule]) for the worker to push.
//
// No wakeup is lost: a waker publishes its event and then wakes. If its
// TransitionToScheduled comes before the worker's TransitionToIdle CAS, it
// saw Running (or Scheduled) and set notified, and step 4 reschedules; if it
// comes after, it sees Idle and enqueues (step 1). The CAS orders the two, so
// one of them always acts, and only one pushes.
//
// Why step 4 is one CAS. A TransitionToIdle that always stored Idle, leaving
// a caller that saw notified to call TransitionToScheduled to get the task
// back, would take two CASes, and between them the task would be Idle:
// another waker could move it to Scheduled and push it, and the worker's own
// TransitionToScheduled would then find it Scheduled and must not push
// again, so the caller would have to switch on a second result to avoid a
// double enqueue. Here Running goes to Scheduled in the single CAS that
// clears the bit: one atomic operation instead of two, no window in which
// another waker can enqueue the task in between, and the worker that ran the
// poll is always the one that pushes it.
//
// # Cancellation and shields
//
// [Header.Cancel] sets the cancelled bit, once; any goroutine may call it.
// Its result says who acts:
//
//   - [CancelEnqueue]: the task was Idle and unshielded; it is now Scheduled
//     and the caller pushes it, so that a worker's TransitionToRunning
//     returns [RunAbort].
//   - [CancelDeferred]: the task is queued (TransitionToRunning will abort
//     it), running (TransitionToIdle will return [IdleAbort]), or shielded.
//   - [CancelNoop]: it was already cancelled, or it is complete.
//
// Cancellation is effective when it is requested and no shield is in force
// ([State.CancellationEffective]). Shields ([Header.AddShield],
// [Header.RemoveShield]) are taken and released by the task's own poll around
// a critical section that must not be cut short; they nest up to
// [MaxShieldDepth] ([ErrShieldOverflow] past it, [ErrShieldUnderflow] for a
// release without a shield). While a shield is in force a cancelled task is
// polled normally. RemoveShield of the last shield of a cancelled task
// reports effective=true: the poll goes on to its end and the worker's
// TransitionToIdle returns IdleAbort, so the task is aborted at the end of
// that poll, never in the middle of it. A task that goes Idle while still
// holding a shield stays Idle when cancelled (CancelDeferred): nothing can
// release the shield but a poll, so it waits for its next wake like any
// other idle task, and the poll that releases the shield makes the
// cancellation effective.
//
// # Reference count
//
// The count does not keep the task's memory alive: the garbage collector
// owns memory, and wakers carry no reference (see the waker package, "No
// clone, no drop"). It counts the owners that may still touch the task's
// result. Init sets it to 1 for the scheduler's reference, plus 1 for the
// JoinHandle's when join is true. The blitz scheduler uses it as follows:
//
//   - The scheduler stores the result for the handle, then drops its
//     reference when the task completes, in the same compare-and-swap
//     ([Header.TransitionToCompleteAndUnref]) that publishes the result
//     (a handle reads it once it sees Complete). If the handle was
//     detached, whichever of the two holds the last reference releases the
//     result.
//   - The JoinHandle drops its reference only when it is detached. Taking the
//     result does not drop it: a handle may be polled again and returns the
//     same outcome. A handle that is merely forgotten drops nothing (Go has no
//     destructor); the task, with its result, is garbage once no handle,
//     Waker or queue reaches it.
//   - Whoever makes the [Header.Unref] that reports last=true knows that
//     nobody can collect the result any more, so a large result or a panic's
//     stack is not kept even if a stale *Header (a Waker left in some wait
//     list) keeps the task reachable. That happens only with a detached
//     handle: a task detached before it completed drops its result instead
//     of storing it, and the Detach of a task already complete clears the
//     stored one.
//
// A Waker that outlives its task wakes a complete task, which the state
// word ignores. A scheduler may recycle a task object whose references were
// all dropped ([Header.ReinitScheduled]); a Waker of the former task then
// wakes the new one, a spurious wake, which futures tolerate. The blitz
// scheduler recycles only tasks spawned without a JoinHandle, so that no
// handle of a former task can reach a new one.
// [Header.Ref] stops at [MaxRefCount] with [ErrRefOverflow]; an Unref at
// zero means some owner dropped twice and panics with [ErrBadTransition].
//
// # Type erasure
//
// Go has interfaces, so the future's type is erased without a hand-made
// vtable: the concrete task, the scheduler's generic task type holding the
// future and its result, implements [Task] (Poll, Abort, Scheduler), and
// the Header reaches it through [Header.Task]; where to push a woken task is
// the [Scheduler] the task returns, which the task keeps rather than the
// Header (a pointer in the scheduler's task, not an interface in every
// Header: 8 bytes less a task). The concrete task embeds its Header, so no separate
// allocation holds it, and queues and lists link *Header values
// ([Header.QueueNext] is the global queue's intrusive link). Nothing frees a
// task: see "Reference count". [Header.Waker] is the Waker handed to every
// poll; waking it is [Header.Wake].
//
// # Ordering
//
// Every operation on the state word is a sync/atomic operation, and Go's
// atomics are sequentially consistent: all of them form one total order
// consistent with each goroutine's program order, and a load that observes
// a store synchronizes with it. With weaker atomics a state word needs
// particular acquire/release pairs; each is implied here:
//
//   - A transition must see the writes made before the transition it follows
//     (CAS loops with acq_rel on success and acquire on failure elsewhere). A
//     worker that wins TransitionToRunning therefore sees what the previous
//     poll (on another worker) wrote into the task, because that poll ended
//     with a TransitionToIdle or was followed by a push through a queue that
//     synchronizes too.
//   - A waker publishes its event, then wakes: its TransitionToScheduled is
//     the release of the event. The worker's CAS that observes that wake
//     (TransitionToRunning after the push, or TransitionToIdle reading the
//     notified bit, followed by TransitionToRunning) is the acquire, so the
//     poll that follows sees the event. With sequentially consistent atomics
//     and an event source that is itself synchronized, "publish, then wake"
//     in program order is all a waker has to do.
//   - The owner whose Unref is last must see every other owner's writes
//     before it releases the result (a relaxed increment and an acq_rel
//     decrement elsewhere). Here Ref and Unref are CASes like the rest.
//
// Nothing in this package relies on an ordering weaker than these, so it
// needs no comments of the "load-acquire, pairs with" kind beyond the one on
// the state field.
package header
