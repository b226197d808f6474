// Package idle coordinates the idle workers of a scheduler: how many
// workers search for work, which ones are parked, who wakes whom, and
// parking with a timeout without lost wakeups. It keeps searching and
// parked counts and a parked-worker bitmap, caps the searchers at half the
// workers, and has the last searcher to stop wake another worker or check
// for work once more, as Go's scheduler does (runtime/proc.go, "Worker thread
// parking/unparking") and Tokio's Idle
// (runtime/scheduler/multi_thread/idle.rs). The package imports only the
// standard library.
//
// A [State] serves a fixed set of n workers, numbered 0 to n-1, any n up to
// [MaxWorkers]: the bitmap is ceil(n/64) words, not one word capped at 64.
// Workers are goroutines; a parked worker blocks on a channel receive, which
// Go's scheduler handles like any other blocked goroutine. Comments elsewhere
// cite the sections below by name.
//
// # Roles
//
// At any moment a worker is in one of four roles:
//
//   - running: it has work, or is looking at its own sources;
//   - searching: counted in [State.Searching]; it looks everywhere (steals,
//     the global queue);
//   - announced: counted in [State.Parked], its parked bit set; it is about
//     to sleep or sleeping in [State.Park];
//   - claimed: a notifier cleared its bit and counted it as a searcher; its
//     Park returns [Notified].
//
// # The worker loop
//
// The scheduler's worker loop uses the State like this:
//
//  1. Look at the worker's own sources (LIFO slot, local queue). If it has
//     work, run it and repeat.
//  2. Call [State.TryBecomeSearcher]. If it returns false, go to step 4
//     as a non-searcher (half the workers already search; see "Searchers").
//  3. Search (global queue, steal). On finding work, call
//     [State.TransitionFromSearching] (which notifies another worker if this
//     was the last searcher), run the work, go to step 1.
//  4. Call [State.PrepareToPark](id, searching). If the result has
//     WasLastSearcher, check every work source once more and, if any has
//     work, call [State.NotifyOne].
//  5. Call [State.Park](id, timeout), the timeout being the next timer
//     deadline. On [Notified] the worker is a searcher: go to step 3. On
//     [TimedOut] it is running: run its timers, go to step 1. On [Closed],
//     shut down. A worker that sleeps in the I/O backend's wait instead of
//     its token channel calls [State.ParkWith] here (see "Sleeping
//     elsewhere"); its [Interrupted] is handled like [TimedOut].
//
// Whoever makes work available (spawn from outside a worker, a wake from an
// I/O completion, a push to the global queue, a local push that other
// workers could steal) publishes it and then calls [State.NotifyOne]. Work
// that only one worker can take (an I/O ring that only that worker waits
// in) is published the same way and followed by [State.NotifyWorker](id),
// which claims that worker if it is parked, whoever else searches.
//
// # Sleeping elsewhere
//
// One worker of an async I/O runtime sleeps in the backend's Wait (epoll_wait,
// io_uring_enter, GetQueuedCompletionStatusEx) rather than on a channel, so
// that an I/O completion, the next timer deadline and a claim all end the
// same sleep. [State.ParkWith] runs the same protocol as Park around a block
// function, and [State.SetUnparker] gives the claimers a second step: after
// sending a worker its token they call the unparker, which wakes the
// backend's Wait when that worker sleeps in it. Because the token is sent
// before the unparker runs and ParkWith looks at the token before every
// block, the only window left is a claim between that look and the sleep,
// and the backend's Wake is sticky: the sleep then returns at once.
//
// # The counts word
//
// The two counters live in one 64-bit atomic word, searching in the low
// half and parked in the high half, so that [State.NotifyOne]'s test
// "nobody searching and somebody parked" is one atomic load, and each
// transition moves both counters in one CAS. A worker's announcement raises
// parked before it sets the worker's bit, and every clear of a bit (claim,
// close, cancel) lowers parked after it, so parked is never below the
// number of set bits; it is above it only during those few instructions. A
// notifier that sees parked > 0 and finds no bit therefore gives back its
// searcher slot, yields, and looks again.
//
// # Searchers
//
// [State.TryBecomeSearcher] succeeds while 2*searching < n, so at most
// ceil(n/2) workers search at once (1 of 1, 1 of 2, 2 of 3, 32 of 64, 33 of
// 65): as in Go's findRunnable and Tokio, this bounds the CPU burnt by
// workers that steal from each other when work appears after an idle period.
// A worker claimed by NotifyOne becomes a searcher without the cap: the
// notifier only claims when searching is 0.
//
// # No lost wakeup
//
// The rules, like the two mirrored rules in proc.go. All sync/atomic
// operations are sequentially consistent, so all operations on the counts
// word, and the work sources' own synchronizing operations, are ordered
// consistently with program order. The work sources must be synchronized
// (atomics, locks, channels); this package does not see them.
//
//  1. A notifier publishes its work, then loads the counts word (NotifyOne).
//     If searching > 0 it does nothing; if parked > 0 it takes a searcher
//     slot (CAS searching 0 to 1), claims a parked worker and sends it a
//     token.
//  2. A searcher that stops searching lowers searching (CAS) and then, if
//     it was the last one, looks for work: TransitionFromSearching calls
//     NotifyOne; a parker (PrepareToPark with WasLastSearcher) checks every
//     source and calls NotifyOne if it finds work. Rules 1 and 2 mirror each
//     other: one side writes work then reads the counts, the other writes
//     the counts then reads work, so at least one side sees the other.
//  3. Searchers are counted before they look: TryBecomeSearcher's CAS comes
//     before the search, and NotifyOne takes the claimed worker's searcher
//     slot before it claims, so a worker woken as a searcher is counted
//     before its bit is cleared.
//  4. Each announcement ends with exactly one clear of its bit: a claim
//     (NotifyOne's CAS), Close's Swap, or the worker's own cancel (an atomic
//     And, in Park). The party that cleared it, and only that party, lowers
//     parked and (if a claimer) sends the token.
//  5. A token sent before the worker sleeps waits in its 1-buffered channel,
//     and Park's receive returns at once (see "Tokens").
//
// The argument below assumes that the work is shared: every source that a
// worker checks in steps 1, 3 and 4 holds work that any worker may take, as a
// global queue and stealable local queues do. Work only one worker may run
// (pinned to it) needs a wakeup of its own: NotifyOne wakes any worker, and a
// last searcher that checks only for its own work can strand another's
// (BenchmarkUnparkPark's comments show the trap).
//
// Why no work is stranded. Assume a worker loop as above, and a notifier
// that published w (point p) then called NotifyOne (its load L, after p).
// Suppose w is never taken and every worker ends asleep in Park. Then
// searching ends at 0. Let Z be the last operation that takes searching from
// 1 to 0; after Z, searching stays 0, since any increment would need a later
// such operation. Every such operation is followed on its goroutine by a
// look for work: TransitionFromSearching's NotifyOne, the last parker's
// check (rule 2), or NotifyOne's own loop after giving a slot back.
//
//   - If L comes after Z, L sees searching == 0. If it sees parked > 0 it
//     claims a worker, which becomes a searcher after Z: contradiction. If
//     it sees parked == 0, every worker is running at L; each must park
//     later, and a running worker parks only after TryBecomeSearcher, which
//     with searching == 0 succeeds after Z (contradiction), or after one
//     that failed before L, when searching was > 0. The worker that did Z,
//     though, was a searcher until Z, so its failure would come after Z: it
//     either succeeded (contradiction) or it parked at Z as the last
//     searcher and, not being announced at L, was claimed (contradiction)
//     or cancelled by a timeout and loops through step 2 again
//     (contradiction).
//   - If Z comes after L (so after p), Z's follow-up look comes after p: a
//     last parker's check sees w and calls NotifyOne; TransitionFromSearching
//     and NotifyOne's loop call or are NotifyOne. Its load comes after Z,
//     which is the first case with that load in place of L.
//
// So some worker sees w. Two claimers never take the same worker (rule 4),
// so each claim wakes a distinct parked worker, and a claimed worker whose
// timeout fires anyway reports the claim (see "Timeouts"). The stress tests
// (TestNoLostWakeup, TestNoLostWakeupShortTimeouts) run this loop with a
// park timeout far longer than the test's watchdog, so a lost wakeup fails
// them instead of being rescued by a timeout.
//
// # Tokens
//
// Each worker has a channel of capacity 1. The claimer that cleared the
// worker's bit sends one token, saying whether it was a notify or Close; the
// worker receives it in Park. A token never waits unreceived when the next
// announcement starts: Park either receives it, or its cancel clears the bit
// itself (then no claimer exists), or finds the bit already cleared and
// receives the token of the claimer that cleared it. So a send never blocks,
// and a second token is a broken invariant (panic).
//
// A channel was chosen over sync.Cond with a flag: Park needs a timeout,
// which a Cond cannot give without a helper goroutine or timer callback
// that broadcasts; a select on the token and a reused per-worker time.Timer
// gives the timeout with no allocation per park. The benchmarks
// (BenchmarkUnparkPark) put the whole round trip next to a plain channel
// ping-pong and a sync.Cond ping-pong.
//
// # Timeouts
//
// When Park's timer fires, the worker cancels its announcement by clearing
// its own bit with an atomic And, which returns the old word. If its bit was
// still set, nobody claimed it: it lowers parked and returns [TimedOut], a
// running non-searcher. If the bit was already clear, a claimer won the race
// and is sending (or has sent) its token; Park receives it and returns
// [Notified] (or [Closed]), and the worker is the searcher the notifier
// counted. Either way the counts stay exact.
//
// # The bitmap
//
// Bit i%64 of word i/64 is set while worker i is announced and unclaimed.
// NotifyOne scans the words starting at a random one (math/rand/v2's
// top-level generator, per-thread state, no shared cache line), wrapping
// around, and in a word takes the lowest set bit (bits.TrailingZeros64),
// clearing it with a CAS; a failed CAS rereads the word. The random start
// spreads wakeups across words when n > 64 and keeps concurrent notifiers
// from all contending on word 0; within one word the lowest id goes first.
// Tokio instead wakes the most recently parked worker from a mutex-guarded
// list; Go takes the head of its idle-P list, under sched.lock.
//
// # Close
//
// [State.Close] sets the closed flag and then swaps every word to zero,
// sending a Close token to each worker whose bit was set. A Park that loads
// the flag as false announced before that load, so the sweep, which comes
// after the flag's store, finds its bit (or a notifier claimed it first and
// sent a token). A Park that sees the flag cancels at once and returns
// [Closed].
//
// # Misuse
//
// Misuse panics with a sentinel error ([ErrWorkerID], [ErrNotSearching],
// [ErrAlreadyPrepared], [ErrNotPrepared], [ErrWorkerCount]) as the value:
// a worker id driven by two goroutines, Park without PrepareToPark, a
// transition from searching by a worker that is not a searcher.
//
// # Alternatives rejected
//
//   - A mutex around park and notify (Tokio's sleepers list): simpler to
//     argue, but every NotifyOne with no searcher would take it; here the
//     common case, a searcher exists, is one load, and claims are a CAS.
//   - One 64-bit bitmap word: caps the pool at 64 workers.
//   - sync.Cond: no timeout; see "Tokens".
//   - A per-worker futex-like park state word: the token channel already
//     makes an early unpark sticky, and the parked bit already says whether
//     a timed-out worker was claimed.
//   - Claiming by reserving parked (one CAS for searching+1, parked-1): a
//     worker cancelling after a timeout could not tell whose reservation it
//     undoes; lowering parked after the bit clear keeps parked >= set bits.
package idle
