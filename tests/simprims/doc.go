// Package simprims runs the primitives of blitz for Go (syncprim's Mutex,
// RwLock, Semaphore, Barrier, Notify and OnceCell; the channels Bounded,
// Unbounded, Oneshot, Broadcast and Watch; JoinSet and JoinHandle) under
// deterministic simulation (package sim), with the PCT strategy and the
// Random one, over many seeds.
//
// Each workload is an async function (compiled by blitzgen into the
// *_async.go files) that spawns tasks using one primitive, pausing at
// interesting points: each pause, as the run's seed decides, runs on,
// yields (the strategy then picks which ready task polls next) or sleeps
// a few ms of virtual time (which lets timeouts run out elsewhere). Some
// waits are bounded by a timeout, blitz.Timeout (which polls the wait
// first) or giveUp (which looks at its timer first, as a select whose
// first arm is a timer), so that waiters are cancelled in every state:
// queued, woken, handed the resource. Where a cancelled waiter then
// leaves for good, a wake it failed to pass on leaves the others waiting
// beside what they wait for, and the run deadlocks. Shared state needs no
// lock: a simulated runtime polls one task at a time. A workload returns
// an error wrapping ErrViolation when a property fails; a task whose wake
// was lost never finishes, and the run ends with sim.ErrDeadlock; a task
// starved for ever ends it with sim.ErrStepLimit. A failing seed prints
// the command that replays it.
//
// The workloads and what they check:
//
//   - Mutex (mutexWorkload): at most one holder at a time; no lost update
//     of a counter read and written across a pause under the lock; lockers
//     that time out (some then leave for good) leave the lock usable and
//     pass on the wake or the lock they were handed; a second Unlock of a
//     guard panics with ErrGuardReleased and releases nothing (a later
//     holder keeps the lock); every task finishes (no lost wakeup) and the
//     lock is free at the end.
//   - RwLock (rwLockWorkload): readers hold the lock together (they all
//     meet at a Barrier while holding it); a writer holds it alone; a
//     reader arriving while a writer waits does not get in before it (the
//     FIFO phase policy that keeps readers from starving writers).
//   - Semaphore (semaphoreWorkload): acquires of 1 to all permits, some
//     timing out; the permits held never exceed the semaphore's, and all
//     are back at the end (no partial grant lost with a cancelled waiter).
//   - Barrier (barrierWorkload): every generation releases exactly its
//     parties, one of them the leader, in order; a party whose wait times
//     out withdraws its arrival (the documented behaviour of a cancel
//     before the round completes), and the round waits for its next one.
//   - Notify (notifyWorkload): NotifyWaiters stores no permit, NotifyOne
//     stores one and they do not accumulate; a producer's NotifyOne per
//     item reaches a consumer (the producer often waits, on a second
//     Notify, until the item is taken), also when a notified consumer is
//     cancelled and leaves (the notification passes on); the NotifyWaiters
//     of the consumer that takes the last item reaches every waiter.
//   - OnceCell (onceCellWorkload): concurrent GetOrInit callers, some
//     cancelled by a timeout while they initialize, initializers that fail:
//     initializers never run two at a time, exactly one succeeds, and every
//     caller gets its value.
//   - Bounded (boundedWorkload): producers and consumers, sends and
//     receives sometimes cancelled (some consumers then leave), a close by
//     the consumer that takes the last message or at a random point: each
//     consumer sees each producer's messages in order; every message
//     accepted is received once, every message given back (a SendError
//     with ErrClosed) never; no consumer waits beside a message.
//   - Unbounded (unboundedWorkload): the same with one consumer.
//   - Oneshot (oneshotWorkload): a sender that sends or closes, a receiver
//     that receives (with timeouts) or closes first: the value arrives
//     exactly when Send succeeded, ErrClosed otherwise, and no receive
//     waits for ever.
//   - Broadcast (broadcastWorkload): receivers see the values in order;
//     a lagging receiver is told (LaggedError) how many it missed, exactly,
//     and resumes after them; each sees ErrClosed only after the last.
//   - Watch (watchWorkload): receivers see the value only grow and see the
//     last value sent before ErrClosed.
//   - JoinSet (joinSetWorkload): several tasks awaiting Next collect every
//     outcome exactly once, then ErrJoinSetEmpty; after Close, each
//     outcome is the value of a task that finished or ErrCancelled, and a
//     task spawned after Close never runs.
//   - JoinHandle (joinHandleWorkload): several tasks awaiting copies of one
//     handle all get its value, all get ErrCancelled when the task is
//     cancelled, and all get the value or ErrDetached when another copy is
//     detached (none waits for ever).
//
// go test runs each workload over 150 seeds per strategy with -short, 1000
// without; -sim.seeds sets the count (go tool mage sim runs SIMSEEDS,
// 2000 by default).
package simprims
