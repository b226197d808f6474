package idle_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/idle"
)

// TestNotifyWorkerWakesThatWorker: NotifyWorker claims the worker it names,
// even while another worker searches (NotifyOne would do nothing), and the
// claimed worker comes back Notified, counted as a searcher.
func TestNotifyWorkerWakesThatWorker(t *testing.T) {
	s := idle.New(130) // three bitmap words
	require.True(t, s.TryBecomeSearcher())
	for _, id := range []int{0, 63, 64, 129} {
		s.PrepareToPark(id, false)
		assert.False(t, s.NotifyOne(), "a searcher exists: NotifyOne does nothing")
		require.True(t, s.NotifyWorker(id), "worker %d", id)
		assert.False(t, s.IsParked(id))
		assert.Equal(t, idle.Notified, s.Park(id, time.Second), "worker %d", id)
		assert.Equal(t, 0, s.Parked())
		assert.Equal(t, 2, s.Searching(), "the test's searcher and worker %d", id)
		s.TransitionFromSearching()
	}
}

// TestNotifyWorkerNotParked: a worker that is not announced is not claimed,
// and the counts stay as they were.
func TestNotifyWorkerNotParked(t *testing.T) {
	s := idle.New(4)
	s.PrepareToPark(1, false)
	assert.False(t, s.NotifyWorker(2))
	assert.Equal(t, 0, s.Searching())
	assert.Equal(t, 1, s.Parked())
	assert.True(t, s.IsParked(1))
	assert.Equal(t, idle.TimedOut, s.Park(1, 0))
	assert.False(t, s.NotifyWorker(1), "withdrawn by its own timeout")
	assert.Equal(t, 0, s.Parked())
}

// TestNotifyWorkerBadID: an id out of range panics with ErrWorkerID.
func TestNotifyWorkerBadID(t *testing.T) {
	s := idle.New(4)
	for _, id := range []int{-1, 4, 1000} {
		assert.PanicsWithError(t, fmt.Sprintf("%v: %d not in [0, 4)", idle.ErrWorkerID, id), func() { s.NotifyWorker(id) }, "id %d", id)
	}
}

// TestNotifyWorkerRaces: workers park with random timeouts (some none)
// while goroutines call NotifyWorker for random workers, NotifyOne and
// Close races them at the end. Every claim sends exactly one token (a
// second would panic in send), no claim is lost (every true NotifyWorker is
// matched by a Notified park), and the counts come back to zero.
func TestNotifyWorkerRaces(t *testing.T) {
	const workers = 6
	rounds := 20000
	if testing.Short() {
		rounds = 2000
	}
	s := idle.New(workers)
	var claimed, notified atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for id := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			searching := false
			for {
				select {
				case <-stop:
					if searching {
						s.TransitionFromSearching()
					}
					return
				default:
				}
				timeout := []time.Duration{-1, 0, 50 * time.Microsecond, time.Millisecond}[rand.IntN(4)]
				if timeout < 0 {
					timeout = 20 * time.Millisecond // bounded: the notifiers may stop first
				}
				s.PrepareToPark(id, searching)
				searching = false
				switch s.Park(id, timeout) {
				case idle.Notified:
					notified.Add(1)
					searching = true
				case idle.Closed:
					return
				}
			}
		}()
	}
	var nwg sync.WaitGroup
	for range 2 {
		nwg.Add(1)
		go func() {
			defer nwg.Done()
			for range rounds {
				if rand.IntN(4) == 0 {
					if s.NotifyOne() {
						claimed.Add(1)
					}
				} else if s.NotifyWorker(rand.IntN(workers)) {
					claimed.Add(1)
				}
				if rand.IntN(8) == 0 {
					time.Sleep(time.Duration(rand.IntN(50)) * time.Microsecond)
				}
			}
		}()
	}
	nwg.Wait()
	close(stop)
	s.Close()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("workers did not stop: %v", s)
	}
	assert.Equal(t, claimed.Load(), notified.Load(), "claims made and claims received")
	assert.Equal(t, 0, s.Parked())
	assert.Equal(t, 0, s.Searching())
	assert.Greater(t, claimed.Load(), int64(0))
}
