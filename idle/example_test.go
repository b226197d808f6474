package idle_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz/idle"
)

// The transitions of one worker, on one goroutine.
func ExampleState() {
	s := idle.New(2)
	fmt.Println("searcher:", s.TryBecomeSearcher())
	fmt.Println("second searcher of 2:", s.TryBecomeSearcher())

	// Nothing found: park as the last searcher, so check once more.
	fmt.Printf("%+v\n", s.PrepareToPark(0, true))
	fmt.Println("searching", s.Searching(), "parked", s.Parked())

	// Work arrives from outside: nobody searches, so worker 0 is claimed.
	fmt.Println("woke:", s.NotifyOne())
	fmt.Println(s.Park(0, time.Second))
	fmt.Println("searching", s.Searching(), "parked", s.Parked())
	// Output:
	// searcher: true
	// second searcher of 2: false
	// {WasLastSearcher:true}
	// searching 0 parked 1
	// woke: true
	// Notified
	// searching 1 parked 0
}

// A pool of four workers following the worker loop of the package doc, fed
// from outside through a shared counter.
func Example_workerLoop() {
	const workers, items = 4, 1000
	s := idle.New(workers)
	var pending, done atomic.Int64
	take := func() bool {
		for {
			v := pending.Load()
			if v == 0 {
				return false
			}
			if pending.CompareAndSwap(v, v-1) {
				return true
			}
		}
	}
	var wg sync.WaitGroup
	for id := range workers {
		wg.Go(func() {
			searching := false
			for {
				if !searching {
					if take() { // 1. own sources
						done.Add(1)
						continue
					}
					searching = s.TryBecomeSearcher() // 2.
				}
				if searching && take() { // 3. search
					searching = false
					s.TransitionFromSearching()
					done.Add(1)
					continue
				}
				if s.PrepareToPark(id, searching).WasLastSearcher && pending.Load() > 0 { // 4.
					s.NotifyOne()
				}
				switch s.Park(id, 10*time.Millisecond) { // 5.
				case idle.Notified:
					searching = true
				case idle.TimedOut:
					searching = false
				case idle.Closed:
					return
				}
			}
		})
	}
	for range items {
		pending.Add(1) // publish, then notify
		s.NotifyOne()
	}
	for done.Load() < items {
		time.Sleep(time.Millisecond)
	}
	s.Close()
	wg.Wait()
	fmt.Println("processed", done.Load(), "searching", s.Searching(), "parked", s.Parked())
	// Output: processed 1000 searching 0 parked 0
}
