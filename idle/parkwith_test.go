package idle_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/idle"
)

// fakeBackend stands for an I/O backend's Wait and Wake: a sticky,
// coalescing wake (a channel of capacity 1) and an optional "completion"
// that makes block report work.
type fakeBackend struct {
	wake   chan struct{}
	work   atomic.Int32
	blocks atomic.Int32
}

func newFakeBackend() *fakeBackend { return &fakeBackend{wake: make(chan struct{}, 1)} }

func (f *fakeBackend) Wake() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *fakeBackend) block(d time.Duration) bool {
	f.blocks.Add(1)
	if f.work.Load() > 0 {
		f.work.Add(-1)
		return true
	}
	if d == 0 {
		return false
	}
	var tc <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		tc = t.C
	}
	select {
	case <-f.wake:
	case <-tc:
	}
	return false
}

// withFake makes a State whose unparker wakes the fake backend for worker 0.
func withFake(n int) (*idle.State, *fakeBackend) {
	s := idle.New(n)
	f := newFakeBackend()
	s.SetUnparker(func(id int) {
		if id == 0 {
			f.Wake()
		}
	})
	return s, f
}

func TestParkWithNotified(t *testing.T) {
	s, f := withFake(1)
	s.PrepareToPark(0, false)
	done := make(chan idle.ParkResult)
	go func() { done <- s.ParkWith(0, -1, f.block) }()
	time.Sleep(5 * time.Millisecond)
	require.True(t, s.NotifyOne())
	select {
	case r := <-done:
		assert.Equal(t, idle.Notified, r)
	case <-time.After(5 * time.Second):
		t.Fatal("ParkWith did not return after NotifyOne: the unparker's wake was lost")
	}
	assert.Equal(t, 1, s.Searching(), "the claimed worker is a searcher")
	assert.Equal(t, 0, s.Parked())
}

func TestParkWithTimesOut(t *testing.T) {
	s, f := withFake(1)
	s.PrepareToPark(0, false)
	start := time.Now()
	assert.Equal(t, idle.TimedOut, s.ParkWith(0, 20*time.Millisecond, f.block))
	assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)
	assert.Equal(t, 0, s.Parked())
	assert.False(t, s.IsParked(0))
}

func TestParkWithZeroTimeoutPollsOnce(t *testing.T) {
	s, f := withFake(1)
	s.PrepareToPark(0, false)
	assert.Equal(t, idle.TimedOut, s.ParkWith(0, 0, f.block))
	assert.Equal(t, int32(1), f.blocks.Load())
	f.work.Store(1)
	s.PrepareToPark(0, false)
	assert.Equal(t, idle.Interrupted, s.ParkWith(0, 0, f.block))
	assert.Equal(t, 0, s.Parked())
}

func TestParkWithInterruptedByWork(t *testing.T) {
	s, f := withFake(1)
	f.work.Store(1)
	s.PrepareToPark(0, false)
	assert.Equal(t, idle.Interrupted, s.ParkWith(0, -1, f.block))
	assert.Equal(t, 0, s.Parked())
	assert.Equal(t, 0, s.Searching())
	assert.Equal(t, "Interrupted", idle.Interrupted.String())
}

func TestParkWithClosed(t *testing.T) {
	s, f := withFake(2)
	s.PrepareToPark(0, false)
	done := make(chan idle.ParkResult)
	go func() { done <- s.ParkWith(0, -1, f.block) }()
	time.Sleep(5 * time.Millisecond)
	s.Close()
	select {
	case r := <-done:
		assert.Equal(t, idle.Closed, r)
	case <-time.After(5 * time.Second):
		t.Fatal("ParkWith did not return after Close")
	}
	s.PrepareToPark(0, false)
	assert.Equal(t, idle.Closed, s.ParkWith(0, -1, f.block))
}

func TestParkWithPanicsUnprepared(t *testing.T) {
	s, f := withFake(1)
	assert.Panics(t, func() { s.ParkWith(0, -1, f.block) })
}

// TestParkWithNoLostWakeup races claims against worker 0 entering its
// block function, again and again: every claim must end the sleep, never
// leaving the worker asleep until a timeout (there is none here).
func TestParkWithNoLostWakeup(t *testing.T) {
	rounds := 20000
	if testing.Short() {
		rounds = 2000
	}
	s, f := withFake(1)
	var wg sync.WaitGroup
	results := make(chan idle.ParkResult, 1)
	for i := range rounds {
		s.PrepareToPark(0, false)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%3 == 0 {
				time.Sleep(time.Duration(i%7) * time.Microsecond)
			}
			for !s.NotifyOne() {
				// Not yet announced to the claimer's eyes, or a searcher is
				// still counted from the last round: retry.
				time.Sleep(time.Microsecond)
			}
		}()
		go func() { results <- s.ParkWith(0, -1, f.block) }()
		select {
		case r := <-results:
			require.Equal(t, idle.Notified, r, "round %d", i)
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: a claim's wake was lost", i)
		}
		wg.Wait()
		s.TransitionFromSearching() // the claimed worker found its work
		require.Equal(t, 0, s.Searching(), "round %d", i)
		require.Equal(t, 0, s.Parked(), "round %d", i)
	}
}
