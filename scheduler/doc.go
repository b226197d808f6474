// Package scheduler is the work-stealing executor of blitz for Go: worker
// goroutines that run future.Future values as tasks, each worker with a LIFO
// slot and a local queue, a global injection queue, stealing between
// workers and a parking protocol that loses no wakeup. It knows nothing of
// time or I/O: the runtime module plugs its timers and I/O in as a Driver.
// Users normally reach it through the runtime module.
//
// Comments in the package cite the sections below by name.
//
// # Tasks
//
// A task is a header.Header (the packed state word, the global queue's
// link, the way back to the task), the user's future, and the outcome for
// its JoinHandle. Queues, wakers and lists hold *header.Header only. Spawn
// takes the future as an interface, so a task is one allocation beside the
// caller's future; SpawnValue holds the future by value inside the task,
// one allocation for both (160 bytes for a 16-byte future: 144 bytes of
// task and 16 of future);
// SpawnValueDetached has no JoinHandle, keeps no outcome (the same future
// takes 128 bytes), and reuses the memory of finished
// tasks of the same type: a few that finished on the spawning worker, kept
// in its own slots, and beyond them a pool per type (a sync.Pool, which the
// GC empties) that any goroutine may take from. So a chain of detached
// spawns allocates nothing in the steady state, and neither do bursts of
// detached tasks spawned from outside the workers (a server's goroutine
// spawning per request), which finish on the workers. SpawnNotifying keeps
// no outcome either: the task hands it to a Notifier as it ends, which is
// how a set of tasks (a server's connection handlers) follows them with an
// 8-byte TaskRef each, where a JoinHandle and a Waker registered on it
// would take a record per task (144 bytes of task with a pointer
// notifier, against 176 for Spawn's task of an error).
//
// A live task that may wait in no queue is linked into an owned-task list
// (Tokio's OwnedTasks): shards of intrusive lists, each under its own
// mutex: the spawning worker's shard, or one chosen by address for a spawn
// from outside. The shutdown needs it to reach tasks that are in no queue
// (idle on a waker that will never fire). A task is linked at its first
// poll that does not complete; until then it sits in a queue, which the
// shutdown drains. So a task that completes in its first poll never takes
// the lock. Whoever unlinks a task finishes it: its completion, or the
// shutdown's sweep.
//
// # Workers
//
// Each worker is a goroutine with a LIFO slot, a 256-slot local queue
// (wsqueue), a list of deferred (yielded) tasks, an adaptive global-queue
// interval, a random generator for steal victims, its counters, one
// future.Context reused for every poll and the future.Budget of each poll.
// The run loop (worker.run) is: run the Driver; move the deferred tasks to
// the local queue; run a tick of at most BudgetPerTick (128) polls; if the
// tick found nothing, park. Each "polls" counter step is one poll; a tick
// ends early when nothing is left to run. When only deferred tasks are
// left, the tick runs the Driver and requeues them (see "Yielded tasks").
//
// # The cooperative budget
//
// Before each task poll the worker resets its future.Budget (TaskBudget,
// 128 operations) and gives it to the poll through the Context; the leaf
// futures of channels, syncprim, the runtime and JoinHandle spend it as
// they complete, and a leaf that finds it spent wakes its task as a yield
// and returns not-ready (see the future package, "The cooperative
// budget"). BudgetPerTick bounds the polls between two runs of the Driver;
// the task budget bounds the operations inside one poll.
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
//  5. if the tick deferred a task (a yield), the Driver runs, then the
//     deferred tasks go to the local queue and the search starts again at
//     step 1 (see "Yielded tasks");
//  6. stealing, as a searcher (idle.State.TryBecomeSearcher: at most half the
//     workers search at once): half of a random victim's local queue, trying
//     every other worker once from a random start;
//  7. the global queue once more;
//  8. park.
//
// The interval of step 1 adapts to the tasks: after each tick the average
// poll duration is updated (an exponentially weighted average, weight 0.1),
// and the interval becomes 1 ms divided by that average, clamped to [8, 255]
// polls, so that a task waiting in the global queue waits about 1 ms
// whatever the length of the polls.
//
// # The global batch
//
// A worker takes tasks from the global queue in batches
// (globalq.Queue.PopBatch with the fair share min(64, max(4, len/workers)),
// at most GlobalBatchSize), runs the first and pushes the rest into its
// local queue. It does not keep them in a private buffer: a private buffer
// would hide up to 31 runnable tasks from idle workers while this worker
// runs a long poll, and the idle protocol's no-stranded-work argument (see
// the idle package, "No lost wakeup") holds only for work that any worker
// can take. In the local queue they are stealable, and the order is the
// same: the local queue is FIFO and was empty when the batch was taken
// (step 4), or the batch is taken at step 1 and runs before older local
// work, as a private buffer looked at first would.
//
// # Wakes and the LIFO slot
//
// A wake moves a task from Idle to Scheduled (the header's notified-bit
// protocol) and then queues it. Where it goes depends on who wakes:
//
//   - waker.Waker.Wake from anywhere (a goroutine, a timer callback) sends it
//     to the global queue and notifies an idle worker (Scheduler.Schedule);
//   - future.Context.Wake from a poll on a worker sends it to that worker's
//     LIFO slot (Scheduler.WakeLocal). Go has no thread-locals from which a
//     waker could learn the current worker; the Context carries the worker
//     instead. Primitives that wake a waiter while being polled use cx.Wake;
//   - a task that yielded during its own poll (future.Context.Yield: a
//     Yield future, or a spent budget) goes to the worker's deferred list
//     (see "Yielded tasks");
//   - a task woken during its own poll otherwise (the notified bit set
//     while Running: a wake racing the poll) goes to the back of the local
//     queue, not the LIFO slot, so that it goes after the waiting tasks.
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
// # Yielded tasks
//
// A task that yields wants the worker to do everything else first,
// including the I/O completions and timers its yield may be waiting for
// (a task that yields in a loop until a connection comes in). Queued at
// the back of the local queue it would run again at once whenever the
// queue is short, and the Driver would run only once per tick of
// BudgetPerTick polls: a yielding task alone on its worker would yield 127
// times for every look at the I/O. So a task whose poll yielded (the
// Budget says Yielded after the poll, and the task was woken during it)
// goes to the worker's deferred list instead. When the worker finds
// nothing else to run in its own sources (the LIFO, the local queue, the
// global queue), before it steals, it runs the Driver (without blocking),
// moves the deferred tasks, oldest first, to the back of the local queue,
// and goes on with its tick (it does not end it: that would cost two clock
// reads and a publication of the counters per yield of a task alone on its
// worker). A yielding task therefore sees a ready completion at its next
// poll.
//
// The deferred list is private, like the LIFO, so it must not hold
// runnable tasks for long where no other worker can take them: it is
// emptied into the local queue, where thieves see it, whenever the worker
// runs out of other work and after every tick, so it holds at most the
// tasks of one tick, and a worker that always has local work still runs
// its yielded tasks after each tick. The move notifies an idle worker when
// the worker then holds more than the one task it runs next (a task
// yielding alone does not wake the idle workers at every yield). At
// shutdown the deferred tasks are dropped with the local queue's.
//
// # LIFO slot or stack
//
// Tokio has one LIFO slot; a stack of four slots keeps more of a chain of
// wakes on the same worker. Both are here (Config.LIFO) and runtime's
// BenchmarkLIFO measures them on the two workloads the LIFO is for,
// ping-pong and chained spawn (AMD EPYC, 2 vCPUs, Go 1.26.8; two runs of
// six, one with each order; medians):
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
// LIFOOff has no LIFO, as Tokio's disable_lifo_slot: what a poll spawns or
// wakes goes to the back of the local queue, with a notification, so an
// idle worker steals it while the poll goes on, where with a LIFO it waits
// for the poll to end. Measured the same way (eight runs, 400 ms each,
// 2026-11-30; medians): ping-pong 405 ns against 395-398, within the noise;
// chained spawn 227 ns against 190-195, 16 to 20% slower, the price of
// every spawn going through the local queue and of waking an idle worker to
// look at it.
//
// A stack that thieves take from at the bottom while the owner pushes and
// pops at the top would need a protocol of its own (a shared top that the
// owner moves in two steps can be read by a thief in between, so that a
// task is taken twice or skipped). Here the LIFO, slot or stack, belongs to
// its worker alone and thieves never touch it; tasks become stealable only
// by moving to the local queue (eviction, the poll cap), whose steal
// protocol the wsqueue package proves. The tests run
// spawn-next-on-the-same-worker, the poll cap, cancellation of LIFO tasks
// and shutdown with tasks in the LIFO in both modes, and the last three
// with LIFOOff too.
//
// # The transitioning-to-park flag
//
// worker.parking is set from the moment the worker announces itself parked
// until it runs again, and scheduleLocal sends tasks to the global queue
// (with a notification) while it is set. The case it guards is real here:
// before it sleeps, the worker runs the Driver, whose expired timers wake
// tasks through the worker's Context; without the flag they would land in
// the LIFO slot of a worker that is about to sleep, and nobody else would
// see them.
//
// # Parking
//
// Parking follows the idle package's worker loop: PrepareToPark (a searcher
// that was the last one checks every shared source once more and notifies if
// it finds work), the Driver (whose answer, the time to the next timer, is
// the park timeout), then Park. A worker woken by a notification is a
// searcher and goes straight to stealing. There is no fixed park timeout
// that would wake idle workers to look around: the idle protocol loses no
// wakeup, so a worker with no timer to run sleeps until it is needed.
//
// # Spinning before parking
//
// A worker whose tick found nothing, after a tick that ran tasks, spins
// for up to Config.IdleSpin (DefaultIdleSpin, 50µs) before it parks: it
// runs the Driver, whose I/O completions and timers wake tasks into its
// own queues (it is not transitioning to park, so they go to its LIFO),
// and looks at every queue; between two looks it gives its thread to
// other goroutines (runtime.Gosched), so that a goroutine the tasks
// handed work to (a net/http Handler, the blocking pool) runs on it
// rather than waking another thread. A park and the wake-up that ends it
// cost a context switch each, and a wake of a parked goroutine a futex
// call; under load, work comes back within microseconds, and the spin
// takes it with neither. Go's scheduler spins for the same reason before
// an M sleeps; Tokio's workers park at once.
//
// A worker spins once per spell of work: a spin that found nothing is
// followed by a park, and the next spin comes only after a tick that ran
// a task. A spin that found work is followed by the tick that runs it,
// with no other run of the Driver first (the spin's ran microseconds
// before). An idle scheduler does not spin, and a lightly loaded one pays
// at most IdleSpin of CPU per spell. The spin counts as parked time
// (Stats' ParkedTime), so that a worker that only spins is not reported
// busy; WorkerStats.Spins and SpinHits count the spins and those that
// found work. BENCHMARKS.md ("Spinning before parking") has what it
// saves on servers measured from another process.
//
// The spin pays most where a park is dear: a server with few connections,
// whose worker would otherwise put the whole process to sleep between two
// requests (an HTTP server at one connection serves half again as many
// requests per core with it). A server saturated by many connections
// pays for it instead: its workers find work soon after parking anyway,
// and an echo server spent 6 to 11 % more CPU per round trip spinning;
// so does one under a steady partial load, whose spins mostly wait (an
// echo server held at 40,000 round trips a second on one core: 14 % more
// CPU per round trip). Such a server may turn it off (a negative
// IdleSpin).
//
// # Parking in the driver
//
// When Config.Driver is also a Blocker (the runtime's I/O driver), a worker
// about to park asks it (TryAcquire) whether to sleep in the driver's wait
// rather than on its channel. The driver says yes only when it has
// something to wait for (I/O in flight, or a timer: the park has a
// timeout) and no other worker is waiting in it; a Blocker may admit one
// holder per part of itself (the runtime has an I/O ring per worker, and
// each worker waits in its own). The runtime's driver takes a worker with a
// timer even when nothing is in flight, because its wait ends within
// microseconds of the timeout, where a Go timer behind a channel park can
// end up to a millisecond late. A worker with neither parks on its
// channel, the cheapest wake there is, and the driver brings it back with
// NotifyWorker when it gets something to wait for: the driver publishes the work and then looks at
// the worker's parked bit, the worker sets that bit and then asks the
// driver, so one of the two sees the other.
//
// The idle State's unparker is the Blocker's Unpark, so a claim of a worker
// waiting in the driver (a spawn from outside, a wake from a goroutine, a
// sooner timer) ends that wait. Tasks that the wait's completions wake go
// to the global queue, since the worker is transitioning to park; the park
// then ends with idle.Interrupted and the worker runs them. While every
// worker is busy, the driver's Maintain at the start of each tick collects
// completions without blocking.
//
// Timers: a holder sleeps towards the next timer deadline; the other
// workers park without a timeout when the Blocker says a holder Covers
// their deadline, so a deadline wakes one worker rather than all of them. A
// timer armed sooner than the holder's deadline makes the holder's Block
// return so that it sleeps again with the new timeout; a worker that parks
// with a sooner deadline than the holder's keeps its own timeout when the
// Blocker cannot cover it without a wake (the runtime's does not wake a
// holder for it). With no holder at all, each parked worker keeps its own
// timeout. The cost: while the holder is awake and stuck in a long
// poll, due timers wait for it (or for a spawn that wakes another worker),
// as they do in Tokio.
//
// # Go's sysmon
//
// Go's sysmon thread preempts a goroutine that has run for 10 ms, polls
// the network when no P has done so for 10 ms, and takes back the P of a
// thread stuck in a system call. When every P is idle it sleeps deeply,
// until a timer is due or a goroutine enters a system call; a call then
// also sets it looking every 20 µs for a millisecond or more, and it takes
// the P of a call it finds in progress twice. The runtime's I/O makes the
// calls that cannot sleep (reads and sends on non-blocking sockets, a
// look at the ring) as raw system calls, so that a worker back from a park
// does not set sysmon going and lose its P in the middle of a send. So
// sysmon may still sleep while a worker works; and a goroutine waiting on
// Go's network poller, or readied onto the worker's P, would then wait
// until the worker parks. A worker that has worked for 10 ms since its
// last park makes one ordinary system call, which wakes sysmon to its
// duties; the next wake comes after the next park. (Linux only: elsewhere
// the I/O makes ordinary calls, and the wake is not made.)
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
// the stack (runtime/debug.Stack). The worker goes on with the next task.
//
// A panic that no handle will collect is reported by Scheduler.ReportPanic,
// the one path for all of them: it is counted in Stats.Panicked and handed
// to Config.OnPanic, or, when OnPanic is nil, written with its stack to the
// standard logger, as Go prints an unrecovered panic (a panic counted and
// nowhere shown would hide a bug). These are the panic of a detached task;
// a panic in a future's Cancel when the scheduler aborts the task (the
// handle, if held, gets an error matching both the abort's error and
// ErrPanicked; after a panicking poll, whose panic the handle already
// holds, the Cancel's is reported on its own); and the panics a Driver
// contains in code it calls: the runtime's timer and I/O drivers recover a
// Waker that panics when they call it, report it here, and deliver the
// rest of their batch, so that one bad Waker neither loses other wakeups
// nor kills a worker.
//
// runtime.Goexit in a poll is not recoverable and ends the worker's
// goroutine: do not call it from a task.
//
// # Blocking calls inside a task
//
// A task runs on a worker goroutine; a call that blocks that goroutine
// (JoinHandle.Wait, Shutdown, the runtime's BlockOn) stops the worker, and
// on a one-worker scheduler waits forever for work that only the blocked
// worker could do. Such calls check whether they run on a worker
// (OnWorker) before they block, and return an error wrapping
// ErrBlockingInTask instead, as other runtimes refuse a nested block. The
// check walks the calling goroutine's stack for the function every worker
// starts in, about a microsecond for a typical stack (Go offers no
// goroutine-local storage or id to make it cheaper), and only a call that
// would otherwise block pays it: a Wait on a finished task returns its
// outcome. Goroutines that a task starts are not workers and may block.
//
// # Shutdown
//
// Scheduler.Shutdown: the closing flag stops the workers after their
// current poll and refuses new spawns (a spawn racing the shutdown is
// refused by the closing flag or by the closed global queue, or is drained
// from a queue and finished like the others); the idle State's Close
// wakes every parked worker. Once every worker has exited, one goroutine
// closes the global queue and finishes every task left with ErrShutdown:
// the LIFO slots, deferred lists and local queues first, then the global
// queue, then whatever the owned list still holds (idle tasks, and tasks
// woken after the global queue closed, which a closed queue refuses and
// the sweep then finds). header.Header.TransitionToShutdown claims each
// task, ignoring shields.
//
// # Backpressure
//
// A spawn that checks the queue depth and reports backpressure after it
// queued the task is only advisory: the task is queued whatever the
// answer, and N spawners that all read the depth before any of them pushes
// all see it under the threshold, so the depth is bounded only if every
// caller obeys the signal, and even then only by the threshold plus the
// number of concurrent spawners. Checking before scheduling has the same
// race. TrySpawn makes the bound exact instead: with Config.MaxLiveTasks
// set, it reserves a place on the live-task count (a CAS loop that never
// goes over) before it creates the task, and refuses with ErrBackpressure
// without taking the future. The bound is on live tasks (spawned and not
// finished), which is what bounds memory; TestTrySpawnBackpressure shows
// that concurrent TrySpawns never exceed it. Spawn is not bounded.
//
// # Statistics
//
// Stats returns the counters of spawns, polls, steals and parks, plus live
// tasks, panics, cancellations, the queue lengths and each worker's
// counters (polled, spawned, completed, steals and tasks stolen, LIFO hits,
// global batches, parks). A worker counts in plain fields and publishes
// them to atomics at the end of each tick, so counting costs the hot path
// nothing and a busy worker's figures lag by at most one tick.
//
// # Task identity
//
// Every task has an id, unique in its scheduler and never 0
// (JoinHandle.ID, TaskID from inside the task): a worker reserves ids in
// blocks of 256 from one atomic counter, so a spawn on a worker touches no
// shared memory for it, and a spawn from outside takes one id from that
// counter. A task also knows its parent (the task whose poll spawned it,
// from the spawn's Context), its birth (the worker's clock, the start of
// its tick, read once per tick; for a spawn from outside, the first poll),
// its number of polls and the start of its last poll, and what it waits
// on. These take 48 bytes of the task (six words: id, parent, birth, polls
// with last poll, wait, side record), stored by the spawn and by the
// polling worker; a poll pays one atomic store for them. A name (Named,
// SetName), a spawn site (Config.SpawnSites), the pprof labels, the
// tracer's task and the poll time go in a side record, allocated only for
// a task that has one of them. Config.NoTaskIdentity turns the ids and the
// bookkeeping off, for measuring what they cost.
//
// What a task waits on is recorded by the leaf future it waits in, on its
// pending path: future.Context.Waiting stores a registered
// future.WaitKind and an object number (a descriptor, a deadline, a task
// id) in the task's future.WaitSlot, one atomic store and no allocation.
// The slot also holds the number of the poll that recorded it, so that a
// wait recorded by an earlier poll is not shown once a later poll has
// recorded none. The worker's Context finds the slot, and the task's
// await site, through the worker itself (its future.WaitRecorder and
// future.SiteRecorder, set once), so that a poll stores no pointer for
// them: a pointer stored per poll costs a write barrier while the GC
// marks, which a spawn-heavy program makes it do much of the time. A JoinHandle polled by a task records "JoinHandle task N".
//
// # Task dump
//
// Tasks takes a snapshot of the live tasks: those linked into the
// owned-task list (every task polled at least once and not finished),
// copied under each shard's mutex, and those waiting in a queue for their
// first poll (TaskQueued), which no list holds (see "Listing queued
// tasks"). With Config.PollTiming it adds the tasks in their first poll,
// from the record of the poll in progress that each worker keeps (see
// "Long polls"). What it cannot list it counts: the live count minus the
// listed tasks. SnapshotTasks takes the same snapshot into a TaskSnapshot
// whose memory is reused from one snapshot to the next: records of about
// 100 bytes a task, copied under the shard mutexes, from which a TaskInfo
// is made only for the tasks that are shown. Dump writes the snapshot
// grouped as a goroutine dump groups identical stacks:
//
//	blitz tasks: 10003 live, 10003 listed
//
//	9998 tasks: idle, waiting on Mutex.Lock, "worker"
//		ids 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, ...
//		age 1.2s to 3.4s, idle 2ms to 3.1s, polls 1 to 3
//		spawned at /src/app/main.go:42 (main.serve)
//
//	1 task: idle, waiting on I/O recv fd 12, "conn"
//		id 9
//		age 5.1s, idle 3.2s, polls 12
//
//	1 task: running, "spinner"
//		id 3
//		age 8s, running for 2.1s, polls 4
//
//	3 tasks: queued, "handler"
//		ids 10001, 10002, 10003
//		age 12µs to 40µs, polls 0
//
// A group is the tasks with the same state, wait kind, name and spawn site;
// the largest groups come first; a group of one shows its wait's object.
// "idle" is the time since the last poll began, about how long the task
// has waited. DumpEach writes one stanza per task instead, with its
// parent and poll time:
//
//	task 9 "conn": idle 3.2s, waiting on I/O recv fd 12
//		age 5.1s, polls 12, poll time 1.2ms, parent task 2
//		spawned at /src/app/main.go:42 (main.serve)
//
// Ages and idle times are accurate to a worker's tick (at most
// BudgetPerTick polls), exact with Config.PollTiming.
//
// # Listing queued tasks
//
// A task is linked into the owned-task list at its first poll that does
// not complete (see "Tasks"); before that it is in a queue, and a queue is
// no list that another goroutine may read: the LIFO and the deferred list
// are plain fields of their worker; the local queue's slots are plain
// pointers that only its steal protocol may read, and a task read from a
// slot could meanwhile be stolen, polled, finished and reused by another
// spawn, whose plain stores of its id and birth would race with the reads;
// the global queue offers no look inside. So Tasks finds them in four
// steps, each reading tasks that no other goroutine can take meanwhile, or
// only values that a worker published:
//
//  1. The workers copy their own queues. Tasks publishes a request
//     (Scheduler.snapReq); each worker looks at it between two polls (one
//     atomic load per poll) and before it sleeps, copies the tasks of its
//     LIFO that were never polled, takes its local queue's tasks out (Pop),
//     copies those never polled and puts them back in their order
//     (PushBatch), and settles its answer. A parked worker's queues are
//     empty: Tasks settles its answer itself, and the worker, which stores
//     its parked time before it looks at the request, answers otherwise
//     (one of the two sees the other; a compare-and-swap settles the
//     answer once). Tasks waits for the answers at most 20 ms; a Tasks
//     called from a task does not wait for its own worker.
//  2. A worker that has not answered by then is in a long poll (or is the
//     caller's). Tasks takes its local queue's tasks as a thief would
//     (the steal protocol makes them the caller's alone), copies those
//     never polled and puts them all on the global queue, where any worker
//     may run them: what an idle worker would have done. The task in its
//     first poll there is read from what the worker publishes of it: at
//     the start of each first poll, its id and side record (two atomic
//     words, stored after the record and loaded around it; cleared at the
//     next poll that is not a first poll and at the end of the tick, so
//     that a worker held by a poll publishes that poll's task if it is a
//     first poll, and none otherwise). These are values, not the task,
//     whose plain fields (its parent and birth) would race with a reuse.
//     The tasks never polled in such a worker's LIFO are read the same way,
//     from lifoPub: for each LIFO entry that holds a task spawned into it,
//     its id, parent and side record (three atomic words, stored at the
//     spawn, the side record only for a task that has one; the id and side
//     record cleared when the task leaves the entry; nothing stored for a
//     woken task, which is listed from the owned list). Their age is that of
//     the worker's tick, at least theirs. That costs a chain of spawns about
//     2 ns a spawn (1.7 to 2.5% of a detached chained spawn, the switch
//     flipped in one binary; AMD EPYC, 2 vCPUs), and nothing to ping-pong or
//     yield. Reading the LIFO itself would need its pushes and pops to be
//     atomic exchanges, which a snapshot could then take from, as Go's
//     runnext: more costly, and the LIFO would no longer be the worker's
//     alone.
//  3. The global queue's tasks are taken out (globalq's Drain), copied, and
//     put back at once in their order (PushOverflow), behind any pushed
//     meanwhile; an idle worker is notified, since one may have parked
//     while the queue looked empty. The shutdown's drain takes the same
//     mutex as the snapshots (snapMu) before it takes the queue's last
//     tasks, so that none is out of the queue then (nor out of a worker's
//     local queue, step 2).
//  4. The owned list is copied; then each task found queued is checked
//     again (its header, atomically): one polled since is dropped, being
//     listed in the owned list if its first poll linked it before its
//     shard was read, and counted otherwise, never listed twice; a task
//     found in two queues (stolen, or overflowing, between two reads) is
//     listed once; a task read from a worker's first poll is listed
//     unless another source listed its id.
//
// The queues first and the owned list last: a task moves from a queue, or
// its first poll, to the list, never back, and a task in its first poll
// when Tasks asked is linked, or finished, by the time its worker answers.
// What a snapshot can still miss (besides, with Config.NoTaskIdentity, the
// LIFO of a worker held by a poll) is a task moving between two queues
// while they are read (stolen from a worker that answered into one that had
// not yet, or taken from the global queue into a worker's after it
// answered).
//
// The alternative, linking every task into the owned list at its spawn,
// lists them all with no waiting and no help from the workers, but costs
// the spawn a lock and the finish of a task that completes in its first
// poll (most of a spawn-heavy program's tasks) another, where they take
// none; with a task stolen or spawned from outside, the finishing worker
// takes a lock whose line the spawner holds. Measured (AMD EPYC, 2 vCPUs,
// Go 1.26.8, eight interleaved runs, medians): a chain of spawns on one
// worker 12 to 22% slower, spawns from outside 70% slower (p=0.04). The
// request costs the workers an atomic load per poll when no snapshot is
// taken. The first poll's publication costs an atomic store per spawned
// task on the worker's own cache line; it pays for itself: the stamp of
// a first poll (taskBase.run, an atomic store on the task's line) is no
// longer stored at the poll's start but at the link that publishes the
// task to Tasks, and not at all for a task that completes in its first
// poll, as most of a spawn-heavy program's do.
//
// # Long polls
//
// A task that does not yield holds its worker, and a slow poll is counted
// only when it ends: the dump must see it while it runs. Each worker keeps
// a record of its tick in progress (tickAt: when it began, -1 between
// ticks, one atomic store at each end of a tick) and, with
// Config.PollTiming, of its poll in progress (when it began, the task's id
// and side record: three atomic stores around each timed poll, whose two
// clock reads cost more). LongPolls reports each worker whose poll has run
// Config.SlowPoll or longer (PollTiming), or whose tick has run
// LongTickThreshold or longer (without it; the task is then not named).
// Dump writes them first, with the stack of the worker's goroutine down to
// the scheduler's frames, the line the task is on, read from a goroutine
// profile in which each worker goroutine carries the pprof labels
// blitz.worker and blitz.scheduler (a labelled poll carries the task's
// instead, found by its id):
//
//	LONG POLL on worker 0: task 17 "handler" has run 2.1s in one poll without yielding (threshold 1ms)
//		main.handle
//			/src/app/main.go:42
//
// # Deadlocks and warnings
//
// A task idle on a lock (syncprim's Mutex and RwLock) records which lock,
// and the lock's wait kind tells which task holds it
// (future.WaitKind.SetHolder); a task idle on a JoinHandle waits for that
// task. Tasks gives each idle task that edge (TaskInfo.WaitsFor); Deadlocks
// finds the cycles of the graph, which Dump writes first:
//
//	DEADLOCK: tasks 1 and 2 wait for each other
//		task 1 "ab" waits on Mutex.Lock 2 held by task 2, at deadlock.go:23 (lockBoth)
//		task 2 "ba" waits on Mutex.Lock 1 held by task 1, at deadlock.go:23 (lockBoth)
//
// "at" is the await an async function is suspended at, which its generated
// code records (future.Context.Suspended) in 16 bits of the task's run
// word. Warnings, after tokio-console's, follow: a task idle after a poll
// that returned not-ready without taking its Waker (the worker checks
// future.Budget.WakerTaken after each pending poll and records the wait
// "nothing"; a heuristic: a Waker that an earlier poll registered may
// still wake it), a task woken during more than half of at least 16 polls
// (counted when the poll ends in IdleReschedule: by itself most often, or
// by another worker during the poll), a task in its first poll past
// SlowPoll (with PollTiming). Then the latest tasks that panicked or were
// cancelled (Config.FailedTasksKept, a ring taken under a lock only when a
// task fails), so that a crash's victim is still seen after its end.
//
// # Profiler labels and trace regions
//
// With Config.ProfileLabels, a worker sets the task's pprof labels on its
// goroutine around each poll (runtime/pprof.SetGoroutineLabels: blitz.task,
// the name, and blitz.task.id), from a label set made at the task's first
// labelled poll and kept in its side record, so that a CPU profile
// attributes the poll's time to the task; between polls the worker's
// goroutine has its own labels (blitz.worker, blitz.scheduler), which a
// CPU profile then shows for the scheduler's own work. While the execution tracer runs
// (runtime/trace.IsEnabled), each task is a trace task named after the task
// (or "blitz.task"), made at its first traced poll and ended at its
// finish, and each poll a region "blitz.poll" in it; Config.NoTraceRegions
// turns that off. When the tracer is off, the check costs an atomic load
// per poll.
//
// # Driven schedulers
//
// A scheduler made with Config.Chooser has one worker and starts no
// goroutine: the goroutine that made it drives it with Step, one poll at a
// time, for deterministic simulation (the sim module). A Step runs the
// Driver as a worker's tick would (timers and I/O due now wake their
// tasks), gathers every ready task from the worker's queues (the global
// queue, the local queue, the LIFO oldest first, then the yielded tasks,
// in that order) into a ready list, and polls the task the Chooser picks
// from it. Which task runs next is therefore the Chooser's choice alone,
// and with a seeded Chooser, a driver whose events are seeded, and no
// goroutine outside the scheduler waking its tasks, two runs are the same
// run. When nothing is ready, Step reports how long until the Driver has
// something due, and the driving loop advances its clock. The queues are
// the same as a worker's, so spawning, waking, yielding and the budget
// behave as on a running scheduler; only the choice among ready tasks
// differs. Shutdown on a driven scheduler is synchronous (it cuts shields
// at once, as nothing polls them any more), and from a poll it is finished
// by Step after that poll.
package scheduler
