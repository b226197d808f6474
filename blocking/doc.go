// Package blocking provides the blocking pool of blitz for Go: goroutines
// started on demand, up to a cap, that run work which blocks an OS thread
// (system calls without a poller, cgo, file I/O), so that the scheduler's
// workers never do. It is a pool in the style of Tokio's: workers are
// started when work arrives and none is idle, the excess waits in a FIFO
// queue, a worker that finds nothing to do for Config.IdleTimeout exits, and
// Shutdown either runs or rejects what is still queued. The package imports
// only the standard library.
//
// A [Pool] is made by [New] and is safe for concurrent use; the zero Pool is
// not usable. [Pool.Submit] takes a [Task], an intrusive node the caller
// allocates (usually embedded in the record of the work) and may reuse;
// [Pool.Go] allocates one for a function.
//
// Comments elsewhere in the package cite the sections below by name.
//
// # Ownership of a Task
//
// The submitter owns a Task until Submit succeeds. The pool then owns it,
// queued or handed to a worker, until the moment it calls Run (on a worker)
// or Reject (in Shutdown). Just before that call it reads the Task's fields
// and marks it free, and it never touches the Task again: from the moment
// Run or Reject is called the submitter owns the Task again and may change
// and resubmit it, from inside Run too (a task that reschedules itself), or
// from a goroutine that Run signalled. The pool does not mark the Task free
// after Run returns because no submitter could tell when that had happened:
// a signal sent by Run comes before the return, and a Submit that raced with
// the return would fail with ErrQueued (see "Alternatives rejected").
//
// Submit of a Task it owns fails with ErrQueued: the Task is queued, or was
// handed to a worker that has not called Run yet. A Task can be in one pool
// at a time.
//
// # Starting workers
//
// Submit, under the pool's lock:
//
//  1. If a worker is parked on the idle stack, pop it and hand it the task
//     ("Idle workers").
//  2. Else, if fewer than MaxThreads workers are alive, count one more and
//     start a goroutine with the task as its first.
//  3. Else append the task to the queue.
//
// So the pool grows only when every worker is busy, the queue is empty
// whenever a worker is idle, and tasks queue only when MaxThreads workers
// are busy. A worker, after each task, takes the oldest queued task; when
// the queue is empty it parks.
//
// # The queue
//
// The queue is a singly linked list through Task.next with head and tail
// pointers, so queueing allocates nothing: Submit of a Task that finds an
// idle worker or queues allocates zero bytes (only starting a worker
// allocates: its goroutine, its record, its wake channel and its timer,
// all made once). It is unbounded: backpressure is the caller's business
// (the runtime counts what it submits).
//
// # Idle workers
//
// Each worker has its own wake channel, of capacity 1, made once when the
// worker starts. A worker with nothing to do pushes itself on the idle stack
// and waits on its channel and on its timer. Whoever pops it off the stack,
// Submit (with a task) or Shutdown (with nil: exit), sends on its channel,
// so exactly one worker wakes for one task: no thundering herd. The stack
// is LIFO: the most recently parked worker is woken first, so under light
// load the same few workers stay warm and the others reach their timeout
// and exit, and the pool shrinks to what the load needs.
//
// Two rules make wake-ups safe. They mirror each other: one is about the
// waker, the other about the worker leaving.
//
//  1. The waker pops the worker off the stack and sends on its channel in
//     one critical section of the lock. The channel is empty whenever the
//     worker is on the stack, so the send never blocks, and a worker that
//     finds itself off the stack knows a value is already in its channel.
//  2. A worker whose timer fires takes the lock, and in that one critical
//     section either finds itself still on the stack, removes itself, and
//     counts itself out of Threads, or finds itself popped and takes the
//     value from its channel (rule 1). Between its timer firing and its
//     taking the lock it is still on the stack and may still be chosen.
//
// A task is therefore never lost to a worker that is leaving. A Submit that
// comes before the worker's critical section finds it on the stack and hands
// it the task, which it runs (TestTimedOutWorkerRunsTaskHandedToIt pauses a
// worker in that window); one that comes after finds Threads already lower
// and starts a worker (TestIdleExitRacesSubmit hunts both windows, with a
// 1ms IdleTimeout; splitting the worker's removal from its counting out, as
// a deliberate mutation, strands a queued task with Threads 0 within a few
// rounds). A worker that finishes a task does the same: it looks at the
// queue and parks, or exits after Shutdown, in one critical section, so a
// task queued in between is seen.
//
// # The idle timer
//
// A worker's timer stays armed across parks: a task that wakes the worker
// does not stop it, and a park arms it only if it is not armed (the worker
// is new, or the timer has fired). When
// it fires, the worker compares the time since it parked with IdleTimeout;
// if the timer fired early (it was armed for an earlier park), the worker
// re-arms it for the rest and waits again. Stopping and re-arming the timer
// on every park cost about a quarter of BenchmarkSubmit/pool. A timeout
// may therefore come one timer latency late (the runtime's timers fire up to
// a millisecond or so late when the process is otherwise idle); an idle
// timeout is a lower bound anyway.
//
// # Panics
//
// If a Task has Panicked, its worker recovers a panic of Run (panic(nil)
// included, as a *runtime.PanicNilError), calls Panicked with the value and
// debug.Stack() of the worker, which shows the panicking frames, counts it
// in Stats.Panics and Stats.Ran, and goes on with the next task. Without
// Panicked the panic is not recovered and ends the program, as a go
// statement's would: the pool does not hide a crash nobody asked to handle.
// If Run calls runtime.Goexit the worker goroutine ends; the pool counts the
// task as ran, and if tasks are queued it starts a replacement worker for
// the oldest, since the other workers may all be blocked.
//
// # Shutdown
//
// Shutdown(ctx, policy):
//
//  1. Under the lock, the first call sets closed: from now on Submit fails
//     with ErrClosed. It pops every parked worker and sends it nil: idle
//     workers exit now, not after IdleTimeout.
//  2. Under the same lock, with RejectQueued, it detaches the queue, counts
//     it in Report.Rejected, and marks each task free. With RunQueued the
//     queue stays: the busy workers drain it (each task taken from the queue
//     after closed counts in Report.Ran when it returns); since the queue is
//     non-empty only while MaxThreads workers are busy, someone will.
//  3. Without the lock, it calls the Reject of each detached task, oldest
//     first, with ErrClosed; a task without Reject is only counted.
//  4. It waits until the workers have all exited (the last one to count
//     itself out after closed closes a channel) or ctx ends. In the second
//     case it returns the Report so far and an error wrapping
//     context.Cause(ctx); the workers finish later. Any number of calls may
//     wait at once or one after another; each returns the Report counted
//     since the first call. A later call with RejectQueued rejects what is
//     still queued then.
//
// After a Shutdown that returned nil no goroutine of the pool remains
// (goleak checks it after every test). Reject runs on the goroutine that
// called Shutdown, without the lock, so it may call Stats or Submit (which
// fails with ErrClosed); it should be quick, as it delays the rest. A Run
// that calls Shutdown waits for its own worker until ctx ends.
//
// # Locks and owners
//
// One sync.Mutex, Pool.mu, guards all shared state: the queue and its
// length, the idle stack and every worker's links and parked flag, Threads
// and the counters of Stats and Report, closed, and the next and state
// fields of every Task submitted to the pool. It is never held while Run,
// Panicked or Reject runs, and every critical section is a few pointer
// writes. Set by New and read-only afterwards: MaxThreads, IdleTimeout, the
// exited channel. Owned by one worker goroutine: its timer. Stats is a
// consistent snapshot taken under the lock. There are no atomics: the lock
// orders everything, and the race detector checks it.
//
// # Ordering
//
// Tasks are taken in Submit order: a queued task is taken before any task
// submitted after it, and none is handed to an idle worker while the queue
// is non-empty. Once taken, tasks run concurrently on different workers, so
// their Run calls may interleave in any way. Everything the submitter wrote
// before Submit happens before Run (or Reject) reads it. Everything a
// worker did happens before a Shutdown that returned nil returns.
//
// # Alternatives rejected
//
//   - One shared channel of tasks that idle workers receive from: no
//     unbounded FIFO without a goroutine to feed it, a channel slot per task,
//     and a worker cannot time out and leave atomically with respect to a
//     send, which is how wake-ups get lost.
//   - A sync.Cond with Broadcast on Submit: wakes every idle worker for one
//     task (the thundering herd); Signal has no timeout in Go.
//   - A lock-free queue and atomic counters: the pool's cost is a goroutine
//     wake-up per task (hundreds of nanoseconds, see BenchmarkSubmit), which
//     an uncontended lock does not change, and one lock makes rules 1 and 2
//     a matter of critical sections instead of a proof.
//   - Marking a Task free after Run returns: see "Ownership of a Task". The
//     cost of marking it before is one extra acquisition of the lock by a
//     worker that was handed a task, which measured within the noise of
//     BenchmarkSubmit.
//   - A goroutine per call (the go statement): cheaper per call, but
//     unbounded; the cap is what keeps a burst of blocking calls from
//     becoming thousands of OS threads.
package blocking
