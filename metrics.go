package blitz

import (
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/internal/iodriver"
	"github.com/blitz-go/blitz/scheduler"
)

// Metrics are the runtime's figures at one moment: the scheduler's (per
// worker and in total), the blocking pool's, the I/O driver's and the
// timers'. Counters count from New; gauges are the value when Metrics read
// them. Each group is read on its own, so the groups are not one atomic
// snapshot (a task may be counted as spawned and not yet as live).
type Metrics struct {
	// Backend is the I/O backend's name (Runtime.Backend).
	Backend string
	// Workers holds each scheduler worker's figures, by worker index.
	Workers []WorkerMetrics
	// Tasks are the task counters.
	Tasks TaskMetrics
	// GlobalQueue is the number of tasks in the global (injection) queue.
	GlobalQueue int
	// Blocking is the blocking pool's (Blocking, SpawnBlocking, file
	// operations on backends without file ops).
	Blocking BlockingMetrics
	// IO holds each I/O ring's figures, by ring index; empty with
	// BackendNone.
	IO []RingMetrics
	// IOWaitErrors counts the backend Waits that failed (other than on a
	// closed backend); none is expected.
	IOWaitErrors uint64
	// AcceptsSkipped counts the connections that failed between their
	// arrival and their accept (the client reset or aborted them first),
	// which the accepts skipped instead of failing (see AcceptFuture).
	AcceptsSkipped uint64
	// Timers are the timer wheels' figures.
	Timers TimerMetrics
	// LongPolls are the polls in progress that have run past the
	// threshold (Config.SlowPoll with Config.PollTiming, which also names
	// their task; else a worker's tick of scheduler.LongTickThreshold),
	// without their stacks (Dump shows those).
	LongPolls []LongPoll
	// Start is when New ran (wall clock), and Uptime the time since, read
	// after the workers' figures.
	Start  time.Time
	Uptime time.Duration `json:"UptimeNs"`
	// PollDurations is the histogram of every worker's poll durations,
	// SlowPolls the count of polls of Config.SlowPoll or longer, and
	// LatestSlowPolls the latest of them (up to 16) with their task's id
	// and name, oldest first; all need Config.PollTiming.
	PollDurations   Histogram
	SlowPolls       uint64
	LatestSlowPolls []SlowPoll
	// SchedulingDelays is the histogram of the delays from a wake to the
	// poll it led to (Config.PollTiming; a task's first poll after its
	// spawn is not counted).
	SchedulingDelays Histogram
}

// SlowPoll is a poll that took Config.SlowPoll or longer: its task's id
// and name, its duration, and when it ended.
type SlowPoll = scheduler.SlowPoll

// LongPoll is a poll in progress that has run past the slow-poll threshold:
// a task holding its worker without yielding (scheduler.LongPoll).
type LongPoll = scheduler.LongPoll

// WorkerMetrics are one worker's counters (published by the worker at the
// end of each tick and before each park) and its queue.
type WorkerMetrics struct {
	// Polls counts the task polls (and aborts) the worker made.
	Polls uint64
	// Spawned counts the tasks spawned by its polls; Completed those that
	// completed in them.
	Spawned, Completed uint64
	// Steals counts its successful steals, Stolen the tasks they moved.
	Steals, Stolen uint64
	// LIFOHits counts polls of a task taken from its LIFO slots.
	LIFOHits uint64
	// GlobalBatches counts its batch pops from the global queue.
	GlobalBatches uint64
	// Parks counts the times it parked; ParkedTime is the time it spent
	// parked (its spins before parking included: Config.IdleSpin), the
	// park in progress included, and BusyTime the rest of the
	// runtime's life (running tasks, its drivers, looking for work), as of
	// the moment Metrics read them: both only grow from one call to the
	// next, and an idle worker's BusyTime stays still.
	Parks      uint64
	ParkedTime time.Duration `json:"ParkedTimeNs"`
	BusyTime   time.Duration `json:"BusyTimeNs"`
	// SlowPolls counts its polls of Config.SlowPoll or longer, and
	// PollDurations is the histogram of its polls' durations; both need
	// Config.PollTiming.
	SlowPolls     uint64
	PollDurations Histogram
	// LocalQueue is its local queue's length.
	LocalQueue int
	// Spins counts the times it spun before parking (Config.IdleSpin);
	// SpinHits the spins that found work, and saved a park.
	Spins, SpinHits uint64
}

// TaskMetrics count tasks.
type TaskMetrics struct {
	// Spawned counts every task started, from workers and from outside.
	Spawned uint64
	// Live is the number of tasks spawned and not yet finished.
	Live int64
	// Panicked counts panics of polls, of Cancels the scheduler called and
	// of Wakers the drivers contained; Cancelled the tasks aborted by
	// JoinHandle.Cancel.
	Panicked, Cancelled uint64
}

// BlockingMetrics are the blocking pool's figures.
type BlockingMetrics struct {
	// Threads is the pool's goroutines alive, Idle those waiting for work.
	Threads, Idle int
	// Queued is the calls waiting for a goroutine.
	Queued int
	// Started counts the goroutines started, Ran the calls run (panicked
	// ones included), Panics the calls that panicked, and Rejected the
	// calls refused after the pool's shutdown or dropped from its queue by
	// Shutdown.
	Started, Ran, Panics, Rejected uint64
}

// RingMetrics are one I/O ring's figures: the operations submitted and
// finished, by kind.
type RingMetrics struct {
	// InFlight is the number of operations submitted and not finished.
	InFlight int64
	// EnterCalls counts the ring's calls into the kernel's queue
	// (io_uring_enter to submit and to wait; epoll_wait or kevent on the
	// reactor backends); 0 on a backend that does not count them (IOCP).
	EnterCalls uint64
	// Ops holds the counts of each kind of operation the ring has seen,
	// in the backend's kind order.
	Ops []OpMetrics
}

// OpMetrics count one kind of operation on one ring.
type OpMetrics struct {
	// Kind is the operation's name ("recv", "accept", "read", ...).
	Kind string
	// Submitted counts the operations submitted, Completed those whose
	// final completion was collected (a multishot operation completes
	// once, at its end).
	Submitted, Completed uint64
}

// InFlight is the number of operations of this kind submitted and not
// finished.
func (o OpMetrics) InFlight() uint64 { return o.Submitted - o.Completed }

// TimerMetrics are the timer wheels' figures.
type TimerMetrics struct {
	// Live is the number of pending sleeps and deadlines.
	Live int
	// Fired counts the sleeps and deadlines fired; Lateness is the
	// histogram of how long after their deadline (rounded up to the
	// wheel's tick, Config.TimerTick) they fired.
	Fired    uint64
	Lateness Histogram
}

// Histogram counts durations in buckets of exponentially growing width
// (scheduler.Histogram): Bounds are the upper bounds, Counts one count per
// bound and a last for the durations above it, Sum their total.
type Histogram = scheduler.Histogram

// opMetrics returns the kinds of c seen, in kind order.
func opMetrics(c *iodriver.OpCounters) []OpMetrics {
	var ops []OpMetrics
	for k := backend.Kind(1); k < iodriver.OpKinds; k++ {
		sub, done := c.Counts(k)
		if sub == 0 {
			continue
		}
		ops = append(ops, OpMetrics{Kind: k.String(), Submitted: sub, Completed: done})
	}
	return ops
}

// Metrics returns the runtime's figures. Any goroutine may call it, at any
// time, also after Shutdown.
func (rt *Runtime) Metrics() Metrics {
	s := rt.sched.Stats()
	m := Metrics{
		Backend:     rt.backendName,
		Workers:     make([]WorkerMetrics, len(s.PerWorker)),
		Tasks:       TaskMetrics{Spawned: s.Spawned, Live: s.Live, Panicked: s.Panicked, Cancelled: s.Cancelled},
		GlobalQueue: s.GlobalQueue,
		Timers:      TimerMetrics{Live: rt.timers.Pending()},
		Start:       s.Start,
		LongPolls:   rt.sched.LongPolls(false),
		Uptime:      s.Uptime,

		PollDurations: s.PollDurations, SlowPolls: s.SlowPolls, LatestSlowPolls: s.LatestSlowPolls,
		SchedulingDelays: s.SchedulingDelays,
	}
	m.Timers.Fired, m.Timers.Lateness = rt.timers.FiredStats()
	for i, w := range s.PerWorker {
		m.Workers[i] = WorkerMetrics{
			Polls: w.Polled, Spawned: w.Spawned, Completed: w.Completed,
			Steals: w.Steals, Stolen: w.Stolen, LIFOHits: w.LIFOHits,
			GlobalBatches: w.GlobalBatches, Parks: w.Parked, LocalQueue: w.LocalQueue,
			ParkedTime: w.ParkedTime, BusyTime: w.BusyTime,
			SlowPolls: w.SlowPolls, PollDurations: w.PollDurations,
			Spins: w.Spins, SpinHits: w.SpinHits,
		}
	}
	b := rt.pool.Stats()
	m.Blocking = BlockingMetrics{
		Threads: b.Threads, Idle: b.Idle, Queued: b.Pending,
		Started: b.Started, Ran: b.Ran, Panics: b.Panics, Rejected: rt.blockingRejected.Load(),
	}
	if rt.io != nil {
		m.IOWaitErrors = rt.io.WaitErrors()
		m.AcceptsSkipped = rt.io.AcceptsSkipped()
		m.IO = make([]RingMetrics, len(rt.io.Rings()))
		for i, r := range rt.io.Rings() {
			m.IO[i] = RingMetrics{InFlight: r.InFlight(), Ops: opMetrics(r.Ops())}
			if c, ok := r.Backend().(backend.EnterCounter); ok {
				m.IO[i].EnterCalls = c.EnterCalls()
			}
		}
	}
	return m
}
