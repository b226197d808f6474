package idle_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/blitz-go/blitz/idle"
)

// Worker phases, for the watchdog's report of a stuck state.
const (
	phaseRunning int32 = iota
	phaseSearching
	phasePrepared
	phaseParked
	phaseExited
)

var phaseNames = [...]string{"running", "searching", "prepared", "parked", "exited"}

// pool runs n worker goroutines over a shared counter of pending items,
// following the worker loop of the package doc.
type pool struct {
	s         *idle.State
	pending   atomic.Int64 // items published and not taken
	processed atomic.Int64
	timedOut  atomic.Int64 // Park results
	notified  atomic.Int64
	phase     []atomic.Int32
	wg        sync.WaitGroup
}

// take removes one pending item, if any. It is the work source.
func (p *pool) take() bool {
	for {
		v := p.pending.Load()
		if v == 0 {
			return false
		}
		if p.pending.CompareAndSwap(v, v-1) {
			return true
		}
	}
}

// publish adds one item, then notifies (rule 1).
func (p *pool) publish() {
	p.pending.Add(1)
	p.s.NotifyOne()
}

func (p *pool) worker(id int, timeout func() time.Duration) {
	defer p.phase[id].Store(phaseExited)
	searching := false
	for {
		if !searching {
			p.phase[id].Store(phaseRunning)
			if p.take() { // step 1: own sources
				p.processed.Add(1)
				continue
			}
			searching = p.s.TryBecomeSearcher() // step 2
		}
		if searching {
			p.phase[id].Store(phaseSearching)
			if p.take() { // step 3
				searching = false
				p.s.TransitionFromSearching()
				p.processed.Add(1)
				continue
			}
		}
		if rand.IntN(4) == 0 {
			runtime.Gosched() // widen the window between the last look and the announcement
		}
		p.phase[id].Store(phasePrepared)
		if p.s.PrepareToPark(id, searching).WasLastSearcher && p.pending.Load() > 0 { // step 4
			p.s.NotifyOne()
		}
		searching = false
		p.phase[id].Store(phaseParked)
		switch r := p.s.Park(id, timeout()); r { // step 5
		case idle.Notified:
			p.notified.Add(1)
			searching = true
		case idle.TimedOut:
			p.timedOut.Add(1)
		case idle.Closed:
			return
		}
	}
}

// report describes the stuck state for a watchdog failure.
func (p *pool) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v\npending %d, processed %d, notified %d, timed out %d\nworker phases:",
		p.s, p.pending.Load(), p.processed.Load(), p.notified.Load(), p.timedOut.Load())
	for id := range p.phase {
		fmt.Fprintf(&b, " %d:%s", id, phaseNames[p.phase[id].Load()])
	}
	return b.String()
}

// runPool starts workers and producers, waits until all items are processed
// or the watchdog fires, closes the State and joins every goroutine.
//
// Each producer publishes a burst of one to three items, then waits until
// every item published so far has been processed before its next burst, so
// that no later publish can rescue a stranded item: a lost wakeup stops the
// run until the watchdog fires. Most waits spin, so that the next burst lands
// while the workers are going idle (the window of rules 1 and 2); some sleep,
// so that workers also park for real.
func runPool(t *testing.T, workers, producers, items int, timeout func() time.Duration, watchdog time.Duration) *pool {
	t.Helper()
	p := &pool{s: idle.New(workers), phase: make([]atomic.Int32, workers)}
	for id := range workers {
		p.wg.Go(func() { p.worker(id, timeout) })
	}
	var published atomic.Int64
	var stuck atomic.Bool
	var prod sync.WaitGroup
	for i := range producers {
		per := items / producers
		if i == 0 {
			per += items % producers
		}
		prod.Go(func() {
			for j := 0; j < per && !stuck.Load(); {
				burst := min(1+rand.IntN(3), per-j)
				for range burst {
					p.publish()
					published.Add(1)
				}
				j += burst
				target := published.Load()
				deadline := time.Now().Add(watchdog)
				for spins := 0; p.processed.Load() < target; spins++ {
					if spins%1024 == 1023 && time.Now().After(deadline) {
						if !stuck.Swap(true) {
							t.Errorf("watchdog: %d items stranded for %v (lost wakeup)\n%s",
								target-p.processed.Load(), watchdog, p.report())
						}
						return
					}
					switch {
					case j%16 == 0:
						time.Sleep(20 * time.Microsecond)
					case spins%64 == 63:
						runtime.Gosched()
					}
				}
			}
		})
	}
	prod.Wait()
	p.s.Close()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(watchdog):
		t.Fatalf("watchdog: workers did not exit after Close\n%s", p.report())
	}
	if stuck.Load() {
		return p
	}
	assert.Equal(t, int64(items), p.processed.Load())
	assert.Equal(t, int64(0), p.pending.Load())
	assert.Equal(t, 0, p.s.Searching(), "searching after every worker exited")
	assert.Equal(t, 0, p.s.Parked(), "parked after every worker exited")
	for id := range workers {
		assert.False(t, p.s.IsParked(id), "worker %d's bit after exit", id)
	}
	return p
}

func stressItems() int {
	if testing.Short() {
		return 10_000
	}
	return 100_000
}

// TestNoLostWakeup runs the worker loop of the package doc with a park
// timeout of a minute and a watchdog of 20 s: every item must be processed
// through notifies alone. A lost wakeup leaves items pending with every
// worker parked, and the watchdog reports the state; no Park may time out.
func TestNoLostWakeup(t *testing.T) {
	for _, tc := range []struct{ workers, producers int }{{1, 1}, {2, 1}, {4, 2}, {8, 3}, {65, 2}} {
		t.Run(fmt.Sprintf("workers=%d,producers=%d", tc.workers, tc.producers), func(t *testing.T) {
			p := runPool(t, tc.workers, tc.producers, stressItems(),
				func() time.Duration { return time.Minute }, 20*time.Second)
			assert.Equal(t, int64(0), p.timedOut.Load(), "progress must not rely on park timeouts")
			t.Logf("notified %d times", p.notified.Load())
		})
	}
}

// TestNoLostWakeupShortTimeouts runs the same loop with park timeouts of 0
// to 20 µs, so that timers fire while notifiers claim: the timed-out but
// claimed race of "Timeouts". Counts and bits must end at zero.
func TestNoLostWakeupShortTimeouts(t *testing.T) {
	for _, tc := range []struct{ workers, producers int }{{2, 1}, {4, 2}, {70, 2}} {
		t.Run(fmt.Sprintf("workers=%d,producers=%d", tc.workers, tc.producers), func(t *testing.T) {
			p := runPool(t, tc.workers, tc.producers, stressItems()/2,
				func() time.Duration { return time.Duration(rand.IntN(20_000)) }, 20*time.Second)
			t.Logf("notified %d times, timed out %d times", p.notified.Load(), p.timedOut.Load())
		})
	}
}

// TestNoLostWakeupNoTimeout parks without any timeout at all (a negative
// timeout): progress can only come from notifies.
func TestNoLostWakeupNoTimeout(t *testing.T) {
	p := runPool(t, 3, 2, stressItems()/2, func() time.Duration { return -1 }, 20*time.Second)
	assert.Equal(t, int64(0), p.timedOut.Load())
}

// TestLastSearcherWakesAnotherForRemainingWork publishes two items at once
// to two parked workers with a single notify: item A blocks until item B has
// run. The woken worker takes A and, being the last searcher, must wake the
// other for B (TransitionFromSearching); otherwise A waits forever.
func TestLastSearcherWakesAnotherForRemainingWork(t *testing.T) {
	s := idle.New(2)
	queue := make(chan func(), 2)
	take := func() (func(), bool) {
		select {
		case f := <-queue:
			return f, true
		default:
			return nil, false
		}
	}
	var wg sync.WaitGroup
	for id := range 2 {
		wg.Go(func() {
			searching := false
			for {
				if !searching {
					if f, ok := take(); ok {
						f()
						continue
					}
					searching = s.TryBecomeSearcher()
				}
				if searching {
					if f, ok := take(); ok {
						searching = false
						s.TransitionFromSearching()
						f()
						continue
					}
				}
				if s.PrepareToPark(id, searching).WasLastSearcher && len(queue) > 0 {
					s.NotifyOne()
				}
				searching = false
				switch s.Park(id, time.Minute) {
				case idle.Notified:
					searching = true
				case idle.Closed:
					return
				}
			}
		})
	}
	for s.Parked() != 2 {
		time.Sleep(time.Millisecond)
	}
	bRan := make(chan struct{})
	aRan := make(chan struct{})
	queue <- func() { <-bRan; close(aRan) }
	queue <- func() { close(bRan) }
	s.NotifyOne()
	select {
	case <-aRan:
	case <-time.After(10 * time.Second):
		t.Errorf("item B stranded behind A: %v", s)
		close(bRan) // release A so that the workers can exit
	}
	s.Close()
	wg.Wait()
}
