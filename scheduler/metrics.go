package scheduler

import (
	"math/bits"

	"github.com/blitz-go/blitz/header"
	"sync"
	"sync/atomic"
	"time"
)

// This file holds the scheduler's timing metrics: each worker's parked
// time, and, with Config.PollTiming, the histogram of poll durations and
// the slow polls. The worker keeps plain counters on its goroutine and
// publishes them with its other counters (publish), so the hot path pays
// no atomic for them.

// DefaultSlowPoll is Config.SlowPoll's default: a poll that keeps its
// worker for a millisecond keeps every task queued behind it waiting as
// long.
const DefaultSlowPoll = time.Millisecond

// HistogramBuckets is the number of buckets of a Histogram: upper bounds
// of 1µs, 4µs, 16µs, ... (each 4 times the last), 10 bounds, and a bucket
// for everything above the last (262.144ms).
const HistogramBuckets = 11

// histogramBounds are the buckets' upper bounds.
var histogramBounds = func() []time.Duration {
	b := make([]time.Duration, HistogramBuckets-1)
	for i := range b {
		b[i] = time.Microsecond << (2 * i)
	}
	return b
}()

// Histogram counts durations in buckets of exponentially growing width.
type Histogram struct {
	// Bounds are the buckets' upper bounds (inclusive), increasing.
	Bounds []time.Duration `json:"BoundsNs"`
	// Counts has one count per bound, and a last one for the durations
	// above the last bound.
	Counts []uint64
	// Sum is the total of the durations counted.
	Sum time.Duration `json:"SumNs"`
}

// Count returns the number of durations counted.
func (h Histogram) Count() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Observe counts d in h, giving h the standard bounds if it has none. It
// is for a histogram owned by one goroutine or guarded by a lock: h is a
// plain value.
func (h *Histogram) Observe(d time.Duration) {
	if h.Counts == nil {
		h.Bounds, h.Counts = histogramBounds, make([]uint64, HistogramBuckets)
	}
	h.Counts[bucketOf(d)]++
	h.Sum += d
}

// Clone returns a copy of h that shares nothing with it.
func (h Histogram) Clone() Histogram {
	h.Counts = append([]uint64(nil), h.Counts...)
	return h
}

// add adds o's counts and sum to h, which has the standard bounds.
func (h *Histogram) add(o *histoCounters) {
	if h.Counts == nil {
		h.Bounds, h.Counts = histogramBounds, make([]uint64, HistogramBuckets)
	}
	for i := range o.counts {
		h.Counts[i] += o.counts[i].Load()
	}
	h.Sum += time.Duration(o.sum.Load())
}

// bucketOf returns the bucket of d: the first whose bound is at least d.
func bucketOf(d time.Duration) int {
	if d <= time.Microsecond {
		return 0
	}
	// The bound of bucket i is 4^i µs: i = ceil(log4(d/1µs)).
	us := uint64((d - 1) / time.Microsecond) // d in (4^(i-1), 4^i] µs gives us in [4^(i-1), 4^i)
	i := (bits.Len64(us) + 1) / 2
	return min(i, HistogramBuckets-1)
}

// histo is a worker's histogram: counts and sum kept by the worker's
// goroutine.
type histo struct {
	counts [HistogramBuckets]uint64
	sum    int64
}

// observe counts d.
func (h *histo) observe(d time.Duration) {
	h.counts[bucketOf(d)]++
	h.sum += int64(d)
}

// histoCounters is the published copy of a histo, for Stats.
type histoCounters struct {
	counts [HistogramBuckets]atomic.Uint64
	sum    atomic.Int64
}

// store publishes h.
func (p *histoCounters) store(h *histo) {
	for i := range h.counts {
		p.counts[i].Store(h.counts[i])
	}
	p.sum.Store(h.sum)
}

// SlowPoll is a poll that took longer than Config.SlowPoll.
type SlowPoll struct {
	// Task is the task's id and Name its name ("" for none).
	Task uint64
	Name string
	// Duration is the poll's; At is when it ended.
	Duration time.Duration `json:"DurationNs"`
	At       time.Time
}

// slowPollsKept is how many of the latest slow polls Stats reports.
const slowPollsKept = 16

// slowPolls keeps the latest slow polls of a scheduler, oldest first.
// Written by the workers that made them (rare by definition), read by
// Stats; both under mu.
type slowPolls struct {
	mu     sync.Mutex
	latest []SlowPoll
}

// note records p.
func (s *slowPolls) note(p SlowPoll) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.latest) == slowPollsKept {
		copy(s.latest, s.latest[1:])
		s.latest = s.latest[:slowPollsKept-1]
	}
	s.latest = append(s.latest, p)
}

// snapshot returns a copy of the latest slow polls.
func (s *slowPolls) snapshot() []SlowPoll {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SlowPoll(nil), s.latest...)
}

// timedPoll counts a poll that took d (Config.PollTiming): its bucket, and
// a slow poll over Config.SlowPoll of the task id, whose side record
// (for the name) was x when the poll began: the task may have finished
// and been reused since. Called by the worker that made the poll.
func (w *worker) timedPoll(id uint64, x *taskExt, d time.Duration) {
	w.pollHist.observe(d)
	if d >= w.s.cfg.SlowPoll {
		w.ctr.slowPolls++
		p := SlowPoll{Task: id, Duration: d, At: time.Now()}
		if x != nil {
			p.Name = x.name
		}
		w.s.slow.note(p)
	}
}

// noteScheduled records when the wake of h scheduled it, for the
// scheduling delay (Config.PollTiming). Only a task with a side record is
// measured: with PollTiming, every task that has been polled without
// completing has one. Any goroutine that schedules h calls it.
func (s *Scheduler) noteScheduled(h *header.Header) {
	if x := taskOf(h).ext.Load(); x != nil && !x.shared {
		x.scheduledAt.Store(s.now() + 1) // + 1: 0 means none, and a coarse clock may read 0
	}
}

// noteDelay counts the time from the wake that scheduled the task whose
// side record is x to its poll starting at start. Called by the polling
// worker, with Config.PollTiming.
func (w *worker) noteDelay(x *taskExt, start time.Time) {
	if x == nil || x.shared {
		return
	}
	if at := x.scheduledAt.Swap(0); at != 0 {
		w.schedHist.observe(max(start.Sub(w.s.epoch)-time.Duration(at-1), 0))
	}
}
