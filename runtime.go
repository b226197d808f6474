package blitz

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/blocking"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/internal/iodriver"
	"github.com/blitz-go/blitz/internal/timerdriver"
	"github.com/blitz-go/blitz/scheduler"
)

// DefaultTimerTick is Config.TimerTick's default, the resolution of the
// runtime's timers.
const DefaultTimerTick = 250 * time.Microsecond

// DefaultIdleSpin is Config.IdleSpin's default, and MaxIdleSpin its
// largest value.
const (
	DefaultIdleSpin = scheduler.DefaultIdleSpin
	MaxIdleSpin     = scheduler.MaxIdleSpin
)

// Config configures a Runtime. The zero Config is valid.
type Config struct {
	// Workers is the number of worker goroutines; 0 means GOMAXPROCS.
	Workers int
	// TimerTick is the resolution of Sleep and the other timers: a sleep
	// ends between 0 and one tick (plus scheduling) after its deadline,
	// never before. 0 means 250 us; at least 10 us. A coarser tick fires
	// more timers at once and wakes the workers less often: 1 ms (Tokio's
	// resolution) costs a quarter to two fifths less CPU where thousands of
	// sleeps end every second, for a lateness four times as long.
	TimerTick time.Duration
	// MaxLiveTasks bounds the tasks TrySpawn admits (backpressure); 0 means
	// no bound.
	MaxLiveTasks int
	// IdleSpin is how long a worker that has just run tasks goes on
	// looking for more (its I/O completions, timers, the queues) before it
	// parks, giving its thread to other goroutines between looks: under
	// load it saves a park and a wake-up, two context switches, each time
	// work comes within it; under a light load it costs up to IdleSpin of
	// CPU per spell of work. An idle runtime does not spin. It pays most
	// with few connections; a server saturated by many spends more CPU
	// per request with it (an echo server 6 to 11 % more per round trip)
	// and may turn it off. 0 means DefaultIdleSpin (50µs); a negative
	// value turns it off; at most MaxIdleSpin (1ms).
	IdleSpin time.Duration
	// LIFO selects where a task woken or spawned by a task waits to run
	// next on the same worker: a stack of four tasks (scheduler.LIFOStack,
	// the default, 0) or a single slot (scheduler.LIFOSlot); or none
	// (scheduler.LIFOOff), for a program whose tasks may block their
	// worker: what they spawn or wake then goes where other workers can
	// run it. See the scheduler package, "LIFO slot or stack".
	LIFO int
	// OnPanic is called with every panic that no JoinHandle collects: that
	// of a detached task (one whose JoinHandle was detached), of a future's
	// Cancel when nobody holds its task's handle, and of a Waker that
	// panicked when the runtime called it to deliver an event (the I/O or
	// timer driver, the blocking pool, a name lookup). A worker contains
	// such a panic and goes on (every other Waker of the same batch is
	// still called); the panic is counted in Stats.Panicked. OnPanic runs
	// on the goroutine that caught the panic, usually a worker, and must
	// not block. When it is nil, those panics are written with their
	// stacks to the standard logger (log.Printf).
	OnPanic func(*PanicError)
	// Backend selects the I/O backend: BackendAuto (the zero value) picks
	// the platform's best (io_uring on Linux when the kernel allows it,
	// else epoll; kqueue on darwin and the BSDs; poll(2) on illumos,
	// Solaris and AIX; IOCP on Windows); the other Backend constants force
	// one (BackendPoll runs on every Unix system, where it serves to test
	// and compare), and BackendNone runs without I/O. A forced backend
	// that cannot start, or that the platform lacks, is an error wrapping
	// ErrBackend.
	Backend string
	// ReadBufferCount and ReadBufferSize shape the pool that pooled reads
	// (ReadPooled) take their buffer from when data arrives, so that a
	// connection waiting for data holds no buffer: a power of two up to
	// 32768 buffers (default 1024) of up to 1 MiB (default 4096 bytes). The
	// pool is made on the first pooled read, and holds memory for the
	// reads in flight, not for ReadBufferCount. With io_uring it is a
	// provided-buffer ring the kernel picks from, which starts with 64
	// buffers, doubles when the kernel runs low, and after a burst gives
	// the pages of what it no longer needs back to the system once its
	// ring's worker has gone idle; the other backends emulate it, use the
	// lowest buffers first, make them 64 at first and then in chunks as
	// large as all before, and give back the pages of the buffers a burst
	// left untaken for a quarter of a second, all but 16, when a worker is
	// about to sleep.
	ReadBufferCount, ReadBufferSize int
	// IORings is the number of backend instances (rings) the I/O runs on,
	// 1 to Workers; 0 means one per worker where the backend can run
	// several (io_uring, epoll), else one. Each worker submits to and
	// sleeps in its own ring, so the kernel's share of the I/O runs on
	// every core; with one ring, one thread at a time is in the kernel for
	// it. A socket stays on the ring it was made on. Backends that run one
	// instance (kqueue, poll, IOCP) ignore it.
	IORings int
	// BlockingThreads caps the blocking pool's threads (SpawnBlocking,
	// Blocking, the file system calls that have no async form); 0 means
	// blocking.DefaultMaxThreads (512).
	BlockingThreads int
	// BlockingIdleTimeout is how long an idle blocking thread lingers
	// before it exits; 0 means blocking.DefaultIdleTimeout (10 s).
	BlockingIdleTimeout time.Duration
	// The task identity switches (see "Task identity and dumps" in the
	// package doc). Ids, parents, ages, poll counts and what tasks wait on
	// are always kept; what costs more is off unless asked for.
	//
	// SpawnSites records the file:line of each spawn for Dump (a
	// runtime.Callers and a small allocation per spawn). PollTiming
	// measures each poll (two clock reads) for Dump's poll times and for
	// Metrics' poll-duration histogram and slow polls (those of SlowPoll
	// or longer; 0 means scheduler.DefaultSlowPoll, 1ms).
	// ProfileLabels runs each poll under the task's pprof labels
	// (blitz.task, its name; blitz.task.id), so that CPU profiles
	// attribute time to tasks. NoTraceRegions stops tasks from showing in
	// the execution tracer (runtime/trace), where each task is otherwise a
	// trace task and each poll a region in it, at a cost only while the
	// tracer runs.
	SpawnSites, PollTiming, ProfileLabels, NoTraceRegions bool
	SlowPoll                                              time.Duration
	// FailedTasksKept is how many of the latest tasks that panicked or
	// were cancelled the dumps keep showing after their end (FailedTasks):
	// 0 means scheduler.DefaultFailedTasksKept (32), a negative number
	// none.
	FailedTasksKept int
	// Simulation, when set, makes a runtime that a deterministic simulator
	// drives (see Simulation); a program gets such a Config from the
	// simulator and passes it on. Workers, IORings and Backend are then
	// ignored: the runtime has one worker and the simulator's I/O.
	Simulation Simulation
	// noTaskIdentity turns the ids and the dump's bookkeeping off, for the
	// benchmarks that measure their cost (task_export_test.go).
	noTaskIdentity bool
}

// The names of Config.Backend.
const (
	BackendAuto   = ""
	BackendURing  = "uring"
	BackendEpoll  = "epoll"
	BackendKqueue = "kqueue"
	BackendPoll   = "poll"
	BackendIOCP   = "iocp"
	BackendNone   = "none"
)

// Runtime is a running instance: the scheduler's workers and the timers
// they drive. Make one with New, hand its Handle to whoever spawns, and shut
// it down with Shutdown.
type Runtime struct {
	sched  *scheduler.Scheduler
	timers *timerdriver.Driver
	// io is the I/O driver, nil with BackendNone.
	io *iodriver.Driver
	// rings are the I/O driver's rings as the sockets see them, in index
	// order; nil with BackendNone. Immutable after New.
	rings []*ioRing
	// backendName is the backend's Name, or BackendNone.
	backendName string
	// closeIO closes the backend once, after the scheduler stopped.
	closeIO sync.Once
	// pool runs blocking calls off the workers. It starts no goroutine
	// until the first call.
	pool *blocking.Pool
	// blockingRejected counts the blocking calls the pool refused (after
	// its shutdown) or rejected from its queue at Shutdown, for Metrics.
	blockingRejected atomic.Uint64
	// down is set once, first thing in Shutdown: from then on new sockets
	// and processes are refused with ErrShutdown and the operations of
	// existing sockets fail (see netFD.use). Loaded by any goroutine.
	down atomic.Bool
	// sim is Config.Simulation, nil for a runtime of the real world.
	// Immutable.
	sim Simulation
}

// New starts a runtime. It returns an error wrapping ErrConfig (or the
// scheduler's scheduler.ErrConfig) for an invalid Config.
//
// The workers start here, not at the first spawn: a runtime nobody uses
// costs one parked goroutine per worker (no OS thread, no wake-up: its
// workers park without a timeout while no timer is pending) and about
// 100 KB of queues and buffers, and starting them later would put a check
// on every spawn.
func New(cfg Config) (*Runtime, error) {
	if cfg.TimerTick == 0 {
		cfg.TimerTick = DefaultTimerTick
	}
	if cfg.TimerTick < 10*time.Microsecond {
		return nil, fmt.Errorf("%w: TimerTick = %v, want at least 10us", ErrConfig, cfg.TimerTick)
	}
	if cfg.Simulation != nil {
		cfg.Workers, cfg.IORings = 1, 1
	}
	workers := cfg.Workers
	if workers == 0 {
		workers = goruntime.GOMAXPROCS(0)
	}
	if workers < 1 || workers > scheduler.MaxWorkers {
		return nil, fmt.Errorf("%w: Workers = %d", ErrConfig, cfg.Workers)
	}
	if cfg.ReadBufferCount == 0 {
		cfg.ReadBufferCount = 1024
	}
	if cfg.ReadBufferSize == 0 {
		cfg.ReadBufferSize = 4096
	}
	if c := cfg.ReadBufferCount; c < 1 || c > 32768 || c&(c-1) != 0 {
		return nil, fmt.Errorf("%w: ReadBufferCount = %d, want a power of two from 1 to 32768", ErrConfig, c)
	}
	if sz := cfg.ReadBufferSize; sz < 1 || sz > 1<<20 {
		return nil, fmt.Errorf("%w: ReadBufferSize = %d, want 1 to 1 MiB", ErrConfig, sz)
	}
	if n := cfg.IORings; n < 0 || n > workers {
		return nil, fmt.Errorf("%w: IORings = %d, want 0 to Workers (%d)", ErrConfig, n, workers)
	}
	pool, err := blocking.New(blocking.Config{MaxThreads: cfg.BlockingThreads, IdleTimeout: cfg.BlockingIdleTimeout})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	rt := &Runtime{timers: timerdriver.New(workers, cfg.TimerTick), backendName: BackendNone, pool: pool, sim: cfg.Simulation}
	var drv scheduler.Driver = rt.timers
	var chooser scheduler.Chooser
	if sim := cfg.Simulation; sim != nil {
		chooser = sim.Chooser()
		if b := sim.Backend(); b != nil {
			rt.io = iodriver.New([]backend.Backend{b}, workers, cfg.ReadBufferCount, cfg.ReadBufferSize)
			rt.rings = newIORings(rt)
			rt.backendName = b.Name()
			drv = blockingDriver{timers: rt.timers, Driver: rt.io}
		}
	} else if cfg.Backend != BackendNone {
		bs, err := iodriver.OpenBackends(cfg.Backend, cfg.IORings, workers)
		if err != nil {
			return nil, err
		}
		if bs != nil {
			rt.io = iodriver.New(bs, workers, cfg.ReadBufferCount, cfg.ReadBufferSize)
			rt.rings = newIORings(rt)
			rt.backendName = bs[0].Name()
			drv = blockingDriver{timers: rt.timers, Driver: rt.io}
		}
	}
	s, err := scheduler.New(scheduler.Config{
		Workers:      workers,
		LIFO:         cfg.LIFO,
		MaxLiveTasks: cfg.MaxLiveTasks,
		IdleSpin:     cfg.IdleSpin,
		Driver:       drv,
		Services:     rt,
		OnPanic:      cfg.OnPanic,

		SpawnSites:      cfg.SpawnSites,
		PollTiming:      cfg.PollTiming,
		SlowPoll:        cfg.SlowPoll,
		FailedTasksKept: cfg.FailedTasksKept,
		ProfileLabels:   cfg.ProfileLabels,
		NoTraceRegions:  cfg.NoTraceRegions,
		NoTaskIdentity:  cfg.noTaskIdentity,
		Chooser:         chooser,
	})
	if err != nil {
		if rt.io != nil {
			rt.io.CloseBackends()
		}
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	rt.sched = s
	if rt.io != nil {
		rt.io.SetScheduler(s)
	}
	rt.timers.SetNotify(s.Notify)
	if io := rt.io; io != nil {
		// A sooner deadline goes to the worker sleeping in the backend, if
		// one is; otherwise an idle worker is woken to look.
		rt.timers.SetNotify(func() {
			if !io.Kick() {
				s.Notify()
			}
		})
	}
	if rt.sim != nil {
		if err := rt.sim.Attach(rt); err != nil {
			_ = s.Shutdown(context.Background())
			if rt.io != nil {
				rt.io.CloseBackends()
			}
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	return rt, nil
}

// Backend returns the name of the runtime's I/O backend ("uring", "epoll",
// "kqueue", "poll", "iocp"), or BackendNone.
func (rt *Runtime) Backend() string { return rt.backendName }

// IORings returns the number of backend instances the I/O runs on (see
// Config.IORings), 0 without I/O.
func (rt *Runtime) IORings() int {
	if rt.io == nil {
		return 0
	}
	return len(rt.rings)
}

// Handle refers to a Runtime: a small value to pass to whoever spawns onto it
// from outside (goroutines, other runtimes). The zero Handle refers to none;
// its uses panic with ErrZeroHandle.
type Handle struct {
	rt *Runtime
}

// Handle returns the runtime's Handle.
func (rt *Runtime) Handle() Handle { return Handle{rt: rt} }

// Runtime returns the runtime h refers to.
func (h Handle) Runtime() *Runtime {
	if h.rt == nil {
		panic(ErrZeroHandle)
	}
	return h.rt
}

// Current returns the Handle of the runtime that makes the poll cx belongs
// to, and false when no runtime does (a goroutine's future.Block).
func Current(cx *future.Context) (Handle, bool) {
	rt, ok := cx.Services().(*Runtime)
	return Handle{rt: rt}, ok
}

// Stats are the runtime's counters: the scheduler's, and the pending timers.
type Stats struct {
	scheduler.Stats
	// Timers is the number of sleeps in the timer wheels.
	Timers int
}

// Stats returns the counters. Any goroutine may call it.
func (rt *Runtime) Stats() Stats {
	return Stats{Stats: rt.sched.Stats(), Timers: rt.timers.Pending()}
}

// Shutdown stops the runtime (see scheduler.Scheduler.Shutdown). Tasks in
// a Shield are cancelled first and the runtime runs on until their shields
// end, or ctx does (those still shielded are then cut, and counted in
// Stats().ShieldsCut). Then: no more
// spawns, workers exit after their current poll, every task left is
// cancelled and its JoinHandle reports ErrShutdown, every BlockOn returns
// ErrShutdown, and every goroutine the runtime started has returned when it
// returns nil. By then every SignalStream and one-shot signal future that
// the runtime polled (that it is bound to) is closed, new sockets and processes are refused with
// ErrShutdown, and the operations of the runtime's sockets fail with an
// error matching ErrClosed (and net.ErrClosed) and ErrShutdown; closing
// them still releases them. If ctx ends first it returns an error wrapping
// ctx's and the shutdown continues; call it again to wait. Any goroutine
// may call it; called from a task, it starts the shutdown and returns an
// error wrapping ErrBlockingInTask at once, and a goroutine calls it again
// to wait for the end.
func (rt *Runtime) Shutdown(ctx context.Context) error {
	return rt.shutdown(ctx, true)
}

// shutdown is Shutdown; without waitBlocking, it returns without waiting
// for the blocking calls still running (they finish on their own threads,
// which exit then), as Run does.
func (rt *Runtime) shutdown(ctx context.Context, waitBlocking bool) error {
	// The shielded tasks finish first, the timers and the I/O still
	// running (from a task, the scheduler's own shutdown does it, later).
	rt.sched.AwaitShields(ctx)
	rt.down.Store(true)
	rt.timers.Close()
	if err := rt.sched.Shutdown(ctx); err != nil {
		return err
	}
	// The signal dispatcher closes the listeners of a finished runtime
	// too, but on its own goroutine, later; close them here so that none
	// is open when Shutdown returns.
	hub.closeRuntime(rt)
	if rt.io != nil {
		rt.closeIO.Do(func() { rt.io.Close(rt.sched) })
	}
	// The tasks are gone, and with them whoever waited for a queued
	// blocking call: those are rejected. Calls already running cannot be
	// stopped; Shutdown waits for them as long as ctx allows.
	if !waitBlocking {
		ended, cancel := context.WithCancel(ctx)
		cancel()
		ctx = ended
	}
	rep, err := rt.pool.Shutdown(ctx, blocking.RejectQueued)
	rt.blockingRejected.Add(uint64(rep.Rejected))
	if err != nil && waitBlocking {
		return fmt.Errorf("blitz: blocking calls still running: %w", err)
	}
	return nil
}
