package blitz_test

import (
	"errors"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// firstPoll polls f once in a task of rt and returns what that poll gave,
// with the number of sleeps in the wheels right after it. f is cancelled if
// it was not ready.
func firstPoll[T any](t *testing.T, rt *blitz.Runtime, f future.Future[T]) (v T, ready bool, timers int) {
	t.Helper()
	_, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.PollFn(func(cx *future.Context) (struct{}, bool) {
		v, ready = f.Poll(cx)
		timers = rt.Stats().Timers
		if !ready {
			future.Cancel(f)
		}
		return struct{}{}, true
	}))
	require.NoError(t, err)
	return v, ready, timers
}

// TestSleepNonPositiveReadyAtFirstPoll: a sleep whose deadline has passed
// (a duration of zero or less, a past time, the zero SleepFuture) is ready
// on its first poll, without waiting for a timer tick and without a place in
// the timer wheel.
func TestSleepNonPositiveReadyAtFirstPoll(t *testing.T) {
	forEachTimeBackend(t, func(t *testing.T, rt *blitz.Runtime) {
		sleeps := map[string]func() future.Future[struct{}]{
			"Sleep(0)":              func() future.Future[struct{}] { return blitz.Sleep(0) },
			"Sleep(-1)":             func() future.Future[struct{}] { return blitz.Sleep(-1) },
			"Sleep(MinInt64)":       func() future.Future[struct{}] { return blitz.Sleep(-1 << 63) },
			"SleepUntil(now)":       func() future.Future[struct{}] { return blitz.SleepUntil(time.Now()) },
			"SleepUntil(past)":      func() future.Future[struct{}] { return blitz.SleepUntil(time.Now().Add(-time.Millisecond)) },
			"SleepUntil(wall past)": func() future.Future[struct{}] { return blitz.SleepUntil(time.Now().Round(0).Add(-time.Second)) },
			"SleepUntil(zero)":      func() future.Future[struct{}] { return blitz.SleepUntil(time.Time{}) },
			"zero SleepFuture":      func() future.Future[struct{}] { return &blitz.SleepFuture{} },
			"ResetAfter(0) after a sleep": func() future.Future[struct{}] {
				var s blitz.SleepFuture
				s.ResetAfter(time.Millisecond)
				_, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[struct{}](&s))
				require.NoError(t, err)
				s.ResetAfter(0)
				return &s
			},
			"ResetAfter(0) of a pending sleep": func() future.Future[struct{}] {
				var s blitz.SleepFuture
				s.ResetAfter(time.Hour)
				_, _, timers := firstPoll(t, rt, future.Future[struct{}](&s))
				require.Equal(t, 1, timers)
				s.ResetAfter(0)
				return &s
			},
		}
		for name, mk := range sleeps {
			for range 20 {
				_, ready, timers := firstPoll(t, rt, mk())
				require.True(t, ready, "%s not ready at its first poll", name)
				require.Zero(t, timers, "%s took a timer entry", name)
			}
		}
		assert.Zero(t, rt.Stats().Timers)
	})
}

// TestTimeoutZero: a timeout of zero (or a deadline already passed) still
// polls the inner future once: a future ready at that poll gives its value,
// as Tokio's timeout does; one that is not fails with ErrTimeout at that
// same first poll, and is cancelled.
func TestTimeoutZero(t *testing.T) {
	forEachTimeBackend(t, func(t *testing.T, rt *blitz.Runtime) {
		for _, d := range []time.Duration{0, -time.Second} {
			r, ready, _ := firstPoll(t, rt, blitz.Timeout(d, future.Ready(5)))
			require.True(t, ready)
			require.NoError(t, r.Err)
			assert.Equal(t, 5, r.Value)

			inner := &cancelCounter{}
			r, ready, timers := firstPoll(t, rt, blitz.Timeout(d, future.Future[int](inner)))
			require.True(t, ready, "Timeout(%v, pending) not done at its first poll", d)
			require.ErrorIs(t, r.Err, blitz.ErrTimeout)
			assert.Zero(t, timers)
			assert.EqualValues(t, 1, inner.polls.Load())
			assert.EqualValues(t, 1, inner.cancels.Load())
		}
		inner := &cancelCounter{}
		r, ready, _ := firstPoll(t, rt, blitz.Deadline(time.Now(), future.Future[int](inner)))
		require.True(t, ready)
		require.ErrorIs(t, r.Err, blitz.ErrTimeout)
		assert.EqualValues(t, 1, inner.cancels.Load())
	})
}

// TestTimeoutNilFuture: Timeout and Deadline of a nil future resolve at
// their first poll with an error matching ErrNilFuture, in a runtime
// and outside one.
func TestTimeoutNilFuture(t *testing.T) {
	check := func(t *testing.T, f future.Future[future.Result[int]], poll func(future.Future[future.Result[int]]) (future.Result[int], bool)) {
		t.Helper()
		var r future.Result[int]
		var ready bool
		require.NotPanics(t, func() { r, ready = poll(f) })
		require.True(t, ready)
		require.Error(t, r.Err)
		assert.True(t, errors.Is(r.Err, blitz.ErrNilFuture), "got %v", r.Err)
		assert.True(t, errors.Is(r.Err, future.ErrNilFuture), "got %v", r.Err)
		assert.Contains(t, r.Err.Error(), "blitz: ")
	}
	forEachTimeBackend(t, func(t *testing.T, rt *blitz.Runtime) {
		inRuntime := func(f future.Future[future.Result[int]]) (future.Result[int], bool) {
			r, ready, _ := firstPoll(t, rt, f)
			return r, ready
		}
		check(t, blitz.Timeout[int](time.Second, nil), inRuntime)
		check(t, blitz.Timeout[int](0, nil), inRuntime)
		check(t, blitz.Deadline[int](time.Now().Add(time.Hour), nil), inRuntime)
	})
	t.Run("no runtime", func(t *testing.T) {
		outside := func(f future.Future[future.Result[int]]) (future.Result[int], bool) {
			return f.Poll(future.NewContext(noopWaker()))
		}
		check(t, blitz.Timeout[int](time.Second, nil), outside)
		check(t, blitz.Deadline[int](time.Time{}, nil), outside)
		// Cancel of such a future is harmless.
		f := blitz.Timeout[int](time.Second, nil)
		require.NotPanics(t, func() { future.Cancel(f); future.Cancel(f) })
	})
}

// TestIntervalFirstTickImmediate: NewInterval's first tick is delivered at
// the first poll, as Tokio's interval's is; the next one waits a period.
func TestIntervalFirstTickImmediate(t *testing.T) {
	forEachTimeBackend(t, func(t *testing.T, rt *blitz.Runtime) {
		for _, missed := range []blitz.MissedTickBehavior{blitz.Burst, blitz.Delay, blitz.Skip} {
			for range 10 {
				before := time.Now()
				iv, err := blitz.NewInterval(time.Hour, missed)
				require.NoError(t, err)
				var tick time.Time
				var ready bool
				_, err = blitz.BlockOn(testCtx(t), rt.Handle(), future.PollFn(func(cx *future.Context) (struct{}, bool) {
					tick, ready = iv.Poll(cx)
					require.True(t, ready, "%v: first tick not delivered at the first poll", missed)
					_, again := iv.Poll(cx)
					require.False(t, again, "%v: second tick came at once", missed)
					return struct{}{}, true
				}))
				require.NoError(t, err)
				require.False(t, tick.Before(before), "%v: first tick %v before NewInterval was called (%v)", missed, tick, before)
				iv.Cancel()
			}
		}
		assert.Zero(t, rt.Stats().Timers)
	})
}
