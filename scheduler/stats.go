package scheduler

import (
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
	// parkedNs is the time spent parked.
	parkedNs int64
}

// publishedCounters is the copy of counters that Stats reads. Stored only by
// the worker's goroutine, loaded by any.
type publishedCounters struct {
	polled, spawned, completed atomic.Uint64
	steals, stolen, lifoHits   atomic.Uint64
	globalBatches, parked      atomic.Uint64
	slowPolls                  atomic.Uint64
	parkedNs                   atomic.Int64
	pollHist, schedHist        histoCounters
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
	p.parkedNs.Store(c.parkedNs)
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
	// LocalQueue is the local queue's length when Stats read it.
	LocalQueue int
	// ParkedTime is the time the worker spent parked (asleep, or waiting
	// in its driver with nothing to run); the rest of Stats.Uptime it was
	// busy: running tasks, its driver, looking for work.
	ParkedTime time.Duration
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
	// GlobalQueue is the global queue's length when Stats read it.
	GlobalQueue int
	// PerWorker holds each worker's counters, by worker index.
	PerWorker []WorkerStats
	// Uptime is the time since New.
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
// figures of a busy worker lag by at most one tick.
func (s *Scheduler) Stats() Stats {
	st := Stats{
		Workers:     len(s.workers),
		Spawned:     s.spawnedRemote.Load(),
		Live:        s.owned.live.Load(),
		Panicked:    s.panicked.Load(),
		Cancelled:   s.cancelled.Load(),
		GlobalQueue: s.global.Len(),
		PerWorker:   make([]WorkerStats, len(s.workers)),
		Uptime:      time.Since(s.epoch),
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
			LocalQueue:    w.stealer.Len(),
			ParkedTime:    time.Duration(p.parkedNs.Load()),
			SlowPolls:     p.slowPolls.Load(),
		}
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
	return st
}
