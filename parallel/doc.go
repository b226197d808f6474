// Package parallel runs CPU-bound Go code on every core by fork-join: a
// pool of worker goroutines that split work in halves and steal halves
// from each other, after Rayon and the Zig library Blitz. Parallel loops,
// iterators over slices and sorts are built on one primitive, Join, which
// runs two functions in parallel. It imports only the standard library and
// wsqueue.
//
//	// A loop: the sum of i*i over [0, n), on every core.
//	sum := parallel.MapReduce(n, 0, func(i int) int { return i * i },
//		func(x, y int) int { return x + y })
//
//	// Recursion: each side receives the worker that runs it, a *Ctx.
//	func fib(c *parallel.Ctx, n int) int {
//		if n < 20 {
//			return fibSeq(n)
//		}
//		x, y := parallel.JoinValues(c,
//			func(c *parallel.Ctx) int { return fib(c, n-1) },
//			func(c *parallel.Ctx) int { return fib(c, n-2) })
//		return x + y
//	}
//	var r int
//	parallel.Run(func(c *parallel.Ctx) { r = fib(c, 40) })
//
// # Start here
//
//   - Loops over [0, n): For(n, body) calls body(lo, hi) on pieces that
//     cover the range; Collect(n, f) builds the slice of f(i); MapInPlace
//     rewrites a slice; MapReduce and Reduce fold the range into one value
//     with an associative combine. Options: On (where it runs) and Grain
//     (how small the pieces get).
//   - Pipelines: From(s), Range(n) and Chunks(s, size) make an Iter; Map,
//     Iter.Filter, Enumerate, Zip, Chain and Flatten adapt it; Iter.Collect,
//     Iter.Reduce, Fold, Sum, Min, MinBy, Iter.FindFirst, Iter.Any and the
//     other terminal operations run it.
//   - Sorting: Sort, SortDesc, SortFunc, SortStableFunc, SortByKey and
//     SortByKeyDesc.
//   - Recursion: Join(a, b) runs a and b in parallel and returns when both
//     have; inside a job, call Ctx.Join on the *Ctx it received, or
//     JoinValues for two results.
//   - A changing number of jobs: Scoped(body), Ctx.Scope or Pool.Scope
//     gives body a *Scope whose Spawn adds jobs; all of them finish before
//     the call returns.
//   - Pools: the package-level functions run on Default, GOMAXPROCS workers
//     started on first use. NewPool(Config{Workers: n}) makes another, which
//     Pool.Close stops; On(p) runs a loop on it, and Pool.Run, Pool.Join and
//     Pool.Scope run jobs on it.
//   - Waiting for events from jobs: OnceLatch and CountLatch, which a job
//     waits for with WaitCtx (running other work meanwhile) and a goroutine
//     with Wait.
//   - Watching a pool: Pool.Metrics returns each worker's counts of jobs
//     executed, stolen and injected and of sleeps, with the pool's gauges;
//     Metrics.WritePrometheus writes them for Prometheus (section
//     "Metrics").
//
// Jobs must not block for long (on I/O, a channel, a lock held elsewhere):
// a blocked job holds its worker, and a pool has one worker per core
// unless told otherwise. The runnable examples (ExampleFor, ExampleReduce, ExampleScope and
// the others) are shown on pkg.go.dev; go test -run Example runs them.
//
// # Contexts, not thread-locals
//
// Blitz and Rayon find the current worker in a thread-local; Go has none.
// Every job therefore receives the worker that runs it, a *Ctx, and passes
// it on: c.Join, c.Scope, On(c) for loops. Code outside the pool uses a
// *Pool (p.Run, p.Join, p.Scope, On(p)) or the package-level functions,
// which use Default. A Ctx is valid only on the goroutine of the job it was
// passed to, until the job returns.
//
// A job that calls the pool-level API of its own pool instead (p.Run,
// parallel.For with On(p), the package-level functions from a job of
// Default) still works: the call notices that it runs on a worker of the
// pool and runs the work there, as the Ctx-level call would, at the cost of
// finding that out. A job of one pool that calls another pool blocks its
// worker until the other pool is done, which is safe unless two pools wait
// for each other with every worker.
//
// # Loops
//
// The loops split [0, n) recursively in halves with Join, and run body on
// the pieces. Where a loop runs is an Option, On(e), with e a *Pool or a
// *Ctx (an Executor); without it, Default. From inside a job, pass On(c):
// the loop then runs on the job's worker, with the others stealing.
//
// How small the pieces get is the grain. Automatic grain, the default,
// suits most loops: it follows Rayon's adaptive splitter. A budget of
// 2·workers splits (splitsPerWorker), halved at each split, ends in about
// 4·workers pieces when nobody steals; a piece whose job was stolen (it
// runs on another worker than the one that split it) has its budget raised
// back to the worker count, since a steal shows that a worker is idle and
// the work is unbalanced. Ranges are never split below autoMinGrain (32)
// elements per half, and a loop of fewer than 64 elements runs sequentially
// on the calling goroutine without touching a pool: the sequential cut-off.
//
// With Grain(g), ranges are split until they hold at most g elements,
// stolen or not, and a loop of at most g elements runs sequentially. Pass
// it when an element is expensive (Grain(1) runs a loop over 10 files in
// parallel, which automatic grain would run on the calling goroutine), when
// the cost of the elements varies so much that a few pieces per worker
// balance badly, or when the pieces must not depend on timing: with Grain,
// Reduce and MapReduce combine the same pieces in the same order on every
// run, so a floating-point sum gives the same result each time. Choose g so
// that a piece does at least a few microseconds of work and each worker
// still gets several pieces.
//
// A panic in a loop body is re-raised as a *PanicError after every piece
// finished (section "Panics").
//
// # Iterators
//
// An Iter[T] is a lazy pipeline over a slice (From, Chunks) or a range
// (Range): adapters (Map, Filter, Enumerate, Zip, Chain, Flatten) wrap it,
// and a terminal operation (Collect, Count, ForEach, Reduce, Fold, Sum,
// Min, Max, MinFunc, MaxFunc, MinBy, MaxBy, Any, All, FindAny, FindFirst,
// Position) runs it. Go has no generic methods, so the adapters and
// terminals that change or constrain the item type are functions; the
// others are methods. Terminals take the loops' Options, and run as
// Reduce over the source's index range: the same splitter, the same
// sequential cut-off, the same panic rule (section "Loops"); Grain counts
// source indices (chunks for Chunks, outer slices for Flatten).
//
// Each piece of the range drives the whole pipeline once: the source hands
// batches of up to blockSize (256) items down a chain of sinks, one per
// adapter, each of which transforms the batch into a buffer it owns (one
// per piece) and hands it on. No intermediate slice of the input's size
// exists, and the per-item cost is the user functions' calls; the
// per-batch cost is a few indirect calls. The alternative, pushing single
// items through a chain of closures, costs an indirect call per item per
// stage; pulling items (one Next per item) costs as much and complicates
// Filter.
//
// An iterator is exact if index i yields exactly item i: the sources, Map,
// Enumerate and Zip of exact iterators, and Chain of exact iterators are.
// Filter and Flatten are not, so Enumerate and Zip reject their output
// (they would need the count of items left of each piece). Collect writes
// an exact iterator in place into the result and concatenates the
// per-piece slices of any other.
//
// Early exit. FindAny, FindFirst, Position, Any and All share a cutoff
// among their pieces: a limit on the base index (the first source index of
// a batch) that sources compare against before every batch, so a stopped
// piece stops within one batch, and a piece not yet started stops at once.
// FindAny sets the limit to -1 on its first match: everything stops.
// FindFirst and Position lower it to the base of the matching batch
// (CAS-min): batches after it stop, batches before it go on, since they
// may hold an earlier match, and the pieces' results are combined left
// first, so the leftmost match wins. Position adds the item counts of the
// pieces left of the match, which are complete because the cutoff never
// stops a batch left of a match. For an inexact iterator the base of a
// batch is that of the source batch it came from, which orders batches
// correctly; Flatten checks the cutoff between the batches of one inner
// slice too.
//
// # Sort
//
// Sort, SortDesc, SortFunc, SortStableFunc, SortByKey and SortByKeyDesc
// run parallel pdqsort for the unstable sorts and parallel merge sort with
// one scratch slice for the stable ones, splitting with Ctx.Join (package
// github.com/blitz-go/blitz/parallel/internal/psort has the algorithms and
// their measurements). The sort runs in the executor of the On
// option (Default without), as the loops do; Grain is ignored, as psort's
// cut-offs are its own. A slice of at most sortSeqMax (16384) elements,
// psort's leaf size, is sorted on the calling goroutine with a sequential
// join and never touches a pool. SortDesc sorts ascending and reverses in
// parallel, which keeps the inlined comparisons of cmp.Ordered; SortByKey
// and SortByKeyDesc are stable, and call key on every comparison. A panic
// in a comparison or key function is re-raised as a *PanicError once no
// work of the sort runs.
//
// # Scopes
//
// c.Scope(body) runs body with a *Scope whose CountLatch counts the body
// and every spawned job not yet finished. s.Spawn pushes a job on the deque
// of the worker running the body; a spawned job that spawns more calls
// s.SpawnFrom(itsCtx, f), which pushes on its own worker's deque (Go cannot
// find the current worker without its Ctx). When the body returns, the
// owner waits for the latch, running jobs meanwhile. Spawned jobs are
// allocated, one per Spawn.
//
// # Panics
//
// A panic in a job is recovered on the goroutine that ran it, with its
// stack, as a *PanicError. Join re-panics only after both sides returned,
// with a's panic if a panicked, else b's: the order of the arguments, not
// of time, so that the outcome is deterministic. Scope re-panics after the
// body and all spawned jobs finished, with the first panic recorded (in
// time). Run, the pool-level calls and the loops re-panic with the job's
// *PanicError. A *PanicError travels unchanged through nested joins, so its
// Stack is the original panic's. The alternative, re-panicking the original
// value, would lose the stack of a panic that happened on another worker.
// Misuse panics with a "parallel: " string.
//
// A job that calls runtime.Goexit, as testing's t.FailNow, t.Fatal and
// t.SkipNow do, ends its worker's goroutine, which no code can stop; the
// pool finishes the jobs that goroutine was running, reports the job to
// whoever waits for it as a *PanicError with errors.Is(err, ErrGoexit)
// true, and starts a replacement worker (section "Goexit in a job").
//
// # Cancellation
//
// There is none: Join, Scope, Run and the loops return only once all the
// work they started has finished, and nothing interrupts a running job.
// To stop early, use the iterators that stop by themselves (FindAny,
// FindFirst, Position, Any, All), or have the body check a flag (an
// atomic.Bool, a context's Err) and return at once; the pieces still to
// come then cost one check each. A panic does not stop the other pieces
// either: they run to the end before the loop re-panics.
//
// # Metrics
//
// p.Metrics() reads a pool's figures: per worker, the jobs it ran
// (JobsExecuted), those of them it stole from another worker (JobsStolen)
// or took from the injection queue (JobsInjected), the times it went to
// sleep for lack of work (Sleeps) and was woken (Wakeups), and its deque's
// length; their totals; and the pool's gauges (idle and sleeping workers,
// jobs waiting in the injection queue). A job is the second function of a
// Join, whether popped back or stolen (the first runs as a call), a job
// spawned into a Scope, or the one job of each call from outside the pool
// (Pool.Run, and Join, Scope and the loops on a *Pool): a tree of n joins
// submitted with Run counts n+1 jobs. Many steals against few jobs mean
// unbalanced work; sleeps that grow as fast as the jobs mean pieces too
// small to keep the workers busy.
//
// The counters never decrease, and are exact for finished work: when a
// call from outside the pool returns, every job it made is counted. A
// worker publishes its counts when it finishes a job it took from a queue
// and when it goes to sleep, so a long job's own joins show once it ends.
// Counting costs Join nothing measurable and reading costs the workers
// nothing: section "Counting" says how.
//
// m.WritePrometheus(w) writes the figures in the Prometheus text exposition
// format (0.0.4): counters such as
// blitz_parallel_jobs_executed_total{worker="0"}, one series per worker,
// and gauges such as blitz_parallel_workers_sleeping. The names are fixed:
// one exposition holds one pool.
//
// # Internals
//
// The rest of this documentation is for contributors: how Join, the sleep
// protocol of the workers, latches and Close work. Comments in the source
// cite these sections, and those above, by name; what they keep of Blitz
// and Rayon, and what they change, is in
// https://github.com/blitz-go/blitz/blob/main/docs/design/parallel.md.
//
// # Join
//
// c.Join(a, b) at join depth d takes frame d of the worker's frame stack (a
// job struct allocated the first time the worker reaches depth d, reused
// after: Join allocates nothing), stores b in it and pushes it on the
// worker's deque, then:
//
//  1. runs a inline, recovering a panic;
//  2. pops its deque: if it gets the frame, b was not stolen, and it runs b
//     inline (the fast path: no latch, no atomics beyond the deque's); if it
//     gets another job, one pushed after the frame and left behind
//     (Scope.SpawnFrom does that), it runs that job and pops again;
//     steps 1 and 2 up to b's return share one call level, whose one
//     deferred function recovers a's panic or b's (section "Goexit in a
//     job"), so the fast path pays for one defer; after a panic in a, the
//     pop and the rest run outside it, as in the slow path;
//  3. if the deque is empty, b was stolen: it waits for the frame's latch
//     (the done flag), running other work meanwhile (section "Waiting");
//     the thief runs b, stores its panic, sets done and notifies the owner.
//  4. the owner resets the frame (done false, fn nil) and re-panics, if a
//     or b panicked.
//
// Thieves take the oldest frame (wsqueue's Steal), so a stolen frame is the
// largest piece of work available: the outermost pending join.
//
// # Waiting
//
// A worker that waits (waitUntil) pops its own deque first, then searches and
// sleeps as in "Going to sleep", running any job it finds, until the awaited
// flag is set. This is a hybrid join: the pop first catches the common case
// of deep recursion, where nothing was stolen, and a worker whose b was
// stolen keeps working rather than blocking. The jobs it runs nest on its
// goroutine's stack.
//
// # Calls from a worker without its Ctx
//
// A job may call the pool-level API of its own pool (p.Run, p.Join,
// parallel.For with On(p), Default's functions from a Default job) instead
// of using its Ctx. Injecting and blocking there would take the worker out
// of the pool; with every worker doing it the pool would deadlock. So the
// pool-level calls first ask whether the calling goroutine is one of the
// pool's workers, and if so run the work at once on that worker, exactly as
// the Ctx-level call would. The question is cheap when every worker is
// inactive (a worker running user code never is, so the caller is not one);
// otherwise it compares the goroutine id, parsed from runtime.Stack (about a
// microsecond), with the ids the workers recorded at start. Go reuses no
// goroutine id. A worker of one pool calling another pool blocks, which is
// safe unless two pools wait for each other with every worker.
//
// # Goexit in a job
//
// A job that calls runtime.Goexit (as testing's t.FailNow, t.Fatal and
// t.SkipNow do) ends the goroutine of the worker running it: Goexit runs
// the deferred calls and cannot be stopped. Left alone, the pool would lose
// the worker and whoever waits for the job would wait forever. Instead:
//
//  1. Every job runs in a call level (Ctx.run; Join's a and its b popped
//     back share one, Ctx.joinInline, which tells by its progress whose
//     level it is) whose deferred function tells a Goexit from a return and
//     a panic: the function neither returned nor panicked. (A panic
//     recovered there while a Goexit started inside the function is
//     pending does not stop the Goexit; runtime.Goexit on the stack below
//     the deferred function tells that case.)
//  2. That deferred function unwinds its level before the goroutine goes on
//     exiting: it closes the join frames opened inside the level, innermost
//     first, as Join does after its a (pop b back and run it, or wait for
//     its thief, running other work meanwhile), and then does what the
//     level owes: a job is finished as if it had panicked with ErrGoexit
//     (done and notify for a join frame, record and count down for a scope
//     job, pending and the channel for an injected one); a scope whose body
//     or final wait is unwound records ErrGoexit and gives back the body's
//     count, if the body had not returned, and waits for its jobs; Join's b
//     popped back releases its frame. So the jobs on the goroutine are
//     finished in order, innermost first, each only once both sides of its
//     joins and its scopes' jobs are, as for a panic (section "Panics").
//  3. The user code that the unwinding runs may call Goexit too. The runtime
//     then abandons the unwinding's deferred function, after the deferred
//     calls of that code, which unwind its own levels; a deferred call of
//     the unwinding resumes it where it stopped, from the state in the frame
//     stack, the deque and a small record of its steps.
//  4. When the last level is unwound, the worker's main function starts a
//     replacement goroutine: the same Ctx, deque and index, a fresh frame
//     stack, its own goroutine id (section "Calls from a worker without its
//     Ctx"; the id map is copied on write). It takes over the running count,
//     so Close waits for it.
//
// The unwinding runs other jobs while it waits, as any wait does. That is
// safe: each job runs in its own call level, so a Goexit in it finishes it
// and resumes the unwinding (steps 2 and 3), and the goroutine is still the
// worker in every respect (counted active, registered, owning its deque).
// It is also needed: the job waited for may sit in the worker's own deque
// below others, and a worker counted idle must take the jobs it is counted
// on for (section "Posting work"). Whoever waits for the job sees a
// *PanicError with errors.Is(err, ErrGoexit); its Stack shows where Goexit
// was called.
//
// # The counters word
//
// The sleep protocol is Rayon's jobs event counter (JEC) protocol. One
// atomic uint64 per pool packs three fields:
//
//	bits  0-15  sleeping: workers that registered as asleep (step 6 below)
//	bits 16-31  inactive: workers looking for work, sleeping ones included
//	bits 32-63  JEC: even when a worker announced it is sleepy since the
//	            last new work; odd otherwise
//
// Packing lets a worker about to sleep check the JEC and count itself
// sleeping in one CAS, and lets a producer bump the JEC and read the sleeping
// and inactive counts in one CAS.
//
// # Going to sleep
//
// A worker with nothing to do (its main loop, or a join or latch wait) runs
// these steps. Each worker has a sleep latch, Ctx.state, with four states:
// UNSET, SLEEPY, SLEEPING and SET, where SET means "notified: look again".
//
//  1. Count itself inactive (startLooking).
//  2. Search: its own deque, a steal from each other worker starting at a
//     random one, the injection queue. A job found ends the idle spell:
//     count itself active again and wake up to two sleepers, since there
//     may be more work (workFound), then run the job.
//  3. After SleepyRounds fruitless rounds, each followed by
//     runtime.Gosched, announce sleepiness: make the JEC even if it is odd,
//     and keep the even value as the snapshot. Search once more.
//  4. CAS its latch UNSET→SLEEPY. Failure means SET: store UNSET (consume
//     the notification) and go back to step 2, which re-checks what it
//     waits for.
//  5. Lock its mutex; CAS SLEEPY→SLEEPING; failure means SET, as in 4.
//  6. Loop: load the counters word; if the JEC differs from the snapshot,
//     work was posted since step 3: unlock, store UNSET and go back to
//     step 3 (search, announce again). Otherwise CAS sleeping+1 into it.
//  7. Look at the injection queue once more (a JEC that wrapped around
//     2^32 times would fool step 6): if it holds a job, take itself off the
//     sleeping count, unlock, store UNSET, go to step 2.
//  8. Set blocked and wait on its sync.Cond until a waker clears blocked;
//     the waker also takes it off the sleeping count. Unlock, store UNSET,
//     go to step 2.
//
// A sleeping worker is a parked goroutine: an idle pool costs no CPU.
//
// # Posting work
//
// Whoever publishes jobs (a deque push by Join or Spawn, an injection)
// then calls newJobs:
//
//  1. Load the counters word; while the JEC is even, CAS it to odd.
//  2. If no worker sleeps, stop. Otherwise, if the queue was not empty
//     before the push, wake min(n, sleeping) workers; else wake enough
//     sleepers to make up for the awake idle workers (inactive - sleeping)
//     that will find the jobs anyway.
//
// No lost wake-up: take a worker W going to sleep with snapshot s (even)
// and a job J published after W's last search. The publisher's read in
// step 1 and W's CAS in step 6 are atomic operations on one word, so one
// comes first. If the publisher's comes first, it saw JEC s or a later
// value: if s, it CASes it to s+1; either way W's step 6 sees a JEC other
// than s and searches again, finding J. If W's CAS comes first, the
// publisher sees W counted sleeping and wakes a sleeper, W or another (any
// woken worker searches and finds J), unless enough workers are awake and
// idle: each of those searches again before it sleeps, and either finds J
// or goes through step 6 after the publisher's step 1, which the JEC
// catches. A waker blocks on W's mutex, which W holds from step 5 until it
// waits, so it cannot miss the blocked flag of step 8.
//
// # Latches and notification
//
// A worker may also wait for a latch: a stolen join frame's done flag, a
// OnceLatch or CountLatch (WaitCtx), the pool's stop flag. Whoever sets the
// latch then notifies each worker that may wait for it: swap its sleep latch
// to SET, and if it was SLEEPING, wake it (lock, clear blocked, signal). The
// race between a notification and a worker getting sleepy is the one the four
// states exist for: a notification before step 4 makes that CAS fail; one
// between 4 and 5 makes 5 fail; one after 5 finds SLEEPING and wakes the
// worker, blocking on its mutex until it waits. A worker consumes a SET by
// storing UNSET and then re-checks what it waits for, so a stale notification
// costs one search round. Join frames notify their owner; a OnceLatch keeps
// the workers in WaitCtx in a list under its mutex; goroutines in Wait block
// on a channel the latch closes.
//
// # The injection queue
//
// Work from outside the pool (Run, and Join, Scope and the loops on a *Pool)
// goes to a FIFO list under a mutex with an atomic length, which idle workers
// read without locking. The caller blocks on a channel of capacity one that
// the job struct carries; the structs are recycled through a sync.Pool. A
// lock-free Treiber stack would be LIFO and needs either a lock or ABA care
// for its pop; injection is not on the fork-join hot path, so the mutex is
// the simple choice.
//
// # Counting
//
// Each worker keeps its counters (Ctx.tally) in plain fields that only its
// own goroutine reads and writes, and increments them where the events
// happen: a Join's b popped back, a job run by execute, a steal, a job
// taken from the injection queue, a sleep and its wakeup. The Join fast
// path thus adds an increment of a field on a cache line the worker owns,
// not an atomic: on amd64 an atomic add or store is a locked instruction,
// as costly as the deque operations Join already makes.
//
// Other goroutines read a copy (Ctx.published), on cache lines of its own,
// which the worker alone writes with atomic stores (publish): in finish,
// before it signals a job's completion to whoever waits for it, and in
// sleep, before it blocks and after it wakes. A job and everything it ran
// on the worker are therefore published before its waiter wakes: a Join
// waiting for a stolen b, Run's caller. Every job, and every join inside
// one, runs inside a job that a worker took from a queue and finishes, so
// nothing stays unpublished once the work is done. publish stores only the
// fields that changed: one store for most jobs. It stores a whole before
// its subsets (jobs executed before stolen and injected, sleeps before
// wakeups) and Pool.Metrics loads them in the reverse order, so that a
// subset read never exceeds the whole read after it; the tally never
// decreases, so neither does what a reader sees. A replacement worker
// (section "Goexit in a job") carries on with the same tally.
//
// The alternatives: an atomic add per Join, which the fast path would pay;
// counters in a shared array, whose cache lines the workers would fight
// over; per-worker counters read without atomics, a data race.
//
// # Close
//
//  1. Mark the injection queue closed under its mutex: later submissions
//     panic with ErrClosed.
//  2. Wait until every injected job has run.
//  3. Set the stop flag and notify every worker; each leaves its main wait
//     (its deque is empty: all joins complete inside their jobs).
//  4. Wait for the worker goroutines to exit.
//
// The Default pool ignores Close.
package parallel
