// Package blitz runs async Go code: futures, as tasks, on a
// work-stealing runtime of a few worker goroutines, with timers, TCP, UDP,
// Unix and TLS sockets, files, child processes and signals driven by the
// platform's I/O (io_uring, epoll, kqueue, poll or IOCP). It is the module
// a program imports.
//
// # Start here
//
// The API in the order a new program needs it; each group has a section
// below.
//
//   - Run tasks: New(Config{}) makes a *Runtime, and Runtime.Handle the
//     Handle that the other constructors take. SpawnOn(h, f) starts a task
//     from a goroutine, Spawn(cx, f) from inside a task; both return a
//     JoinHandle, which a goroutine waits for with Wait and a task polls.
//     BlockOn(ctx, h, f) runs f on the calling goroutine. SpawnValue and
//     SpawnValueOn spawn a future held by value in one allocation;
//     TrySpawnOn refuses when Config.MaxLiveTasks tasks are live.
//   - Write a task: an async function that blitzgen compiles into a future
//     (see "A first program"), the combinators of package future
//     (future.Then, future.JoinAll, future.Race, ...), or a type with a Poll
//     method.
//   - Groups of tasks: JoinSet returns its tasks' outcomes as they finish;
//     Serve runs an accept loop with a handler task per connection and a
//     graceful stop.
//   - Time: Sleep, SleepUntil, Timeout, Deadline (TryTimeout and TryDeadline
//     for futures that can fail), NewInterval, Yield.
//   - TCP, UDP and Unix sockets: ListenTCP, DialTCP and TCPStream; BindUDP;
//     ListenUnix, DialUnix and BindUnixDatagram; Resolve. NetConn and
//     NetListener hand a socket to net/http and other goroutine code.
//   - TLS: DialTLS, ListenTLS or NewTLSListener, TLSClient and TLSServer
//     make a TLSStream, which crypto/tls drives in the task's own polls.
//   - Byte streams: every AsyncReader and AsyncWriter works with Copy,
//     ReadFull, ReadToEnd, WriteAll, NewBufReader and NewBufWriter;
//     AsIOReader, AsIOWriter, FromIOReader and FromIOWriter cross to and
//     from io.Reader and io.Writer.
//   - Files: Open, Create and OpenFile resolve to a *File; ReadFile,
//     WriteFile, ReadDir, MkdirAll, Remove, Rename, Stat and the other
//     file-system calls are futures too.
//   - Blocking code: Blocking and SpawnBlocking run a function on the
//     runtime's blocking pool.
//   - Processes: Command builds a Cmd and Cmd.Spawn starts it; the Child
//     has Wait, Output and Kill, and its piped stdin, stdout and stderr.
//   - Signals: Interrupt, Terminate, Hangup and Signal wait for one signal;
//     Signals returns a stream of them.
//   - Shutdown: a Coordinator drains the work in flight (Guard, then
//     Trigger or TriggerOnSignal, then Wait or Drained); Runtime.Shutdown
//     then stops the runtime. Shield keeps a section from being cut by a
//     cancel or by the shutdown.
//   - Goroutines and tasks together: JoinHandle.Wait and BlockOn wait for
//     tasks from goroutines; every channel of package
//     github.com/blitz-go/blitz/channels and every lock of package
//     github.com/blitz-go/blitz/syncprim has a future for tasks and a
//     Blocking form for goroutines, both waiting in one FIFO queue.
//   - Observability: Named and SetTaskName name tasks; Runtime.Dump,
//     Runtime.DumpOnSignal and Runtime.Tasks list the live tasks and what
//     each waits on; Runtime.Stats and Runtime.Metrics count, and
//     Metrics.WritePrometheus exports the counts; package
//     github.com/blitz-go/blitz/inspect serves all of it over HTTP.
//
// The runnable examples (Example_tcpServer, ExampleServe, ExampleCoordinator
// and the others) are shown on pkg.go.dev, not by go doc; go test -run
// Example runs them.
//
// # A first program
//
// A task is usually written as an async function: a Go function marked
// //blitz:async that waits with future.Await, or future.Try for a future
// that can fail, as if it blocked. The blitzgen generator, run by go
// generate, compiles it into a future:
//
//	//go:generate go tool blitzgen
//
//	//blitz:async
//	func greet(name string, d time.Duration) string {
//		future.Await(blitz.Sleep(d))
//		return "hello, " + name
//	}
//
// blitzgen writes greetAsync beside it, with greet's parameters, returning
// it as a future.Future[string], which a runtime runs as a task:
//
//	rt, err := blitz.New(blitz.Config{}) // GOMAXPROCS workers
//	if err != nil { ... }
//	defer rt.Shutdown(context.Background())
//
//	h := blitz.SpawnOn(rt.Handle(), greetAsync("world", 10*time.Millisecond))
//	msg, err := h.Wait(context.Background()) // "hello, world", nil
//
// Add the generator to your module with go get -tool
// github.com/blitz-go/blitz/asyncgen/cmd/blitzgen. The README at
// https://github.com/blitz-go/blitz has complete programs to paste and run.
//
// # How a task is written
//
// A task is a value with a Poll method (future.Future). There are four ways
// to get one, from most to least common.
//
// Write an async function, as above. The generated future is a state
// machine: a struct holding the parameters and the variables that live
// across a wait, and a Poll that resumes where the function last waited;
// no goroutine waits for it. Its Cancel cancels the future it waits on and
// runs its deferred calls. Loops, if, switch, defer and returns work as in
// Go; the package github.com/blitz-go/blitz/asyncgen lists what the
// generator accepts, and it refuses the rest with the position and what to
// write instead.
//
// Compose it. The future package's combinators build futures from futures
// without a line of Poll: future.Map and future.Then chain steps,
// future.JoinAll and future.TryJoinAll run futures concurrently and collect
// their results, future.Race and future.Select take the first to finish and
// cancel the others, and Timeout and Deadline bound anything in time. See
// Example_combinators.
//
// Write it as a small state machine, as the generator does, where an async
// function does not fit. A struct holds the state that would live across an
// await; Poll advances it as far as it can and returns false when it must
// wait, after registering cx.Waker() with whatever it waits for (a
// SleepFuture, a JoinHandle and every future of this module do that
// themselves when polled). Sub-futures that are reused, such as a
// SleepFuture or a YieldFuture, are embedded by value, so the task allocates
// once. See Example_stateMachine.
//
// Wrap a function: future.PollFn turns a closure into a future, for the
// small cases.
//
// # Tasks and goroutines
//
// From goroutine code to task code: SpawnOn starts a task from any goroutine
// and returns its JoinHandle, whose Wait(ctx) blocks the goroutine until the
// task finishes; BlockOn(ctx, h, f) polls f on the calling goroutine itself,
// with the runtime's timers and spawner at hand, until it completes.
//
// From task code to goroutine code: a task must never block its worker (no
// time.Sleep, no channel receive, no mutex held for long). BlockOn,
// JoinHandle.Wait, Coordinator.Wait and Shutdown called from a task return an
// error wrapping ErrBlockingInTask instead of blocking (Shutdown still starts
// the shutdown): a task polls the future, the handle or Drained. To run
// blocking code, use Blocking(fn), a future that runs fn on the runtime's
// blocking pool, or SpawnBlocking (see "Blocking calls and files").
// Example_goroutineFromTask shows the pattern underneath: start a goroutine
// from the first poll and have it store the result and wake the task's Waker.
//
// Inside a task, Spawn(cx, f) starts a child on the same worker, ahead of
// its queue (the LIFO stack, or slot: Config.LIFO), so it runs next while
// the parent's data is still in cache; polling the child's JoinHandle waits
// for it.
//
// Tasks share the workers cooperatively, and a budget keeps that fair: in
// one poll a task may complete future.TaskBudget (128) operations on the
// runtime's leaves (socket and file I/O, sleeps, channels, locks, join
// handles); the next one returns not ready and yields the task, so a task
// that loops over a channel that stays ready, or takes a free lock again and
// again, still lets the other tasks run. A task that yields (Yield, or a
// spent budget) runs again after its worker has run its other tasks and
// polled the I/O driver and the timers. future.Unconstrained runs a future
// outside the budget, for the rare loop that must not yield.
//
// A nil future is misuse, answered at the call with an error matching
// ErrNilFuture: the error BlockOn returns, the outcome of the JoinHandle a
// spawn returns, the result of Blocking, Timeout and Deadline, or the panic
// value of a future combinator, which has no error to return.
//
// # Cancellation
//
// A Go future cannot be dropped the way a Rust one is, so abandoning one is
// explicit: future.Cancel(f) makes it deregister whatever it registered (a
// SleepFuture leaves the timer wheel at once). Every combinator that
// abandons a future cancels it: a Timeout that expires cancels its inner
// future, a Race cancels its losers. JoinHandle.Cancel cancels a task: it is
// aborted by the next worker to see it (after its current poll if it is
// running, after its last shield if it is shielded), its future's Cancel
// runs and its handle reports ErrCancelled. A JoinHandle abandoned by a
// combinator cancels its task; Detach it first to let it run on.
//
// Shield(f) marks a section that a cancel must not cut (a commit to disk, a
// reply half written): a cancel of the task requested while f runs, from a
// JoinHandle, a JoinSet or the runtime's Shutdown, takes effect when f
// completes. Shutdown waits for shields as long as its context allows and
// reports the ones it had to cut.
//
// A JoinSet holds a changing group of tasks and returns their outcomes in
// the order they finish (Next); CancelAll and Close cancel them all, so a
// future that owns a set stops its tasks from its own Cancel. Serve runs
// the common server loop on one: it accepts connections, runs a handler
// task per connection, and stops gracefully (stop accepting, wait a grace
// period for the handlers, cancel the rest).
//
// # Panics
//
// A task that panics does not stop the runtime: its JoinHandle reports a
// *PanicError (errors.Is(err, ErrPanicked)) carrying the panic value and the
// stack. A panic no JoinHandle collects (a detached task's, or one in a
// future's Cancel) is counted in Stats and goes to Config.OnPanic, or,
// without one, to the standard logger with its stack, and the program goes
// on. So does the panic of a Waker that the runtime calls to deliver an event
// (a timer, an I/O completion, the end of a blocking call): it is contained
// there, and the other events are delivered. (A Sleep polled outside any
// runtime is timed by time.AfterFunc, where a Waker's panic ends the program
// as any AfterFunc's does.)
//
// # Time
//
// Sleep, SleepUntil, Timeout, Deadline and Interval are timed by the
// runtime's timer wheels, one per worker. A sleep never ends before its
// deadline: deadlines round up to the next tick of Config.TimerTick (250 µs by
// default), and a sleep ends about a tick after its deadline, unless every
// worker is inside a long poll. No worker polls the clock while idle: a
// parked worker sleeps until the next deadline, and a sooner sleep wakes
// one (see "Internals").
//
// A duration of zero or less has passed already: Sleep(0) is ready at its
// first poll. A duration too long for the clock to count (math.MaxInt64)
// never passes: such a Sleep never completes, such a Timeout never fires.
// A Timeout that fires reports ErrTimeout, which also matches
// context.DeadlineExceeded with errors.Is.
//
// A SleepFuture polled with a Context of no runtime (future.Block) falls
// back to a time.AfterFunc timer, so the time futures work anywhere.
//
// Interval delivers ticks start, start+period, ..., each at the first poll
// once its time has come (the first at once for NewInterval), and says with
// its MissedTickBehavior what happens when it is polled late: Burst delivers
// the missed ticks back to back, Skip drops them and rejoins the schedule,
// Delay restarts the schedule from the late tick.
//
// # Networking
//
// Sockets run on the runtime's I/O backend (package
// github.com/blitz-go/blitz/backend): io_uring on Linux when the kernel
// allows it, else epoll (containers often refuse io_uring; the blitz_nouring
// build tag compiles it out); kqueue on darwin and the BSDs; poll(2) on
// illumos, Solaris and AIX (BackendPoll, which any Unix system runs when
// named); IOCP on Windows. Config.Backend forces one, or BackendNone runs
// without I/O; Runtime.Backend reports which one runs. An I/O future
// submits its operation at its first poll, and the completion wakes the
// task: nothing busy-polls, and on Linux a worker waiting for I/O holds no
// OS thread.
//
// ListenTCP, DialTCP, BindUDP, ListenUnix, DialUnix and BindUnixDatagram
// make sockets of the runtime's backend. Their operations return futures
// (AcceptFuture, ConnectFuture, ReadFuture, WriteFuture, WriteAllFuture,
// RecvFromFuture, SendToFuture, ReadPooledFuture) by pointer, ready for
// future.Await and future.Try in an async function or for a field of a
// hand-written state machine (Example_tcpServer is a server written that
// way). Resolve looks a name up on a goroutine of its own; DialTCP resolves
// names itself and tries each address.
//
// A socket has one operation of each direction in flight at a time: one
// read-side (read, receive, accept) and one write-side (write, send,
// connect); a second concurrent one fails with ErrBusy. Split gives a
// stream's two directions to two tasks.
//
// Cancelling a read loses nothing. With a completion backend the kernel
// may already have taken data off the socket into the read's buffer when
// the cancel arrives; the cancelled operation therefore stays with the
// socket until it completes, and the next read of the stream delivers what
// it received (an accept's connection goes to the next accept). So
// Timeout(d, &read) is safe to use in a loop.
//
// Faults are reported, not spun on: errors are *net.OpError values that
// match the backend's sentinels (errors.Is(err, backend.ErrConnReset)) and
// the OS code (syscall.ECONNRESET); a closed socket's pending and later
// operations fail with ErrClosed (which matches net.ErrClosed); a read or
// write timeout (SetReadTimeout, SetWriteTimeout, a connect timeout) is a
// net.Error whose Timeout is true, matching os.ErrDeadlineExceeded. An
// accept that finds the process out of descriptors (EMFILE, ENFILE) backs
// off and retries instead of failing (Backoffs counts it). An accept whose
// connection failed before it was taken (the client reset or aborted it:
// ECONNABORTED, or Windows' WSAECONNRESET and WSAENOTCONN) skips it and
// waits for the next one (Metrics.AcceptsSkipped counts them), so an
// accept fails only for its listener.
//
// ReadPooled reads into a buffer of the runtime's read pool
// (Config.ReadBufferCount buffers of Config.ReadBufferSize bytes), taken
// only when data arrives, so a connection waiting for data holds no read
// buffer and costs a small fraction of a goroutine blocked in
// net.Conn.Read. Runtime.PrepareReadPool makes the pool ahead of the first
// pooled read. PollReadPooled is the same read for code that polls (a
// protocol's connection state machine), on the stream's own reused future,
// as PollRead is Read: a connection waiting between messages then keeps
// no future of its own, and CancelRead abandons the read.
//
// NetConn and NetListener adapt streams and listeners to net.Conn and
// net.Listener, for ordinary Go code: net/http, crypto/tls, bufio. Their
// methods block the calling goroutine, try the fast path first, and honour
// deadlines by cancelling the operation in flight (and waiting for it, so the
// caller's buffer is free when Read returns). They pass x/net's
// nettest.TestConn. The price of the crossing: a goroutine that must wait for
// data is woken by the worker that collected the completion, so the adapter
// is slower than Go's own netpoller for request-response traffic; write new
// code as tasks to get the runtime's speed (Example_netListener shows the
// adapter).
//
// # TLS
//
// A TLSStream is crypto/tls run by the task that polls it: the handshake
// starts at the first Handshake, read or write, and records are encrypted
// and decrypted in the task's polls, so a connection waiting for data holds
// no goroutine (and over TCP or Unix, no read buffer either). DialTLS
// connects and runs the client handshake; ListenTLS, or NewTLSListener over
// a TCPListener or UnixListener, accepts TLS servers; TLSClient and
// TLSServer wrap any TLSTransport. A TLSStream is an AsyncReader and
// AsyncWriter, so the helpers of "Streams" work on it; a cancelled read
// loses nothing, and cancelling the future that drives the handshake fails
// the stream with ErrTLSHandshakeCancelled. See Example_tlsServer.
//
// # Streams
//
// AsyncReader and AsyncWriter are the async io.Reader and io.Writer: a
// PollRead or PollWrite method that is ready with a count (io.EOF at the
// end of a stream) or pending with the caller's waker registered, and a
// CancelRead or CancelWrite. TCPStream, UnixStream and their split halves,
// File, ChildOutput and ChildStdin implement them, and so does every
// wrapper below, so the wrappers compose.
//
// The rule that makes a poll-based read safe on a completion backend
// (io_uring, IOCP), where the kernel writes into the buffer after the
// poll returned: a pending read is continued, into the buffer of the call
// that started it, by the next PollRead, which must pass the same buffer;
// the buffer belongs to the reader until a PollRead is ready or CancelRead
// returns. Every helper keeps it by not touching its buffer while a read
// is pending (BufReader compacts only between reads, ReadToEnd grows only
// between reads). A cancelled read loses nothing: sockets deliver what a
// cancelled read received to the next one, pipes and FromIOReader keep it
// in their own buffer, BufReader keeps the bytes a cancelled ReadLine had
// gathered.
//
// On top: Read and Write (one poll as a future, for select and timeouts),
// ReadFull, ReadToEnd, WriteAll, Copy and CopyBuffer, LimitReader, all
// returning a *StreamFuture; BufReader (Read, ReadBytes, ReadString,
// ReadLine with a line-length bound) and BufWriter (Write, WriteString,
// Flush; Copy flushes one at the end). For goroutine code, AsIOReader and
// AsIOWriter make an io.Reader and io.Writer of any stream (their calls
// wait on the calling goroutine and stop when a context.Context is done;
// a File or a pipe remembers its runtime, whose pool serves those calls),
// and FromIOReader and FromIOWriter make streams for tasks of any
// io.Reader or io.Writer, whose calls run on the blocking pool.
//
// # Blocking calls and files
//
// Blocking(fn) is a future that runs fn on the runtime's blocking pool
// (module blocking: threads started on demand up to Config.BlockingThreads,
// 512 by default, leaving after Config.BlockingIdleTimeout, 10 s) and
// resolves to fn's value and error; SpawnBlocking(h, fn) runs one as a task
// and returns its JoinHandle. A panic in fn reaches the task (and so the
// JoinHandle) as a *PanicError with fn's own stack. Runtime.Shutdown
// rejects the calls still queued and waits, as long as its context allows,
// for those running.
//
// Open, Create and OpenFile return futures of a *File, whose operations are
// futures too, with os.File's results and *fs.PathError errors. Sync, Stat
// and Truncate return a FileOpFuture, cancellable like the others; a
// cancelled open closes the descriptor it got anyway, and a cancelled Close
// still closes. ReadFile, WriteFile and AppendFile do a whole file.
//
// On io_uring the file operations are io_uring operations on the ring of the
// worker that polls them: the open (openat), the data operations (Read,
// Write, ReadAt, WriteAt, ReadvAt, WritevAt), Sync (fsync), Stat (statx, its
// Sys() a *syscall.Stat_t as os.File.Stat's), Truncate (ftruncate, Linux 6.9
// and later) and Close (close, once the ring's operations in flight on the
// file have completed). A file the ring opened is owned by its File (an
// unclosed one is closed by the garbage collector, as an os.File is) until
// File.OS hands the descriptor to an *os.File, whose Close then closes it. A
// cached read skips the ring: preadv2 with RWF_NOWAIT copies the page-cache
// data at once and the ring takes only the misses. What the ring does not
// take runs on the blocking pool as the os call: Truncate on an older
// kernel, an open with flags beyond O_RDONLY, O_WRONLY, O_RDWR, O_CREATE,
// O_EXCL, O_TRUNC and O_APPEND (that file is then an os.File's), anything
// the ring refuses. SeekTo always runs there, and so does every directory
// operation (ReadDir, MkdirAll, Remove, RemoveAll, Rename, Link, Symlink,
// Readlink, Stat, Lstat, Chmod, Canonicalize) and, on the other backends,
// every file operation. io_uring tries an open without blocking first, so a
// FIFO opened read-only through the ring does not wait for a writer (see
// OpenFile).
//
// # Processes
//
// Command builds a Cmd (arguments, environment, directory, and for each
// standard stream Inherit, the default, Null or Piped); Spawn starts it on
// the blocking pool, since fork and exec can take milliseconds, and resolves
// to a Child. Child.Wait is a future of its ExitStatus (Code, Success,
// Signal), cached so that every wait sees the same one; it first closes a
// piped stdin, as Tokio does, so that a child reading to the end of its input
// does not wait for a parent waiting for it. On Linux with an I/O backend the
// wait holds no thread: a pidfd of the child (pidfd_open) is polled through
// the backend like a socket, and once it is readable the child is reaped at
// once. Elsewhere (other systems, BackendNone, a kernel that refuses
// pidfd_open) the wait runs on the blocking pool. Kill sends SIGKILL
// (TerminateProcess on Windows); Output reads the piped stdout and stderr
// concurrently, so a child filling both pipes cannot deadlock, and waits.
// Every stream is an *os.File, so os/exec starts no goroutine of its own.
// Pipe reads and writes (ChildOutput.Read and ReadAll, ChildStdin.Write) run
// on the blocking pool. They lose nothing to a cancellation: a read fills the
// ChildOutput's buffer, from which the next read takes what a cancelled one
// got, and a cancelled write that the pool already runs still goes out, in
// order, before the writes after it. A spawned process must be waited for, as
// with os/exec; a Spawn cancelled after the process started kills and reaps
// it.
//
// # Signals
//
// Signals(sigs...) returns a SignalStream whose Next is a future of the
// next signal; Signal(sigs...), Interrupt, Terminate and Hangup are
// one-shot futures of the first such signal after the call. None needs a
// runtime, so a program passes one to the future it runs:
//
//	blitz.Run(ctx, serveAsync(addr, blitz.Interrupt()))
//
// Every listener receives every signal of its set dispatched while it is
// registered: two streams of SIGHUP both see each SIGHUP, and none steals
// from another. A stream buffers 16 signals between Nexts; beyond that a
// burst coalesces, as the kernel coalesces a pending signal, keeping at
// least one of each kind (Dropped counts what it lost). Listeners register
// at creation, so a signal sent once the constructor returned is caught,
// even before the first poll. A listener belongs to the first runtime that
// polls one of its futures (a task, or BlockOn), for good; that runtime's
// shutdown closes it with an error wrapping ErrSignalStreamClosed and
// ErrShutdown. One no runtime polled belongs to none: it stays registered
// until the stream's Close or the future's Cancel (or, for a one-shot
// future, its signal). A signal that no listener wants any more gets its
// default action back. On Windows only os.Interrupt and SIGTERM arrive, and
// Hangup fails with errors.ErrUnsupported.
//
// # Graceful shutdown
//
// A Coordinator, independent of Runtime.Shutdown, drains a server's work:
// in-flight work holds a Guard, Trigger (or the first of some signals, with
// TriggerOnSignal) refuses new guards with ErrShuttingDown, and Wait (for
// goroutines) or Drained (for tasks) returns once it was triggered and every
// guard was released, or, when its context or timeout ends first, a Report
// naming the guards still held with an error wrapping ErrShutdownTimeout.
// Tasks select on WhenTriggered; goroutines on Done. The usual order is
// Trigger, Wait, then Runtime.Shutdown. See ExampleCoordinator.
//
// # Shutdown
//
// Shutdown refuses new spawns (a later SpawnOn returns a handle that reports
// ErrShutdown), lets each worker finish the poll it is in, then cancels every
// task left, wherever it is (a queue, a LIFO slot, idle on a waker), so that
// every JoinHandle resolves, and returns once every goroutine the runtime
// started has returned. A BlockOn in progress returns ErrShutdown. From its
// start, new sockets, files and processes are refused with ErrShutdown; the
// operations of the runtime's sockets fail with an error matching ErrClosed
// (and net.ErrClosed) and ErrShutdown, those of its files with an
// *fs.PathError matching fs.ErrClosed and ErrShutdown, and closing either
// still releases it. Every SignalStream and one-shot signal future that
// the runtime polled is closed by the time Shutdown returns.
//
// # Task identity and dumps
//
// A goroutine dump shows a runtime's workers, not its tasks; these show
// the tasks. Every task has an id, unique in its runtime (JoinHandle.ID,
// and TaskID(cx) inside the task), knows the task that spawned it, its
// age and its number of polls. Name a task by wrapping its future,
// Spawn(cx, Named("conn", f)), or from inside it, SetTaskName(cx, "conn")
// (for the Value spawns, which Named cannot wrap).
//
// Dump writes the live tasks as a goroutine dump writes goroutines, tasks
// in the same state waiting on the same kind of thing with the same name
// and spawn site grouped with their count; DumpEach writes one stanza per
// task; Tasks returns them as values; DumpOnSignal writes the dump when
// the process gets a signal the program chooses (syscall.SIGUSR1, say):
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
//		age 8s, polls 4
//
// What a task waits on is recorded by the future it waits in: sleeps
// ("Sleep until 12:00:03.100"), JoinHandles ("JoinHandle task 7"),
// JoinSet.Next, socket operations ("I/O recv fd 12"), and the futures of
// the syncprim and channels packages ("Mutex.Lock", "Oneshot.Recv",
// "Notify.Notified", ...); a future of your own records its wait with
// future.Context.Waiting. "idle" is the time since the task's last poll,
// about how long it has waited. Listed are the live tasks, those waiting
// for their first poll as queued; only the few queued behind a long poll
// (a worker that does not come back to ask) are counted. Ages and idle times are
// accurate to a worker's tick unless Config.PollTiming makes them exact.
//
// Go's own tools see tasks too. With Config.ProfileLabels, each poll runs
// under the task's pprof labels (blitz.task, the name; blitz.task.id), so
// that a CPU profile (go tool pprof -tagfocus blitz.task=conn) attributes
// time to tasks. While the execution tracer runs (runtime/trace, or
// /debug/pprof/trace), each task is a trace task and each poll a
// "blitz.poll" region in it, which go tool trace shows per task, unless
// Config.NoTraceRegions. Config.SpawnSites records each spawn's file:line
// for the dump.
//
// Ids, parents, ages, poll counts and waits are always kept, at a small
// cost; spawn sites, poll timing and labels cost much more and are off by
// default (see the Config fields).
//
// # Statistics and metrics
//
// Stats returns the scheduler's counters (spawned, polled, stolen, parked,
// live tasks, panics, cancellations, per-worker figures) and the number of
// pending timers. Metrics returns those and the rest of the runtime's
// figures: each worker's counters and local queue, the global queue, the
// blocking pool (goroutines, idle, queued, calls run, panics), each I/O
// ring's operations in flight and its operations submitted and finished by
// kind, and the live timers. Metrics.WritePrometheus writes them in the
// Prometheus text exposition format; the package
// github.com/blitz-go/blitz/inspect serves that over HTTP and
// publishes the Metrics as an expvar variable, so that a program importing
// this package links no HTTP server unless it asks for one.
//
// # Internals
//
// How the runtime keeps the promises above is told for contributors in
// https://github.com/blitz-go/blitz/blob/main/docs/design/runtime-internals.md:
// how workers collect I/O completions and run the timers, how they park (a
// worker waiting for I/O on io_uring or epoll parks in Go's own network
// poller; on kqueue, poll and IOCP it blocks in a system call), the one
// ring per worker (Config.IORings) on which each socket stays for its
// life, what happens to a cancelled operation, and the process-wide signal
// dispatcher.
package blitz
