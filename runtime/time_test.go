package runtime_test

import (
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sleepMeasure sleeps d and returns how long after the call it resumed.
func sleepMeasure(d time.Duration) future.Future[time.Duration] {
	var start time.Time
	var sf future.Future[struct{}]
	return future.PollFn(func(cx *future.Context) (time.Duration, bool) {
		if sf == nil {
			start = time.Now()
			sf = runtime.SleepUntil(start.Add(d))
		}
		if _, ok := sf.Poll(cx); !ok {
			return 0, false
		}
		return time.Since(start), true
	})
}

// TestSleepNeverEarly runs many sleeps of random lengths at once and checks
// that none resumes before its duration, and that the wheels end empty.
func TestSleepNeverEarly(t *testing.T) {
	rt := newRuntime(t, runtime.Config{Workers: 2})
	n := 2000
	if testing.Short() {
		n = 300
	}
	rng := rand.New(rand.NewPCG(1, 2))
	durs := make([]time.Duration, n)
	hs := make([]runtime.JoinHandle[time.Duration], n)
	for i := range hs {
		durs[i] = time.Duration(rng.IntN(30_000)) * time.Microsecond
		hs[i] = runtime.SpawnOn(rt.Handle(), sleepMeasure(durs[i]))
	}
	for i, h := range hs {
		got, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		require.GreaterOrEqual(t, got, durs[i], "sleep %d of %v resumed early", i, durs[i])
	}
	assert.Zero(t, rt.Stats().Timers, "fired sleeps left in the wheel")
}

// TestSleepZeroAndPast completes at once for a deadline already passed.
func TestSleepZeroAndPast(t *testing.T) {
	rt := newRuntime(t, runtime.Config{Workers: 1})
	for _, f := range []future.Future[struct{}]{runtime.Sleep(0), runtime.Sleep(-time.Second), runtime.SleepUntil(time.Now().Add(-time.Hour))} {
		_, err := runtime.BlockOn(testCtx(t), rt.Handle(), f)
		require.NoError(t, err)
	}
	assert.Zero(t, rt.Stats().Timers)
}

// TestSleepCancelLeavesWheel shows that a cancelled sleep leaves the wheel at
// once: Stats().Timers counts it while pending and not after Cancel.
func TestSleepCancelLeavesWheel(t *testing.T) {
	rt := newRuntime(t, runtime.Config{Workers: 1})
	sleeps := make([]future.Future[struct{}], 100)
	_, err := runtime.BlockOn(testCtx(t), rt.Handle(), future.PollFn(func(cx *future.Context) (struct{}, bool) {
		for i := range sleeps {
			sleeps[i] = runtime.Sleep(time.Hour)
			_, ok := sleeps[i].Poll(cx)
			require.False(t, ok)
		}
		return struct{}{}, true
	}))
	require.NoError(t, err)
	require.Equal(t, 100, rt.Stats().Timers)
	for i, s := range sleeps {
		future.Cancel(s)
		future.Cancel(s) // idempotent
		require.Equal(t, 100-i-1, rt.Stats().Timers)
	}
	require.PanicsWithValue(t, future.ErrPolledAfterCancel, func() {
		sleeps[0].Poll(future.NewContext(noopWaker()))
	})
}

// TestSleepResetReuses re-arms one SleepFuture many times.
func TestSleepResetReuses(t *testing.T) {
	rt := newRuntime(t, runtime.Config{Workers: 2})
	var sf runtime.SleepFuture
	for range 5 {
		sf.ResetAfter(2 * time.Millisecond)
		start := time.Now()
		_, err := runtime.BlockOn(testCtx(t), rt.Handle(), future.Future[struct{}](&sf))
		require.NoError(t, err)
		require.GreaterOrEqual(t, time.Since(start), time.Millisecond)
	}
	assert.Zero(t, rt.Stats().Timers)
}

// TestSleepOutsideRuntime falls back to a Go timer when no runtime polls.
func TestSleepOutsideRuntime(t *testing.T) {
	start := time.Now()
	_, err := future.Block(testCtx(t), (runtime.Sleep(5 * time.Millisecond)))
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(start), 5*time.Millisecond)
	// Cancel stops the fallback timer.
	s := runtime.Sleep(time.Hour)
	_, ok := s.Poll(future.NewContext(noopWaker()))
	require.False(t, ok)
	future.Cancel(s)
}

// cancelCounter is a future that never completes and counts its Cancels.
type cancelCounter struct {
	polls, cancels atomic.Int32
}

func (c *cancelCounter) Poll(*future.Context) (int, bool) { c.polls.Add(1); return 0, false }
func (c *cancelCounter) Cancel()                          { c.cancels.Add(1) }

// TestTimeout: a timeout that expires cancels the inner future and reports
// ErrTimeout; an inner future that completes first removes the timer.
func TestTimeout(t *testing.T) {
	rt := newRuntime(t, runtime.Config{Workers: 2})
	inner := &cancelCounter{}
	start := time.Now()
	r, err := runtime.BlockOn(testCtx(t), rt.Handle(), (runtime.Timeout(10*time.Millisecond, future.Future[int](inner))))
	require.NoError(t, err)
	require.ErrorIs(t, r.Err, runtime.ErrTimeout)
	require.GreaterOrEqual(t, time.Since(start), 10*time.Millisecond)
	require.EqualValues(t, 1, inner.cancels.Load(), "the timed-out future was not cancelled")
	assert.Zero(t, rt.Stats().Timers)

	r, err = runtime.BlockOn(testCtx(t), rt.Handle(), (runtime.Timeout(time.Hour, future.Ready(7))))
	require.NoError(t, err)
	require.NoError(t, r.Err)
	require.Equal(t, 7, r.Value)
	assert.Zero(t, rt.Stats().Timers, "the timer of a timeout whose future won stayed in the wheel")

	// Deadline in the past: the inner future is still polled first.
	r, err = runtime.BlockOn(testCtx(t), rt.Handle(), (runtime.Deadline(time.Now().Add(-time.Second), future.Ready(3))))
	require.NoError(t, err)
	require.Equal(t, 3, r.Value)

	// Cancelling the timeout cancels both.
	inner2 := &cancelCounter{}
	to := runtime.Timeout(time.Hour, future.Future[int](inner2))
	_, err = runtime.BlockOn(testCtx(t), rt.Handle(), future.PollFn(func(cx *future.Context) (struct{}, bool) {
		_, ok := to.Poll(cx)
		require.False(t, ok)
		return struct{}{}, true
	}))
	require.NoError(t, err)
	require.Equal(t, 1, rt.Stats().Timers)
	future.Cancel(to)
	future.Cancel(to)
	require.EqualValues(t, 1, inner2.cancels.Load())
	assert.Zero(t, rt.Stats().Timers)
}

// TestTimeoutAroundTask puts a timeout around a JoinHandle: the task is
// cancelled when the time runs out.
func TestTimeoutAroundTask(t *testing.T) {
	rt := newRuntime(t, runtime.Config{Workers: 2})
	inner := &cancelCounter{}
	h := runtime.SpawnOn(rt.Handle(), future.Future[int](inner))
	r, err := runtime.BlockOn(testCtx(t), rt.Handle(), runtime.Timeout(5*time.Millisecond, h.Future()))
	require.NoError(t, err)
	require.ErrorIs(t, r.Err, runtime.ErrTimeout)
	_, err = h.Wait(testCtx(t))
	require.ErrorIs(t, err, runtime.ErrCancelled)
	require.EqualValues(t, 1, inner.cancels.Load())
}

// intervalTicks polls iv for n ticks, sleeping block (blocking the worker)
// after the first tick to make the following ones late, and returns the
// tick times and the moments they were delivered.
func intervalTicks(t *testing.T, rt *runtime.Runtime, iv *runtime.Interval, n int, block time.Duration) (ticks, at []time.Time) {
	_, err := runtime.BlockOn(testCtx(t), rt.Handle(), future.PollFn(func(cx *future.Context) (struct{}, bool) {
		for len(ticks) < n {
			tick, ok := iv.Poll(cx)
			if !ok {
				return struct{}{}, false
			}
			ticks = append(ticks, tick)
			at = append(at, time.Now())
			if len(ticks) == 1 {
				time.Sleep(block)
			}
		}
		return struct{}{}, true
	}))
	require.NoError(t, err)
	iv.Cancel()
	return ticks, at
}

// TestIntervalBehaviours checks the three missed-tick behaviours after the
// consumer falls 3.5 periods behind.
func TestIntervalBehaviours(t *testing.T) {
	rt := newRuntime(t, runtime.Config{Workers: 1})
	const p = 10 * time.Millisecond
	start := time.Now()

	iv, err := runtime.NewIntervalAt(start, p, runtime.Burst)
	require.NoError(t, err)
	ticks, at := intervalTicks(t, rt, iv, 6, 35*time.Millisecond)
	for i, tk := range ticks {
		require.Equal(t, start.Add(time.Duration(i)*p), tk, "burst keeps the schedule")
		require.False(t, at[i].Before(tk), "tick %d delivered early", i)
	}
	// Ticks 1 to 3 were missed and come back to back, not a period apart
	// (2p leaves room for a slow platform's timer resolution).
	require.Less(t, at[3].Sub(at[1]), 2*p)

	start = time.Now()
	iv, err = runtime.NewIntervalAt(start, p, runtime.Skip)
	require.NoError(t, err)
	ticks, at = intervalTicks(t, rt, iv, 3, 35*time.Millisecond)
	require.Equal(t, start, ticks[0])
	// The late tick 1 is delivered, then the schedule resumes at the first
	// multiple of p still ahead when tick 1 was delivered: at least 40 ms
	// after start (the consumer blocked 35 ms), and no later than one
	// period after that delivery.
	require.Equal(t, start.Add(p), ticks[1])
	require.Zero(t, ticks[2].Sub(start)%p, "skip left the schedule: %v", ticks[2].Sub(start))
	require.GreaterOrEqual(t, ticks[2].Sub(start), 4*p)
	require.False(t, ticks[2].Add(-p).After(at[1]), "skip dropped a tick that was still ahead")
	require.False(t, at[2].Before(ticks[2]))

	start = time.Now()
	iv, err = runtime.NewIntervalAt(start, p, runtime.Delay)
	require.NoError(t, err)
	ticks, at = intervalTicks(t, rt, iv, 3, 35*time.Millisecond)
	require.Equal(t, start.Add(p), ticks[1])
	// The next tick is one period after the late one was delivered.
	require.GreaterOrEqual(t, ticks[2].Sub(at[1]), time.Duration(0))
	require.LessOrEqual(t, ticks[2].Sub(at[1]), p+time.Millisecond)
	require.GreaterOrEqual(t, ticks[2].Sub(ticks[1]), 3*p)
	require.False(t, at[2].Before(ticks[2]))
	assert.Zero(t, rt.Stats().Timers)
}

// TestIntervalConfig rejects bad periods and behaviours.
func TestIntervalConfig(t *testing.T) {
	_, err := runtime.NewInterval(0, runtime.Burst)
	require.ErrorIs(t, err, runtime.ErrConfig)
	_, err = runtime.NewInterval(time.Second, runtime.MissedTickBehavior(9))
	require.ErrorIs(t, err, runtime.ErrConfig)
	require.Equal(t, "skip", runtime.Skip.String())
}

// TestTimerWakesParkedWorkers: with every worker parked, a sleep inserted
// from outside still fires on time (the insert notifies a worker, which
// parks again with the new timeout).
func TestTimerWakesParkedWorkers(t *testing.T) {
	rt := newRuntime(t, runtime.Config{Workers: 2})
	time.Sleep(20 * time.Millisecond) // let both workers park without timers
	for range 5 {
		start := time.Now()
		_, err := runtime.BlockOn(testCtx(t), rt.Handle(), (runtime.Sleep(3 * time.Millisecond)))
		require.NoError(t, err)
		el := time.Since(start)
		require.GreaterOrEqual(t, el, 3*time.Millisecond)
		require.Less(t, el, time.Second, "a sleep waited for an unrelated wakeup")
	}
}

// TestBlockOnContextAndShutdown: BlockOn returns the context's error and
// cancels its future; after Shutdown it returns ErrShutdown.
func TestBlockOnContextAndShutdown(t *testing.T) {
	rt, err := runtime.New(runtime.Config{Workers: 1})
	require.NoError(t, err)
	inner := &cancelCounter{}
	ctx, cancel := contextWithTimeout(5 * time.Millisecond)
	defer cancel()
	_, err = runtime.BlockOn(ctx, rt.Handle(), future.Future[int](inner))
	require.Error(t, err)
	require.True(t, errors.Is(err, errDeadline()), "got %v", err)
	require.EqualValues(t, 1, inner.cancels.Load())

	inner2 := &cancelCounter{}
	done := make(chan error, 1)
	go func() {
		_, err := runtime.BlockOn(testCtx(t), rt.Handle(), future.Future[int](inner2))
		done <- err
	}()
	for inner2.polls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, rt.Shutdown(testCtx(t)))
	require.ErrorIs(t, <-done, runtime.ErrShutdown)
	require.EqualValues(t, 1, inner2.cancels.Load())

	// Spawning after shutdown: the handle reports ErrShutdown.
	h := runtime.SpawnOn(rt.Handle(), future.Ready(1))
	_, err = h.Wait(testCtx(t))
	require.ErrorIs(t, err, runtime.ErrShutdown)
	_, err = runtime.TrySpawnOn(rt.Handle(), future.Ready(1))
	require.ErrorIs(t, err, runtime.ErrShutdown)
}
