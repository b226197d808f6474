package idle_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/idle"
)

func TestNewRejectsBadWorkerCounts(t *testing.T) {
	for _, n := range []int{-1, 0, idle.MaxWorkers + 1} {
		assert.PanicsWithError(t, fmt.Sprintf("%v: %d", idle.ErrWorkerCount, n), func() { idle.New(n) }, "n=%d", n)
	}
	assert.Equal(t, 1, idle.New(1).Workers())
}

func TestSearcherCapIsCeilHalf(t *testing.T) {
	for _, tc := range []struct{ n, limit int }{
		{1, 1}, {2, 1}, {3, 2}, {4, 2}, {64, 32}, {65, 33}, {130, 65}, {1000, 500},
	} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			s := idle.New(tc.n)
			for i := range tc.limit {
				require.True(t, s.TryBecomeSearcher(), "searcher %d of %d", i+1, tc.limit)
			}
			assert.False(t, s.TryBecomeSearcher(), "one past the cap")
			assert.Equal(t, tc.limit, s.Searching())
			// One leaves: one more may join, and no more.
			assert.False(t, s.TransitionFromSearching() && tc.limit > 1)
			assert.True(t, s.TryBecomeSearcher())
			assert.False(t, s.TryBecomeSearcher())
		})
	}
}

// TestTransitions walks each transition from a known state and checks the
// counts, the parked bits and the typed results.
func TestTransitions(t *testing.T) {
	type want struct{ searching, parked int }
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s *idle.State) // on a State of 4 workers
		want want
		bits []int // workers whose parked bit is set afterwards
	}{
		{"new", func(t *testing.T, s *idle.State) {}, want{0, 0}, nil},
		{"become searcher", func(t *testing.T, s *idle.State) {
			assert.True(t, s.TryBecomeSearcher())
		}, want{1, 0}, nil},
		{"searcher finds work, last, nobody parked", func(t *testing.T, s *idle.State) {
			s.TryBecomeSearcher()
			assert.True(t, s.TransitionFromSearching())
		}, want{0, 0}, nil},
		{"searcher finds work, not last", func(t *testing.T, s *idle.State) {
			s.TryBecomeSearcher()
			s.TryBecomeSearcher()
			assert.False(t, s.TransitionFromSearching())
		}, want{1, 0}, nil},
		{"non-searcher prepares to park", func(t *testing.T, s *idle.State) {
			assert.Equal(t, idle.Prepared{}, s.PrepareToPark(2, false))
		}, want{0, 1}, []int{2}},
		{"last searcher prepares to park", func(t *testing.T, s *idle.State) {
			s.TryBecomeSearcher()
			assert.Equal(t, idle.Prepared{WasLastSearcher: true}, s.PrepareToPark(1, true))
		}, want{0, 1}, []int{1}},
		{"searcher prepares to park, not last", func(t *testing.T, s *idle.State) {
			s.TryBecomeSearcher()
			s.TryBecomeSearcher()
			assert.Equal(t, idle.Prepared{}, s.PrepareToPark(1, true))
		}, want{1, 1}, []int{1}},
		{"notify with nobody parked", func(t *testing.T, s *idle.State) {
			assert.False(t, s.NotifyOne())
		}, want{0, 0}, nil},
		{"notify with a searcher", func(t *testing.T, s *idle.State) {
			s.PrepareToPark(3, false)
			s.TryBecomeSearcher()
			assert.False(t, s.NotifyOne())
		}, want{1, 1}, []int{3}},
		{"notify claims a parked worker as a searcher", func(t *testing.T, s *idle.State) {
			s.PrepareToPark(3, false)
			assert.True(t, s.NotifyOne())
			assert.False(t, s.NotifyOne(), "the claimed worker is a searcher now")
		}, want{1, 0}, nil},
		{"claimed worker's park returns Notified", func(t *testing.T, s *idle.State) {
			s.PrepareToPark(3, false)
			s.NotifyOne()
			assert.Equal(t, idle.Notified, s.Park(3, time.Hour))
		}, want{1, 0}, nil},
		{"notified worker parks again as last searcher", func(t *testing.T, s *idle.State) {
			s.PrepareToPark(3, false)
			s.NotifyOne()
			s.Park(3, -1)
			assert.True(t, s.PrepareToPark(3, true).WasLastSearcher)
		}, want{0, 1}, []int{3}},
		{"last searcher finding work wakes a parked worker", func(t *testing.T, s *idle.State) {
			s.PrepareToPark(0, false)
			s.TryBecomeSearcher()
			assert.True(t, s.TransitionFromSearching())
			assert.Equal(t, idle.Notified, s.Park(0, 0))
		}, want{1, 0}, nil},
		{"park poll unclaimed times out", func(t *testing.T, s *idle.State) {
			s.PrepareToPark(2, false)
			assert.Equal(t, idle.TimedOut, s.Park(2, 0))
		}, want{0, 0}, nil},
		{"park timer unclaimed times out", func(t *testing.T, s *idle.State) {
			s.PrepareToPark(2, false)
			assert.Equal(t, idle.TimedOut, s.Park(2, time.Millisecond))
			s.PrepareToPark(2, false) // the reused timer
			assert.Equal(t, idle.TimedOut, s.Park(2, time.Millisecond))
		}, want{0, 0}, nil},
		{"close wakes parked workers", func(t *testing.T, s *idle.State) {
			s.PrepareToPark(0, false)
			s.PrepareToPark(3, false)
			assert.Equal(t, 2, s.Close())
			assert.Equal(t, 0, s.Close(), "idempotent")
			assert.Equal(t, idle.Closed, s.Park(0, -1))
			assert.Equal(t, idle.Closed, s.Park(3, time.Hour))
		}, want{0, 0}, nil},
		{"park after close returns at once", func(t *testing.T, s *idle.State) {
			s.Close()
			s.PrepareToPark(1, false)
			assert.Equal(t, idle.Closed, s.Park(1, -1))
		}, want{0, 0}, nil},
		{"claimed before close stays Notified", func(t *testing.T, s *idle.State) {
			s.PrepareToPark(1, false)
			s.NotifyOne()
			assert.Equal(t, 0, s.Close())
			assert.Equal(t, idle.Notified, s.Park(1, -1))
			assert.True(t, s.PrepareToPark(1, true).WasLastSearcher)
			assert.Equal(t, idle.Closed, s.Park(1, -1))
		}, want{0, 0}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := idle.New(4)
			tc.run(t, s)
			assert.Equal(t, tc.want.searching, s.Searching(), "searching")
			assert.Equal(t, tc.want.parked, s.Parked(), "parked")
			var bits []int
			for i := range 4 {
				if s.IsParked(i) {
					bits = append(bits, i)
				}
			}
			assert.Equal(t, tc.bits, bits, "parked bits")
		})
	}
}

func TestMisusePanicsWithSentinels(t *testing.T) {
	is := func(target error, f func()) {
		t.Helper()
		defer func() {
			t.Helper()
			r := recover()
			err, ok := r.(error)
			if assert.True(t, ok, "panic value %v", r) {
				assert.ErrorIs(t, err, target)
			}
		}()
		f()
	}
	s := idle.New(2)
	is(idle.ErrNotSearching, func() { s.TransitionFromSearching() })
	is(idle.ErrNotSearching, func() { s.PrepareToPark(0, true) })
	is(idle.ErrNotPrepared, func() { s.Park(0, 0) })
	is(idle.ErrWorkerID, func() { s.PrepareToPark(2, false) })
	is(idle.ErrWorkerID, func() { s.Park(-1, 0) })
	is(idle.ErrWorkerID, func() { s.IsParked(5) })
	s.PrepareToPark(1, false)
	is(idle.ErrAlreadyPrepared, func() { s.PrepareToPark(1, false) })
	assert.Equal(t, 0, s.Searching())
	assert.Equal(t, 1, s.Parked(), "a rejected call changes nothing")
	assert.Equal(t, idle.TimedOut, s.Park(1, 0))
}

// TestEarlyNotifyIsNotLost claims a worker between its PrepareToPark and its
// Park: the Park, even without a timeout, returns at once.
func TestEarlyNotifyIsNotLost(t *testing.T) {
	s := idle.New(1)
	s.PrepareToPark(0, false)
	require.True(t, s.NotifyOne())
	done := make(chan idle.ParkResult)
	go func() { done <- s.Park(0, -1) }()
	select {
	case r := <-done:
		assert.Equal(t, idle.Notified, r)
	case <-time.After(10 * time.Second):
		s.Close()
		t.Fatal("Park slept through an earlier notify")
	}
}

// TestTimedOutButClaimedReportsTheClaim plays the race of "Timeouts" step by
// step: the notifier clears the worker's bit, the worker's timer fires
// before the token is sent, and Park must wait for the token and report
// Notified, leaving the worker counted as the searcher it now is.
func TestTimedOutButClaimedReportsTheClaim(t *testing.T) {
	s := idle.New(2)
	s.PrepareToPark(1, false)
	require.True(t, s.ClaimWithoutToken(1))
	done := make(chan idle.ParkResult)
	go func() { done <- s.Park(1, time.Millisecond) }()
	select {
	case r := <-done:
		t.Fatalf("Park returned %v before the claimer's token", r)
	case <-time.After(50 * time.Millisecond): // the timer has fired long ago
	}
	s.SendNotifyToken(1)
	assert.Equal(t, idle.Notified, <-done)
	assert.Equal(t, 1, s.Searching())
	assert.Equal(t, 0, s.Parked())
	assert.False(t, s.IsParked(1))
}

// TestCloseWakesEveryParkedWorker parks 100 worker goroutines without a
// timeout and checks that Close releases each with Closed, whether it
// finds them asleep or they reach Park after it.
func TestCloseWakesEveryParkedWorker(t *testing.T) {
	const n = 100
	s := idle.New(n)
	results := make(chan idle.ParkResult, n)
	for id := range n {
		s.PrepareToPark(id, false) // announced here, so Close surely finds them
		go func() { results <- s.Park(id, -1) }()
	}
	// Close wakes the workers already in Park; one that enters Park after
	// Close's flag store withdraws its own announcement instead.
	assert.LessOrEqual(t, s.Close(), n)
	for range n {
		select {
		case r := <-results:
			assert.Equal(t, idle.Closed, r)
		case <-time.After(10 * time.Second):
			t.Fatal("a worker slept through Close")
		}
	}
	assert.Equal(t, 0, s.Parked())
	assert.Equal(t, 0, s.Searching())
}

func TestParkResultString(t *testing.T) {
	assert.Equal(t, "Notified", idle.Notified.String())
	assert.Equal(t, "TimedOut", idle.TimedOut.String())
	assert.Equal(t, "Closed", idle.Closed.String())
	assert.Equal(t, "ParkResult(9)", idle.ParkResult(9).String())
	s := idle.New(70)
	s.PrepareToPark(65, false)
	assert.Equal(t, "idle.State{workers: 70, searching: 0, parked: 1, parked bits: [65], closed: false}", s.String())
	assert.True(t, errors.Is(fmt.Errorf("x: %w", idle.ErrWorkerID), idle.ErrWorkerID))
}
