// Package scheduler is the work-stealing executor of blitz for Go: seed
// 003's workers and run loop over seed 002's task header, with seed 001's
// review questions answered. It runs future.Future values as tasks on
// Config.Workers worker goroutines and knows nothing of time or I/O: the
// runtime module plugs its timers in as a Driver. Users normally reach it
// through the runtime module.
//
// Comments in the package cite the sections below by name.
//
// # Tasks
//
// A task is a task[T]: a header.Header (the packed state word, the global
// queue's link, the way back to the task), the user's future, and the
// outcome for its JoinHandle. Queues, wakers and lists hold *header.Header
// only. A task is one allocation (160 bytes for a task of struct{}); a
// future that is pointer-shaped (a pointer, or a struct of one pointer)
// adds nothing more.
//
// Every live task is also linked into an owned-task list (Tokio's
// OwnedTasks): shards of intrusive lists, chosen by the task's address,
// each under its own mutex. The shutdown needs it to reach tasks that are
// in no queue (idle on a waker that will never fire). Whoever unlinks a
// task finishes it: its completion, or the shutdown's sweep.
//
// # Workers
//
// Each worker is a goroutine with a LIFO slot, a 256-slot local queue
// (wsqueue), an adaptive global-queue interval, a random generator for
// steal victims, its counters and one future.Context reused for every poll.
// The run loop (worker.run) is: run the Driver; run a tick of at most
// BudgetPerTick (128) polls; if the tick found nothing, park. Each
// "polls" counter step is one poll; a tick ends early when nothing is
// left to run.
//
// # Work-finding order
//
// worker.next and worker.search look, in this order:
//
//  1. the global queue, when the adaptive interval is due (every interval
//     polls), so that tasks injected from outside are never starved by a
//     worker that always has local work;
//  2. the LIFO slot, at most MaxLIFOPollsPerTick (3) times in a row;
//  3. the local queue (FIFO);
//  4. the global queue, when all of the above are empty;
//  5. stealing, as a searcher (idle.State.TryBecomeSearcher: at most half the
//     workers search at once): half of a random victim's local queue, trying
//     every other worker once from a random start;
//  6. the global queue once more;
//  7. park.
//
// The interval of step 1 is seed 003's EWMA: after each tick the average
// poll duration is updated with weight 0.1, and the interval becomes
// 1 ms / average, clamped to [8, 255] polls.
//
// # The global batch
//
// Seed 003 keeps up to 32 tasks taken from the global queue in a private
// "global batch buffer" that the worker looks at first. We take the batch
// the same way (globalq.Queue.PopBatch with the fair share
// min(64, max(4, len/workers))) but push all of it except the task run now
// into the local queue. The difference is visibility: a private buffer hides
// up to 31 runnable tasks from idle workers while this worker runs a long
// poll, and the idle protocol's no-stranded-work argument (see the idle
// package, "No lost wakeup") holds only for work that any worker can take.
// In the local queue they are stealable, and the order is the same: the
// local queue is FIFO and was empty when the batch was taken (step 4), or
// the batch is taken at step 1 and runs before older local work, as the
// seed's buffer would.
//
// # Wakes and the LIFO slot
//
// A wake moves a task from Idle to Scheduled (the header's notified-bit
// protocol) and then queues it. Where it goes depends on who wakes:
//
//   - waker.Waker.Wake from anywhere (a goroutine, a timer callback) sends it
//     to the global queue and notifies an idle worker (Scheduler.Schedule);
//   - future.Context.Wake from a poll on a worker sends it to that worker's
//     LIFO slot (Scheduler.WakeLocal). This is what the seeds did with a
//     thread-local "current worker", which Go does not have: the Context
//     carries the worker instead. Primitives that wake a waiter while being
//     polled use cx.Wake;
//   - a task woken during its own poll (the notified bit set while Running:
//     a yield, or a wake racing the poll) goes to the back of the local
//     queue, not the LIFO slot, so that it yields to the waiting tasks.
//
// Spawn from inside a task (a Context of one of the scheduler's workers)
// puts the new task in the LIFO slot; Spawn from outside puts it on the
// global queue and notifies.
//
// The LIFO holds the newest tasks; when it is full its oldest task moves to
// the local queue, where thieves can take it, and an idle worker is
// notified. It is private to its worker: no other worker reads it, which is
// why it needs no atomics and why its worker must look at it before it
// parks (it does: a tick that ends with nothing to run has found it empty).
// After MaxLIFOPollsPerTick polls in a row from the LIFO, its tasks go to
// the local queue instead, so two tasks waking each other cannot starve the
// rest; the count restarts with every task taken from a queue (Tokio's
// definition of the cap).
//
// # LIFO slot or stack
//
// Seed 003 (and Tokio) has one LIFO slot; seed 001 proposes a stack of four.
// Both are here (Config.LIFO) and runtime's BenchmarkLIFO measures them on
// the two workloads the LIFO is for, ping-pong and chained spawn (AMD EPYC,
// 2 vCPUs, Go 1.26.8; two runs of six, one with each order; medians):
//
//	                    slot          stack
//	ping-pong, ns/ping  638 / 785     573 / 681    (run 1 / run 2)
//	chained, ns/spawn   233 / 274     215 / 247
//
// The stack was 8 to 13% faster on both (benchstat: chained p=0.041, ping-
// pong p=0.093 in the first run), so it is the default. Its cost is that up
// to four runnable tasks, not one, are invisible to idle workers while their
// worker is inside a long poll; a program with long polls and little other
// work can choose the slot.
//
// Seed 001's question 6 asks whether the stack has a correctness issue when
// stealers take from the bottom while the owner pushes and pops at the top.
// In the seed's code it does: the stack is shared (atomic slots and an
// atomic top), the owner's pop swaps a slot to nil and then stores the new
// top in two steps, and a stealer working from the bottom can read a top
// that is about to move, so that a task is taken twice or a slot is skipped.
// Here the question does not arise, by construction: the LIFO, slot or
// stack, belongs to its worker alone and thieves never touch it; tasks
// become stealable only by moving to the local queue (eviction, the poll
// cap), whose steal protocol the wsqueue package proves. The tests run
// spawn-next-on-the-same-worker, the poll cap, cancellation of LIFO tasks
// and shutdown with tasks in the LIFO in both modes.
//
// # The transitioning-to-park flag
//
// worker.parking is seed 003's transitioning_to_park. It is set from the
// moment the worker announces itself parked until it runs again, and
// scheduleLocal sends tasks to the global queue (with a notification) while
// it is set. The case it guards is real here: before it sleeps, the worker
// runs the Driver, whose expired timers wake tasks through the worker's
// Context; without the flag they would land in the LIFO slot of a worker
// that is about to sleep, and nobody else would see them.
//
// # Parking
//
// Parking follows the idle package's worker loop: PrepareToPark (a searcher
// that was the last one checks every shared source once more and notifies if
// it finds work), the Driver (whose answer, the time to the next timer, is
// the park timeout), then Park. A worker woken by a notification is a
// searcher and goes straight to stealing. There is no fixed 10 ms park
// timeout as in seed 003: the idle protocol loses no wakeup, so a worker
// with no timer to run sleeps until it is needed.
//
// # Parking in the driver
//
// When Config.Driver is also a Blocker (the runtime's I/O driver), the first
// worker to park takes it and sleeps in the driver's wait, which is the I/O
// backend's, with the next timer deadline as the timeout; the other workers
// park on their channels. (A Blocker may admit one holder per part of
// itself: the runtime's io_uring driver has a ring per worker, and each
// worker sleeps in its own.) The idle State's unparker is the Blocker's
// Unpark, so a claim of that worker (a spawn from outside, a wake from a
// goroutine, a sooner timer) ends the backend's wait. Tasks that the wait's
// completions wake go to the global queue, since the worker is transitioning
// to park; the park then ends with idle.Interrupted and the worker runs them.
// While every worker is busy, the driver's Maintain at the start of each
// tick collects completions without blocking, as seed 000's "any worker can
// poll I/O" describes. A worker that holds the driver only while it sleeps
// leaves it free for the next worker to park, so whenever every worker is
// parked one of them is in the driver's wait. That worker alone sleeps
// towards the next timer deadline; the others park without a timeout when
// the Blocker says the holder Covers their deadline, so a deadline wakes one
// worker rather than all of them. A worker that parks with a sooner
// deadline than the holder's, or a timer armed sooner, makes the holder's
// Block return so that it sleeps again with the new timeout. The cost: while
// the holder is awake and stuck in a long poll, due timers wait for it (or
// for a spawn that wakes another worker), as they do in Tokio.
//
// # JoinHandle
//
// JoinHandle[T] is a future of the task's outcome (future.Result[T]): its
// Poll registers the polling task's Waker, which the task's completion wakes
// (through the completing worker's Context, so an awaiting task runs next on
// the same worker). Wait(ctx) is the same from a goroutine. Cancel cancels
// the task, Detach gives up the outcome, IsFinished reports completion. The
// outcome is guarded by a small mutex in the task: one uncontended lock on
// completion and one per handle poll.
//
// # Cancellation and shields
//
// JoinHandle.Cancel sets the header's cancelled bit. An idle task is queued
// so that a worker aborts it at once; a queued one is aborted when a worker
// pops it; a running one when its poll returns; a shielded one (the header's
// shield depth above zero) when the poll that removes its last shield
// returns. Aborting calls the future's Cancel (future.Cancel), so that it
// deregisters what it registered, and resolves the handle with ErrCancelled.
//
// # Panics
//
// A poll that panics is recovered on the worker: the task's future is
// cancelled and its handle resolves with a *PanicError holding the value and
// the stack (runtime/debug.Stack). A detached task's panic goes to
// Config.OnPanic. runtime.Goexit in a poll is not recoverable and ends the
// worker's goroutine: do not call it from a task.
//
// # Shutdown
//
// Scheduler.Shutdown, seed 000's shutdown: the closing flag stops the
// workers after their current poll and refuses new spawns (the owned list
// closes, so a spawn racing the shutdown is either swept or refused); the
// idle State's Close wakes every parked worker. Once every worker has
// exited, one goroutine closes the global queue and finishes every task left
// with ErrShutdown: the LIFO slots and local queues first, then the global
// queue, then whatever the owned list still holds (idle tasks, and tasks
// woken after the global queue closed, which a closed queue refuses and the
// sweep then finds). header.Header.TransitionToShutdown claims each task,
// ignoring shields.
//
// # Backpressure
//
// Seed 001's spawnWithBackpressure returns a backpressure signal when the
// total queue depth, measured after the task was queued, exceeds a
// threshold. Its question 7 asks whether checking after scheduling is a race
// that allows unbounded growth. It is: the check is advisory, the task is
// queued whatever the answer, and N spawners that all read the depth before
// any of them pushes all see it under the threshold; so the depth is bounded
// only if every caller obeys the signal, and even then by threshold plus
// the number of concurrent spawners. Checking before scheduling has the same
// race. TrySpawn makes the bound exact instead: with Config.MaxLiveTasks
// set, it reserves a place (an atomic add on the live-task count, undone if
// it went over) before it creates the task, and refuses with
// ErrBackpressure without taking the future. The bound is on live tasks
// (spawned and not finished), which is what bounds memory; TestTrySpawnBackpressure
// shows that concurrent TrySpawns never exceed it. Spawn is not bounded.
//
// # Statistics
//
// Stats returns seed 000's counters (spawned, polled, stolen, parked) plus
// live tasks, panics, cancellations, the queue lengths and each worker's
// counters (polled, spawned, completed, steals and tasks stolen, LIFO hits,
// global batches, parks). A worker counts in plain fields and publishes
// them to atomics at the end of each tick, so counting costs the hot path
// nothing and a busy worker's figures lag by at most one tick.
package scheduler
