package scheduler

import (
	"runtime"
	"sync/atomic"
	"time"
)

// counters are a worker's plain counters, written only by its goroutine
// (the hot path pays no atomic for them) and copied to publishedCounters at
// the end of each tick and before each park.
type counters struct {
	polled, spawned, completed uint64
	steals, stolen, lifoHits   uint64
	globalBatches, parked      uint64
	slowPolls                  uint64
	spins, spinHits            uint64
}

// publishedCounters is the copy of counters that Stats reads. Stored only by
// the worker's goroutine, loaded by any.
type publishedCounters struct {
	polled, spawned, completed atomic.Uint64
	steals, stolen, lifoHits   atomic.Uint64
	globalBatches, parked      atomic.Uint64
	slowPolls                  atomic.Uint64
	spins, spinHits            atomic.Uint64
	pollHist, schedHist        histoCounters
}

// parkClock is a worker's parked time, kept for Stats to read at any
// moment, the park in progress included, so that the parked and busy times
// it reports only grow. The worker's goroutine writes it under a sequence
// lock: it makes seq odd, reads the clock and changes the fields, makes seq
// even. A reader (parked) reads seq, the fields and the clock, then seq
// again, and retries until both reads give the same even value: its clock
// reading is then a moment at which the fields were true. The worker reads
// the clock only while seq is odd, so a park that begins after a reader's
// second seq read begins after its clock reading too.
type parkClock struct {
	seq atomic.Uint64
	// done is the time, in nanoseconds, of the parks that ended.
	done atomic.Int64
	// since is when the park in progress began, in nanoseconds since the
	// scheduler's epoch; -1 when the worker is not parked.
	since atomic.Int64
}

// begin records, on the worker's goroutine, that a park begins now.
func (c *parkClock) begin(s *Scheduler) {
	c.seq.Add(1)
	c.since.Store(s.now())
	c.seq.Add(1)
}

// end records, on the worker's goroutine, that the park in progress ends
// now.
func (c *parkClock) end(s *Scheduler) {
	c.seq.Add(1)
	c.done.Add(s.now() - c.since.Load())
	c.since.Store(-1)
	c.seq.Add(1)
}

// parked returns the time parked so far, the park in progress included,
// and the moment (nanoseconds since the epoch) at which it was so. Any
// goroutine may call it.
func (c *parkClock) parked(s *Scheduler) (parked, at int64) {
	for {
		s1 := c.seq.Load()
		if s1&1 != 0 {
			runtime.Gosched() // the worker is between its two stores
			continue
		}
		done, since := c.done.Load(), c.since.Load()
		at = s.now()
		if c.seq.Load() != s1 {
			continue
		}
		if since >= 0 {
			done += at - since
		}
		return done, at
	}
}

// publish copies the worker's counters for Stats.
func (w *worker) publish() {
	c, p := &w.ctr, &w.pub
	p.polled.Store(c.polled)
	p.spawned.Store(c.spawned)
	p.completed.Store(c.completed)
	p.steals.Store(c.steals)
	p.stolen.Store(c.stolen)
	p.lifoHits.Store(c.lifoHits)
	p.globalBatches.Store(c.globalBatches)
	p.parked.Store(c.parked)
	p.slowPolls.Store(c.slowPolls)
	p.spins.Store(c.spins)
	p.spinHits.Store(c.spinHits)
	if w.s.cfg.PollTiming {
		p.pollHist.store(&w.pollHist)
		p.schedHist.store(&w.schedHist)
	}
}

// WorkerStats are one worker's counters since New, as of the end of its last
// tick (a busy worker publishes at least every BudgetPerTick polls).
type WorkerStats struct {
	// Polled counts polls (and aborts) of tasks.
	Polled uint64
	// Spawned counts tasks spawned by this worker's polls.
	Spawned uint64
	// Completed counts tasks that completed in this worker's polls (their
	// future returned a value or panicked); aborted tasks (cancelled,
	// dropped by the shutdown) are not counted here.
	Completed uint64
	// Steals counts successful steal operations; Stolen the tasks they
	// moved (each takes half of the victim's queue).
	Steals, Stolen uint64
	// LIFOHits counts polls of a task taken from the LIFO slot.
	LIFOHits uint64
	// GlobalBatches counts batch pops from the global queue.
	GlobalBatches uint64
	// Parked counts the times the worker parked.
	Parked uint64
	// Spins counts the times the worker spun before parking
	// (Config.IdleSpin), and SpinHits the spins that found work, which
	// saved a park.
	Spins, SpinHits uint64
	// LocalQueue is the local queue's length when Stats read it.
	LocalQueue int
	// ParkedTime is the time the worker spent parked (asleep, waiting in
	// its driver with nothing to run, or spinning before it parks: see
	// Config.IdleSpin), the park in progress included;
	// BusyTime is the rest of the time since New, as of the same moment:
	// running tasks, its driver, looking for work. Both only grow, and
	// they sum to the time since New at the moment Stats read them.
	ParkedTime, BusyTime time.Duration
	// SlowPolls counts its polls that took Config.SlowPoll or longer, and
	// PollDurations is the histogram of its polls' durations; both need
	// Config.PollTiming (PollDurations is empty without it).
	SlowPolls     uint64
	PollDurations Histogram
	// SchedulingDelays is the histogram of the delays from a wake to the
	// poll it led to, for the tasks this worker polled (Config.PollTiming;
	// a task's first poll after its spawn is not counted).
	SchedulingDelays Histogram
}

// Stats are the scheduler's counters, and the per-worker ones.
type Stats struct {
	// Workers is the number of workers.
	Workers int
	// Spawned counts every task started (from workers and from outside).
	Spawned uint64
	// Polled, Stolen and Parked sum the workers' counters.
	Polled, Stolen, Parked uint64
	// Live is the number of tasks spawned and not yet finished.
	Live int64
	// Panicked counts panics: of tasks' polls, of futures' Cancels called
	// by the scheduler, and those drivers reported (ReportPanic).
	// Cancelled counts tasks aborted by JoinHandle.Cancel (one whose
	// Cancel panicked counts in both).
	Panicked, Cancelled uint64
	// ShieldsCut counts the tasks that the shutdown found still in a
	// shield when its grace ended, and cut (Shutdown, Shield).
	ShieldsCut uint64
	// GlobalQueue is the global queue's length when Stats read it.
	GlobalQueue int
	// PerWorker holds each worker's counters, by worker index.
	PerWorker []WorkerStats
	// Start is when New ran; Uptime is the time since, read after the
	// workers' figures.
	Start  time.Time
	Uptime time.Duration
	// PollDurations is the histogram of every worker's poll durations and
	// SlowPolls the count of slow polls, with Config.PollTiming;
	// LatestSlowPolls holds the latest slow polls (up to 16), oldest
	// first.
	PollDurations   Histogram
	SlowPolls       uint64
	LatestSlowPolls []SlowPoll
	// SchedulingDelays is every worker's histogram of the delays from a
	// wake to the poll it led to (Config.PollTiming).
	SchedulingDelays Histogram
}

// Stats returns the counters. Any goroutine may call it at any time; the
// figures of a busy worker lag by at most one tick, which a long poll
// holds as long as it runs (Live is exact, so Spawned may then read less
// than it).
func (s *Scheduler) Stats() Stats {
	st := Stats{
		Workers:     len(s.workers),
		Spawned:     s.spawnedRemote.Load(),
		Live:        s.owned.live.Load(),
		Panicked:    s.panicked.Load(),
		Cancelled:   s.cancelled.Load(),
		ShieldsCut:  s.shields.cut.Load(),
		GlobalQueue: s.global.Len(),
		PerWorker:   make([]WorkerStats, len(s.workers)),
		Start:       s.epoch,
	}
	for i, w := range s.workers {
		p := &w.pub
		ws := WorkerStats{
			Polled:        p.polled.Load(),
			Spawned:       p.spawned.Load(),
			Completed:     p.completed.Load(),
			Steals:        p.steals.Load(),
			Stolen:        p.stolen.Load(),
			LIFOHits:      p.lifoHits.Load(),
			GlobalBatches: p.globalBatches.Load(),
			Parked:        p.parked.Load(),
			Spins:         p.spins.Load(),
			SpinHits:      p.spinHits.Load(),
			LocalQueue:    w.stealer.Len(),
			SlowPolls:     p.slowPolls.Load(),
		}
		parked, at := w.parks.parked(s)
		ws.ParkedTime, ws.BusyTime = time.Duration(parked), time.Duration(at-parked)
		if s.cfg.PollTiming {
			ws.PollDurations.add(&p.pollHist)
			st.PollDurations.add(&p.pollHist)
			ws.SchedulingDelays.add(&p.schedHist)
			st.SchedulingDelays.add(&p.schedHist)
		}
		st.SlowPolls += ws.SlowPolls
		st.PerWorker[i] = ws
		st.Spawned += ws.Spawned
		st.Polled += ws.Polled
		st.Stolen += ws.Stolen
		st.Parked += ws.Parked
	}
	st.LatestSlowPolls = s.slow.snapshot()
	st.Uptime = time.Since(s.epoch)
	return st
}
