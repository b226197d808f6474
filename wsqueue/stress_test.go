package wsqueue_test

// Stress tests: one owner and several stealers move a million items (fewer
// under -short) and every item must be taken exactly once. Run them under
// -race: the items carry plain fields written by the producer and by the
// consumer, so a missing happens-before edge or an item taken twice is also
// reported as a data race.

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/blitz-go/blitz/wsqueue"
)

// job is a stress-test item.
type job struct {
	id      int
	payload int // written by the producer before the push
	by      int // written by the consumer that takes it
}

// tally records what each worker consumed, without sharing memory between
// workers, and the total taken so far.
type tally struct {
	t       *testing.T
	total   atomic.Int64
	stalled atomic.Bool // set by the watchdog: items were lost, stop waiting
	ids     [][]int32   // ids[w] is written only by worker w
	stop    chan struct{}
}

// newTally prepares a tally for workers goroutines and starts its watchdog,
// which gives up if nothing is taken for 30 seconds (a lost item would
// otherwise hang the test).
func newTally(t *testing.T, workers int) *tally {
	c := &tally{t: t, ids: make([][]int32, workers), stop: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		last := int64(-1)
		tick := time.NewTicker(30 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-tick.C:
				now := c.total.Load()
				if now == last {
					c.stalled.Store(true)
					return
				}
				last = now
			}
		}
	}()
	t.Cleanup(func() {
		close(c.stop)
		<-done
	})
	return c
}

// take records that worker w consumed j. Called only by worker w.
func (c *tally) take(w int, j *job) {
	if j.payload != 3*j.id+1 {
		c.t.Errorf("job %d: payload %d, the producer's write is not visible", j.id, j.payload)
	}
	j.by = w
	c.ids[w] = append(c.ids[w], int32(j.id))
	c.total.Add(1)
}

// done reports whether n items have been taken, or the watchdog gave up.
func (c *tally) done(n int) bool { return c.total.Load() >= int64(n) || c.stalled.Load() }

// check asserts that each of 0..n-1 was taken exactly once. Call it after
// every worker has returned.
func (c *tally) check(n int) {
	if c.stalled.Load() {
		c.t.Errorf("no progress for 30s at %d of %d items: items were lost", c.total.Load(), n)
	}
	seen := make([]uint8, n)
	for _, ids := range c.ids {
		for _, id := range ids {
			seen[id]++
		}
	}
	for id, k := range seen {
		if k != 1 {
			c.t.Fatalf("job %d taken %d times", id, k)
		}
	}
	if got := c.total.Load(); got != int64(n) {
		c.t.Fatalf("%d jobs taken in total, want %d", got, n)
	}
	per := make([]int, len(c.ids))
	for w, ids := range c.ids {
		per[w] = len(ids)
	}
	c.t.Logf("%d items taken exactly once; per worker (owner first): %v", n, per)
}

// yieldRarely is a steal hook that sometimes gives up the processor in the
// middle of a steal, so that the owner and other thieves run while a steal
// is in progress even when the stealers share a processor.
func yieldRarely(HookPoint) {
	if rand.IntN(32) == 0 {
		runtime.Gosched()
	}
}

// stressSize returns full, or full/div under -short.
func stressSize(full, div int) int {
	if testing.Short() {
		return full / div
	}
	return full
}

// TestStressLocalQueueExactlyOnce: an owner pushes (single items and
// batches) and sometimes pops while thieves steal half at a time from it and
// from each other, and everyone drains the overflow; small capacities and
// indices starting below 2^32 make overflows, steals in progress and the
// index wrap frequent.
func TestStressLocalQueueExactlyOnce(t *testing.T) {
	for _, c := range []struct {
		name     string
		capacity int
		n        int
	}{
		{"cap256", 256, stressSize(1_000_000, 20)},
		{"cap4", 4, stressSize(250_000, 20)},
	} {
		t.Run(c.name, func(t *testing.T) {
			stressLocal(t, c.capacity, ^uint32(0)-uint32(c.capacity)*3, c.n, 3)
		})
	}
}

// stressLocal runs one owner and thieves workers on local queues.
func stressLocal(t *testing.T, capacity int, start uint32, n, thieves int) {
	workers := thieves + 1
	var retries, busy, singles atomic.Int64 // interleavings worth knowing were exercised
	owners := make([]*Owner[job], workers)
	stealers := make([]*Stealer[job], workers)
	for w := range owners {
		owners[w], stealers[w] = NewAt[job](capacity, start)
		SetHook(stealers[w], func(h HookPoint) {
			if h == HookCompleteRetry {
				retries.Add(1)
			}
			yieldRarely(h)
		})
	}
	var global MutexDeque[job]
	overflow := OverflowFunc[job](func(batch []*job) {
		if len(batch) == 1 {
			singles.Add(1)
		}
		for _, j := range batch {
			global.PushBack(j)
		}
	})
	c := newTally(t, workers)

	// work takes one item for worker w from anywhere; false if it found none.
	work := func(w int, r *rand.Rand) bool {
		if j := owners[w].Pop(); j != nil {
			c.take(w, j)
			return true
		}
		if j := global.PopFront(); j != nil {
			c.take(w, j)
			return true
		}
		victim := (w + 1 + r.IntN(workers-1)) % workers
		j, _, st := StealIntoN(stealers[victim], owners[w])
		if j != nil {
			c.take(w, j)
			return true
		}
		if st == StatusBusy {
			busy.Add(1)
		}
		return false
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for !c.done(n) {
				if !work(w, r) {
					runtime.Gosched()
				}
			}
		}()
	}

	r := rand.New(rand.NewPCG(0, 1))
	batch := make([]*job, 0, 8)
	for i := 0; i < n; {
		if i%64 == 0 && i+8 <= n { // a batch of 8
			batch = batch[:0]
			for k := range 8 {
				batch = append(batch, &job{id: i + k, payload: 3*(i+k) + 1})
			}
			owners[0].PushBatch(batch, overflow)
			i += 8
		} else {
			owners[0].Push(&job{id: i, payload: 3*i + 1}, overflow)
			i++
		}
		if i%16 == 0 {
			work(0, r)
		}
	}
	for !c.done(n) {
		if !work(0, r) {
			runtime.Gosched()
		}
	}
	wg.Wait()
	c.check(n)
	t.Logf("steals that found another in progress: %d; completion retries: %d; single-item overflows: %d",
		busy.Load(), retries.Load(), singles.Load())
	for w := range owners {
		if !owners[w].IsEmpty() {
			t.Fatalf("queue %d not empty", w)
		}
		steal, real, _ := Indices(stealers[w])
		if steal != real {
			t.Fatalf("queue %d: a steal never completed: steal index %d, real index %d", w, steal, real)
		}
	}
}

// TestStressDequeExactlyOnceWithGrowth: an owner pushes bursts and pops
// while thieves steal; every round starts from a fresh deque of capacity 2, so
// the deque grows (and thieves read replaced rings) hundreds of times.
func TestStressDequeExactlyOnceWithGrowth(t *testing.T) {
	const thieves = 3
	const perRound = 10_000
	n := stressSize(1_000_000, 20)
	c := newTally(t, thieves+1)
	var current atomic.Pointer[DequeStealer[job]]

	var wg sync.WaitGroup
	for w := 1; w <= thieves; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !c.done(n) {
				s := current.Load()
				if s == nil {
					runtime.Gosched()
					continue
				}
				j, r := s.Steal()
				if r == StealSuccess {
					c.take(w, j)
				} else if r == StealEmpty {
					runtime.Gosched()
				}
			}
		}()
	}

	r := rand.New(rand.NewPCG(7, 7))
	grows := 0
	for first := 0; first < n; first += perRound {
		o, s := NewDeque[job](2)
		SetDequeHook(s, yieldRarely)
		current.Store(s)
		last := min(first+perRound, n)
		for i := first; i < last; {
			for k := r.IntN(300); k >= 0 && i < last; k-- {
				o.Push(&job{id: i, payload: 3*i + 1})
				i++
			}
			for k := r.IntN(150); k >= 0; k-- {
				if j := o.Pop(); j != nil {
					c.take(0, j)
				}
			}
		}
		for capacity := o.Capacity(); capacity > 2; capacity /= 2 {
			grows++
		}
		for !c.done(last) {
			if j := o.Pop(); j != nil {
				c.take(0, j)
			} else {
				runtime.Gosched()
			}
		}
		if !o.IsEmpty() {
			t.Fatalf("deque not empty after the owner finished: %d items", o.Len())
		}
	}
	wg.Wait()
	c.check(n)
	t.Logf("%d items, %d rounds, %d growths", n, (n+perRound-1)/perRound, grows)
}
