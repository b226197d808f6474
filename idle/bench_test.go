package idle_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/blitz-go/blitz/idle"
)

// The benchmarks run side by side; the first sub-benchmark is this package,
// the others the goroutine equivalents. Keep the names: the repository's
// side-by-side tool parses them.

// BenchmarkUnparkPark measures one round trip: the benchmark goroutine wakes
// a parked helper goroutine and parks; the helper wakes it back and parks.
// One op is the round trip (two wakes, two parks).
func BenchmarkUnparkPark(b *testing.B) {
	b.Run("idle", func(b *testing.B) {
		// Two States of one worker each: the benchmark goroutine is the
		// worker of a, the helper the worker of b. A side's work is a flag
		// in its State; giving work is "set the flag, then NotifyOne" (rule
		// 1), and waiting for it is the worker loop of the package doc.
		// (One State with a ball for a particular worker would break the
		// protocol's premise that any worker may take any work: see "No
		// lost wakeup".)
		a, bs := idle.New(1), idle.New(1)
		var workA, workB atomic.Bool
		give := func(s *idle.State, work *atomic.Bool) {
			work.Store(true)
			s.NotifyOne()
		}
		// wait runs the worker loop of s until it takes the work; false if
		// s was closed.
		wait := func(s *idle.State, work *atomic.Bool) bool {
			searching := false
			for {
				if work.CompareAndSwap(true, false) {
					if searching {
						s.TransitionFromSearching()
					}
					return true
				}
				if !searching && s.TryBecomeSearcher() {
					searching = true
					continue // search once more as a searcher
				}
				if s.PrepareToPark(0, searching).WasLastSearcher && work.Load() {
					s.NotifyOne()
				}
				searching = false
				switch s.Park(0, -1) {
				case idle.Notified:
					searching = true
				case idle.Closed:
					return false
				}
			}
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			for wait(bs, &workB) {
				give(a, &workA)
			}
		})
		b.ReportAllocs()
		for b.Loop() {
			give(bs, &workB)
			wait(a, &workA)
		}
		bs.Close()
		wg.Wait()
	})
	b.Run("chan", func(b *testing.B) {
		ping, pong := make(chan struct{}), make(chan struct{})
		go func() {
			for range ping {
				pong <- struct{}{}
			}
		}()
		b.ReportAllocs()
		for b.Loop() {
			ping <- struct{}{}
			<-pong
		}
		close(ping)
	})
	b.Run("cond", func(b *testing.B) {
		var mu sync.Mutex
		cond := sync.NewCond(&mu)
		turn, stop := 0, false
		var wg sync.WaitGroup
		wg.Go(func() {
			mu.Lock()
			defer mu.Unlock()
			for {
				for turn != 1 && !stop {
					cond.Wait()
				}
				if stop {
					return
				}
				turn = 0
				cond.Broadcast()
			}
		})
		b.ReportAllocs()
		for b.Loop() {
			mu.Lock()
			turn = 1
			cond.Broadcast()
			for turn != 0 {
				cond.Wait()
			}
			mu.Unlock()
		}
		mu.Lock()
		stop = true
		cond.Broadcast()
		mu.Unlock()
		wg.Wait()
	})
}

// BenchmarkNotifyNoSleepers measures the notify path when a searcher
// exists, the common case under load: one atomic load for this package,
// against a mutex-guarded pair of counters.
func BenchmarkNotifyNoSleepers(b *testing.B) {
	b.Run("idle", func(b *testing.B) {
		s := idle.New(8)
		s.TryBecomeSearcher()
		s.PrepareToPark(7, false)
		b.ReportAllocs()
		for b.Loop() {
			if s.NotifyOne() {
				b.Fatal("woke a worker while a searcher exists")
			}
		}
	})
	b.Run("mutex", func(b *testing.B) {
		var mu sync.Mutex
		searching, parked := 1, 1
		notify := func() bool {
			mu.Lock()
			defer mu.Unlock()
			if searching != 0 || parked == 0 {
				return false
			}
			searching++
			parked--
			return true
		}
		b.ReportAllocs()
		for b.Loop() {
			if notify() {
				b.Fatal("woke")
			}
		}
	})
}
