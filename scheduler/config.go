package scheduler

import (
	"fmt"
	"runtime"
	"time"

	"github.com/blitz-go/blitz/future"
)

// The scheduler's constants.
const (
	// BudgetPerTick is how many polls a worker makes in one tick before it
	// does its maintenance (the driver) and looks at the global queue again.
	// A tick ends sooner when only yielded tasks are left to run. It is not
	// the budget of one poll, which is future.TaskBudget operations.
	BudgetPerTick = 128
	// MaxLIFOPollsPerTick caps the polls taken from the LIFO slot in a tick,
	// so that two tasks waking each other cannot starve the local queue.
	MaxLIFOPollsPerTick = 3
	// GlobalBatchSize is the size of a worker's global batch buffer, the
	// most it takes from the global queue at once.
	GlobalBatchSize = 32
	// MinGlobalInterval and MaxGlobalInterval bound the adaptive number of
	// polls between two looks at the global queue.
	MinGlobalInterval = 8
	MaxGlobalInterval = 255
	// DefaultGlobalInterval is the interval before any task was measured:
	// what tasks of 50 us give.
	DefaultGlobalInterval = 20
	// targetGlobalLatency is the EWMA target: a task in the global queue
	// should wait about this long for a worker to look.
	targetGlobalLatency = time.Millisecond
	// MaxWorkers is the most workers a scheduler may have.
	MaxWorkers = 1 << 16
	// DefaultIdleSpin is Config.IdleSpin's default: about the time a
	// park and the wake-up that ends it cost together, so that a worker
	// spins no longer than parking would have cost it had the work come
	// just after (see the package doc, "Spinning before parking").
	DefaultIdleSpin = 50 * time.Microsecond
	// MaxIdleSpin bounds Config.IdleSpin: a worker spinning longer burns a
	// core for work a timer tick later.
	MaxIdleSpin = time.Millisecond
)

// LIFO modes, for Config.LIFO.
const (
	// LIFOSlot is a single LIFO slot, as Tokio's.
	LIFOSlot = 1
	// LIFOStack is a stack of four slots, and the default: it measured
	// faster on ping-pong and chained spawn (see the package doc, "LIFO
	// slot or stack").
	LIFOStack = 4
	// LIFOOff sends every task woken or spawned by a poll to the back of
	// its worker's local queue, where idle workers steal it, as Tokio's
	// disable_lifo_slot does: for a program whose tasks may block their
	// worker (a long poll), a task they spawn or wake then runs on another
	// worker instead of waiting for the poll to end. It costs the LIFO's
	// speed on chains of spawns (see the package doc).
	LIFOOff = -1
)

// Driver is what a worker runs between ticks and before it parks: the
// runtime's timers (and, later, its I/O completions). It is how the
// scheduler stays ignorant of time and I/O.
type Driver interface {
	// Maintain fires whatever is due, waking tasks through cx.Wake, and
	// returns how long until something else is due, or a negative duration
	// if nothing is pending. It is called by a worker at the start of each
	// tick and before it parks, on the worker's goroutine, with the
	// worker's Context; several workers may call it at once.
	Maintain(cx *future.Context) time.Duration
}

// Blocker is a Driver that can hold a parked worker in a wait of its own:
// the runtime's I/O driver, whose wait is the backend's (epoll_wait,
// io_uring_enter, ...), so that an I/O completion, the next timer deadline
// and a new task all end the same sleep. At most one worker holds the
// blocker at a time; the others park on their channels. See the package
// doc, "Parking in the driver".
type Blocker interface {
	Driver
	// TryAcquire makes worker id the one that blocks in the driver, about
	// to sleep for up to timeout (negative: no limit), or returns false if
	// another worker is, or if the driver has nothing a worker must wait
	// for (no I/O in flight): the worker then parks on its channel, which
	// costs less to wake, and the driver brings it back with
	// Scheduler.NotifyWorker when it gets something to wait for. A driver
	// made of parts (the runtime's per-worker io_uring rings) may admit one
	// holder per part: then several workers hold it at once, each in its
	// own part. Called by a worker about to park, after it announced itself
	// parked.
	TryAcquire(id int, timeout time.Duration) bool
	// Covers reports whether the worker holding the blocker will wake
	// within timeout (negative: ever), making it so if it can (by waking
	// it to recompute its timeout), so that a worker parking beside it may
	// sleep without a timeout of its own. False means the caller must keep
	// its timeout. Called by a worker whose TryAcquire failed.
	Covers(timeout time.Duration) bool
	// Block waits in the driver for up to timeout (negative: no limit),
	// handling what it finds with cx (waking tasks through cx.Wake), and
	// reports whether it woke any task. It must return promptly when
	// Unpark(id) is called for the worker that holds the blocker, and an
	// Unpark that comes before Block must make it return at once. Called
	// only by the worker that holds the blocker.
	Block(cx *future.Context, timeout time.Duration) bool
	// Release gives the blocker up; worker id held it.
	Release(id int)
	// Unpark wakes worker id if it is blocked in Block, and does nothing
	// otherwise. Called by whoever claims a parked worker (any goroutine);
	// it must not block.
	Unpark(id int)
}

// Config configures a Scheduler. The zero Config is valid: GOMAXPROCS
// workers, the four-slot LIFO stack, no live-task limit, no driver.
type Config struct {
	// Workers is the number of worker goroutines, 1 to MaxWorkers; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int
	// LIFO is LIFOStack (0 means it), LIFOSlot or LIFOOff.
	LIFO int
	// MaxLiveTasks bounds the tasks that TrySpawn admits (spawned and not
	// yet complete); 0 means no bound. Spawn is
	// not bounded by it. See the package doc, "Backpressure".
	MaxLiveTasks int
	// Driver, if not nil, is run by the workers (see Driver). If it is
	// also a Blocker, one parked worker sleeps in it.
	Driver Driver
	// Services is returned by Executor.Services, for the runtime module's
	// futures to find its timers and I/O through a Context.
	Services any
	// OnPanic, if not nil, is called with every panic that no JoinHandle
	// collects: a task that panicked after its JoinHandle was detached, a
	// future's Cancel that panicked when nobody holds its task's handle,
	// and the panics a Driver contains and reports (ReportPanic). It runs
	// on the goroutine that caught the panic, usually a worker; it must not
	// block. Panics of tasks with a JoinHandle go to the handle. When
	// OnPanic is nil, those panics are written with their stacks to the
	// standard logger (log.Printf) and the program goes on.
	OnPanic func(*PanicError)
	// LockOSThreads makes each worker goroutine keep one OS thread for its
	// life (runtime.LockOSThread). A locked worker costs more to park on
	// its channel (its thread sleeps with it, and Go hands its P to
	// another thread), so it is off by default and the runtime does not set
	// it; it is for a Driver whose kernel state is tied to the thread that
	// made it.
	LockOSThreads bool
	// IdleSpin is how long a worker that has just run tasks goes on
	// looking for more before it parks: it runs the Driver (collecting
	// the I/O completions and the timers due) and looks at the queues,
	// giving its thread to other goroutines between two looks. A worker
	// spins once per spell of work, so an idle scheduler does not spin,
	// and the spin counts as parked time in Stats. Under load, the spin
	// saves the park and the wake-up (two context switches) that work
	// arriving a few microseconds later would cost; under a light load it
	// costs up to IdleSpin of CPU per spell, and a server saturated by
	// many connections spends more CPU per request with it than without
	// (see the package doc, "Spinning before parking"). 0 means
	// DefaultIdleSpin; a negative value turns spinning off; at most
	// MaxIdleSpin.
	IdleSpin time.Duration

	// The task identity switches (see the package doc, "Task identity").
	// Ids, parents, ages, poll counts and waits cost little and are always
	// kept unless NoTaskIdentity; each of the others costs more and is off
	// by default, except NoTraceRegions, whose regions cost only while the
	// execution tracer runs.

	// SpawnSites records where each task was spawned (the caller of the
	// spawn function), which Dump shows as file:line: a runtime.Callers
	// and a small allocation per spawn.
	SpawnSites bool
	// PollTiming measures every poll (two clock reads), for the total poll
	// time Dump shows, and makes the ages and wait times Dump shows exact
	// rather than accurate to a worker's tick.
	PollTiming bool
	// SlowPoll is the duration from which a poll counts as slow, with
	// PollTiming: Stats counts the slow polls and keeps the latest with
	// their task's id and name. 0 means DefaultSlowPoll.
	SlowPoll time.Duration
	// FailedTasksKept is how many of the latest tasks that panicked or were
	// cancelled the scheduler keeps after their end, for the dumps
	// (FailedTasks): 0 means DefaultFailedTasksKept, a negative number
	// none. Keeping one costs a lock when a task fails, nothing otherwise.
	FailedTasksKept int
	// ProfileLabels runs every poll under the task's pprof labels
	// (blitz.task, its name, and blitz.task.id), so that a CPU profile
	// attributes the time to tasks: two runtime/pprof.SetGoroutineLabels
	// per poll, and the label set made once per task.
	ProfileLabels bool
	// NoTraceRegions turns off the execution tracer's view of tasks:
	// without it, while runtime/trace runs, each task is a trace task
	// and each poll a region in it.
	NoTraceRegions bool
	// NoTaskIdentity turns off the ids and the bookkeeping Dump reads (ids,
	// parents, ages, poll counts, waits), to measure what they cost:
	// JoinHandle.ID is then 0 and Dump shows less.
	NoTaskIdentity bool

	// Chooser, when set, makes a driven scheduler, for deterministic
	// simulation: one worker and no goroutine; whoever made the scheduler
	// polls its tasks one Step at a time, and Chooser picks which ready
	// task each Step polls (see the package doc, "Driven schedulers").
	// Workers must then be 0 or 1, and task identity stays on (the Chooser
	// sees task ids).
	Chooser Chooser
}

// withDefaults validates c and fills in the defaults.
func (c Config) withDefaults() (Config, error) {
	if c.Chooser != nil {
		if c.Workers > 1 {
			return c, fmt.Errorf("%w: Workers = %d with a Chooser, want 0 or 1", ErrConfig, c.Workers)
		}
		c.Workers = 1
		c.NoTaskIdentity = false
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Workers < 1 || c.Workers > MaxWorkers {
		return c, fmt.Errorf("%w: Workers = %d, want 1 to %d", ErrConfig, c.Workers, MaxWorkers)
	}
	if c.LIFO == 0 {
		c.LIFO = LIFOStack
	}
	if c.SlowPoll < 0 {
		return c, fmt.Errorf("%w: SlowPoll = %v, want 0 or more", ErrConfig, c.SlowPoll)
	}
	if c.FailedTasksKept == 0 {
		c.FailedTasksKept = DefaultFailedTasksKept
	}
	if c.SlowPoll == 0 {
		c.SlowPoll = DefaultSlowPoll
	}
	if c.LIFO != LIFOSlot && c.LIFO != LIFOStack && c.LIFO != LIFOOff {
		return c, fmt.Errorf("%w: LIFO = %d, want %d (stack), %d (slot) or %d (off)", ErrConfig, c.LIFO, LIFOStack, LIFOSlot, LIFOOff)
	}
	if c.IdleSpin > MaxIdleSpin {
		return c, fmt.Errorf("%w: IdleSpin = %v, want at most %v", ErrConfig, c.IdleSpin, MaxIdleSpin)
	}
	if c.IdleSpin == 0 {
		c.IdleSpin = DefaultIdleSpin
	}
	if c.MaxLiveTasks < 0 {
		return c, fmt.Errorf("%w: MaxLiveTasks = %d, want >= 0", ErrConfig, c.MaxLiveTasks)
	}
	return c, nil
}
