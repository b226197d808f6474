// Package sim runs blitz programs under deterministic simulation: one or
// several hosts, each with its own runtime and address, connected by a
// simulated network and each with a simulated disk, all driven on one
// goroutine from one seed, in virtual time. A failure found at a seed
// happens again, event for event, every time that seed runs.
//
// # A run
//
// A World is one run. Its hosts' runtimes are made the ordinary way, with
// blitz.New, from the Config the host gives (Host.Config); the program's
// code does not change: Spawn, Sleep, Timeout, ListenTCP, DialTCP, UDP,
// files, JoinSet, the sync primitives and the channels work as on a real
// runtime. A simulated runtime has one worker and starts no goroutine: the
// World polls every host's tasks itself, one poll per step. At each step
// it runs the timers and the I/O due on every host, gathers the ready
// tasks of all of them, and lets the Strategy pick one (Random, or PCT for
// bugs that need a few orderings in a long run). When no task is ready
// anywhere, the clock jumps to the next thing due: a timer, or a segment
// or datagram arriving. When nothing is due and the test still waits, the
// run ends with ErrDeadlock and a dump of every waiting task.
//
// The test drives the world by waiting on a future: blitz.BlockOn on a
// simulated runtime runs the world until the future completes (or
// World.RunUntil with a condition of its own).
//
// # Time
//
// The virtual clock is that of a testing/synctest bubble, and Check runs
// every seed in one: time.Now and time.Since in the program, the runtime's
// timers, deadlines and intervals, and the network's latencies all read
// it, and it moves only when the World moves it (a time.Sleep of the
// driving goroutine, which the bubble completes at once since nothing else
// runs). So time.Now in user code is virtual and consistent with the
// runtime's; an hour of timeouts takes milliseconds. The clock starts at
// midnight UTC, 2000-01-01, as synctest's does.
//
// # The world
//
// World.Network shapes and breaks the network: latency ranges (per link
// too), datagram loss, duplication and reordering, bandwidth, partitions
// and heals, resets. Host.Disk injects disk faults: read and write errors,
// bit flips, torn writes. A file's data follows fsync: Host.Crash (a power
// loss) keeps only what was synced, Host.Kill (the process dies, the
// machine stays) keeps everything written; Host.Restart boots the host
// again with its durable files, running the function given to Host.Start.
// Resolve (and DialTCP with a host name) answers with the address of the
// host of that name.
//
// blitz.Buggify lets code widen its own rare paths under simulation only
// (it is false on a real runtime, so it stays in production code, which
// need not import this package), and blitz.Rand gives code on a host the
// run's seeded source of random numbers.
//
// # Seeds, replay and traces
//
// Check runs a test body under many seeds, in parallel subtests, each in a
// bubble. Every event of a run (each poll's host and task, each clock
// jump, each network and disk event) goes into a trace whose hash
// (World.TraceHash) is the run's fingerprint: the same seed gives the same
// hash. A failing seed prints the tail of its trace and the command that
// replays it (go test -run ... -args -sim.seed=N -sim.trace); it is run a
// second time at once, and a run whose hash differs is reported as not
// deterministic. -sim.seeds sets how many seeds run, -sim.first the first,
// -sim.twice (or Options.Twice) runs every seed twice and fails one whose
// two traces differ, and -sim.shrink=N runs N more seeds after a failure
// and reports the failing run with the fewest steps.
//
// # What is not simulated
//
// What would run on a goroutine of its own is refused with an error
// wrapping blitz.ErrSimulated: the blocking pool (blitz.Blocking,
// SpawnBlocking, and the file calls that have no operation in the
// simulated disk), processes, signals, TLS handshakes. Goroutines the program
// starts itself, and channels or mutexes shared with them, are not under
// the World's control: they run in the bubble but in the Go scheduler's
// order, and a run that uses them is not reproducible (Check reports it
// when a failing seed does not repeat). So are the libraries that run
// code on goroutines of their own: httpserver runs net/http Handlers on
// pooled goroutines and waits for its accept loop on the calling one, so
// a simulated server is written with blitz.Serve and a connection
// handler. The other sources of non-determinism stay the program's: Go's
// map iteration order, a select among several ready Go channels, and
// math/rand without a seed; use blitz.Rand for random numbers, and iterate
// maps in sorted order where the order matters.
package sim
