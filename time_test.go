package blitz_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
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
			sf = blitz.SleepUntil(start.Add(d))
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
	rt := newRuntime(t, blitz.Config{Workers: 2})
	n := 2000
	if testing.Short() {
		n = 300
	}
	rng := rand.New(rand.NewPCG(1, 2))
	durs := make([]time.Duration, n)
	hs := make([]blitz.JoinHandle[time.Duration], n)
	for i := range hs {
		durs[i] = time.Duration(rng.IntN(30_000)) * time.Microsecond
		hs[i] = blitz.SpawnOn(rt.Handle(), sleepMeasure(durs[i]))
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
	rt := newRuntime(t, blitz.Config{Workers: 1})
	for _, f := range []future.Future[struct{}]{blitz.Sleep(0), blitz.Sleep(-time.Second), blitz.SleepUntil(time.Now().Add(-time.Hour))} {
		_, err := blitz.BlockOn(testCtx(t), rt.Handle(), f)
		require.NoError(t, err)
	}
	assert.Zero(t, rt.Stats().Timers)
}

// TestSleepCancelLeavesWheel shows that a cancelled sleep leaves the wheel at
// once: Stats().Timers counts it while pending and not after Cancel.
func TestSleepCancelLeavesWheel(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	sleeps := make([]future.Future[struct{}], 100)
	_, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.PollFn(func(cx *future.Context) (struct{}, bool) {
		for i := range sleeps {
			sleeps[i] = blitz.Sleep(time.Hour)
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
	rt := newRuntime(t, blitz.Config{Workers: 2})
	var sf blitz.SleepFuture
	for range 5 {
		sf.ResetAfter(2 * time.Millisecond)
		start := time.Now()
		_, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[struct{}](&sf))
		require.NoError(t, err)
		require.GreaterOrEqual(t, time.Since(start), time.Millisecond)
	}
	assert.Zero(t, rt.Stats().Timers)
}

// TestSleepResetMovesToAnotherRuntime: a SleepFuture reset after a runtime
// polled it, and that runtime shut down, waits in the wheel of the next
// runtime that polls it (a sleep kept in a pool and taken by another
// server).
func TestSleepResetMovesToAnotherRuntime(t *testing.T) {
	var sf blitz.SleepFuture
	a, err := blitz.New(blitz.Config{Workers: 1})
	require.NoError(t, err)
	sf.ResetAfter(time.Hour)
	_, err = blitz.BlockOn(testCtx(t), a.Handle(), future.Future[bool](pollSleepOnce{&sf}))
	require.NoError(t, err)
	require.Equal(t, 1, a.Stats().Timers, "the sleep waits in the first runtime's wheel")
	sf.Cancel()
	require.NoError(t, a.Shutdown(testCtx(t)))

	b := newRuntime(t, blitz.Config{Workers: 1})
	sf.ResetAfter(2 * time.Millisecond)
	ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err = blitz.BlockOn(ctx, b.Handle(), future.Future[struct{}](&sf))
	require.NoError(t, err, "the sleep never fired in the second runtime")
	require.GreaterOrEqual(t, time.Since(start), time.Millisecond)
	assert.Zero(t, b.Stats().Timers)
}

// pollSleepOnce polls a sleep once and completes, reporting whether the
// sleep did.
type pollSleepOnce struct{ s *blitz.SleepFuture }

func (p pollSleepOnce) Poll(cx *future.Context) (bool, bool) {
	_, ok := p.s.Poll(cx)
	return ok, true
}

// TestSleepOutsideRuntime falls back to a Go timer when no runtime polls.
func TestSleepOutsideRuntime(t *testing.T) {
	start := time.Now()
	_, err := future.Block(testCtx(t), (blitz.Sleep(5 * time.Millisecond)))
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(start), 5*time.Millisecond)
	// Cancel stops the fallback timer.
	s := blitz.Sleep(time.Hour)
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
	rt := newRuntime(t, blitz.Config{Workers: 2})
	inner := &cancelCounter{}
	start := time.Now()
	r, err := blitz.BlockOn(testCtx(t), rt.Handle(), (blitz.Timeout(10*time.Millisecond, future.Future[int](inner))))
	require.NoError(t, err)
	require.ErrorIs(t, r.Err, blitz.ErrTimeout)
	require.GreaterOrEqual(t, time.Since(start), 10*time.Millisecond)
	require.EqualValues(t, 1, inner.cancels.Load(), "the timed-out future was not cancelled")
	assert.Zero(t, rt.Stats().Timers)

	r, err = blitz.BlockOn(testCtx(t), rt.Handle(), (blitz.Timeout(time.Hour, future.Ready(7))))
	require.NoError(t, err)
	require.NoError(t, r.Err)
	require.Equal(t, 7, r.Value)
	assert.Zero(t, rt.Stats().Timers, "the timer of a timeout whose future won stayed in the wheel")

	// Deadline in the past: the inner future is still polled first.
	r, err = blitz.BlockOn(testCtx(t), rt.Handle(), (blitz.Deadline(time.Now().Add(-time.Second), future.Ready(3))))
	require.NoError(t, err)
	require.Equal(t, 3, r.Value)

	// Cancelling the timeout cancels both.
	inner2 := &cancelCounter{}
	to := blitz.Timeout(time.Hour, future.Future[int](inner2))
	_, err = blitz.BlockOn(testCtx(t), rt.Handle(), future.PollFn(func(cx *future.Context) (struct{}, bool) {
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
	rt := newRuntime(t, blitz.Config{Workers: 2})
	inner := &cancelCounter{}
	h := blitz.SpawnOn(rt.Handle(), future.Future[int](inner))
	r, err := blitz.BlockOn(testCtx(t), rt.Handle(), blitz.Timeout(5*time.Millisecond, h.Future()))
	require.NoError(t, err)
	require.ErrorIs(t, r.Err, blitz.ErrTimeout)
	_, err = h.Wait(testCtx(t))
	require.ErrorIs(t, err, blitz.ErrCancelled)
	require.EqualValues(t, 1, inner.cancels.Load())
}

// intervalTick is one tick of an Interval as the test saw it: the scheduled
// time the interval returned, and the wall-clock moments just before and
// just after the Poll that returned it. The interval computes the next tick
// from its own reading of the clock, which lies between before and after.
type intervalTick struct {
	tick, before, after time.Time
}

// intervalTicks starts an Interval of period p with the given behaviour at
// the current time and polls it for n ticks, sleeping block (blocking the
// worker) after the first tick to make the following ones late. It returns
// the start and the ticks.
func intervalTicks(t *testing.T, rt *blitz.Runtime, p time.Duration, missed blitz.MissedTickBehavior, n int, block time.Duration) (time.Time, []intervalTick) {
	start := time.Now()
	iv, err := blitz.NewIntervalAt(start, p, missed)
	require.NoError(t, err)
	var got []intervalTick
	_, err = blitz.BlockOn(testCtx(t), rt.Handle(), future.PollFn(func(cx *future.Context) (struct{}, bool) {
		for len(got) < n {
			before := time.Now()
			tick, ok := iv.Poll(cx)
			if !ok {
				return struct{}{}, false
			}
			got = append(got, intervalTick{tick: tick, before: before, after: time.Now()})
			if len(got) == 1 {
				time.Sleep(block)
			}
		}
		return struct{}{}, true
	}))
	require.NoError(t, err)
	iv.Cancel()
	return start, got
}

// TestIntervalBehaviours checks the three missed-tick behaviours after the
// consumer falls 3.5 periods behind. The checks hold however late the first
// poll comes (a slow platform may deliver tick 0 after tick 1 was due, which
// already makes tick 1 late): each next tick is checked against the clock
// readings around the poll that delivered the tick before it.
func TestIntervalBehaviours(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	const p = 10 * time.Millisecond
	const block = 35 * time.Millisecond

	t.Run("burst", func(t *testing.T) {
		start, got := intervalTicks(t, rt, p, blitz.Burst, 6, block)
		for i, g := range got {
			require.Equal(t, start.Add(time.Duration(i)*p), g.tick, "burst keeps the schedule")
			require.False(t, g.after.Before(g.tick), "tick %d delivered early", i)
		}
		// Ticks 1 to 3 were all due before the consumer came back, so they
		// come back to back, not a period apart.
		require.Less(t, got[3].after.Sub(got[1].after), 2*p)
	})

	t.Run("skip", func(t *testing.T) {
		start, got := intervalTicks(t, rt, p, blitz.Skip, 3, block)
		require.Equal(t, start, got[0].tick)
		for i := 1; i < len(got); i++ {
			prev, g := got[i-1], got[i]
			require.Zero(t, g.tick.Sub(start)%p, "skip left the schedule: %v", g.tick.Sub(start))
			require.True(t, g.tick.After(prev.tick))
			// The next tick is the first multiple of p after the previous
			// delivery: not before it, and not a whole period after it.
			require.False(t, g.tick.Before(prev.before), "tick %d was in the past when scheduled", i)
			require.False(t, g.tick.Add(-p).After(prev.after), "skip dropped tick %d's predecessor that was still ahead", i)
			require.False(t, g.after.Before(g.tick), "tick %d delivered early", i)
		}
		// The consumer blocked after tick 0, so tick 2 comes at least
		// block after tick 0 was delivered: the missed ones were dropped.
		require.False(t, got[2].tick.Before(got[0].after.Add(block)))
	})

	t.Run("delay", func(t *testing.T) {
		start, got := intervalTicks(t, rt, p, blitz.Delay, 3, block)
		require.Equal(t, start, got[0].tick)
		for i := 1; i < len(got); i++ {
			prev, g := got[i-1], got[i]
			require.False(t, g.after.Before(g.tick), "tick %d delivered early", i)
			if g.tick.Equal(prev.tick.Add(p)) {
				// On time: the next tick is a period after the last one,
				// allowed only if the previous tick was not late.
				require.False(t, prev.before.After(g.tick), "tick %d kept a schedule it was late for", i)
				continue
			}
			// Late: the schedule restarts a period after the delivery.
			require.False(t, g.tick.Add(-p).Before(prev.before), "tick %d", i)
			require.False(t, g.tick.Add(-p).After(prev.after), "tick %d", i)
		}
		// Tick 1 was due within a period of tick 0's delivery and delivered
		// block later, so tick 2 was rescheduled from that late delivery.
		require.False(t, got[2].tick.Before(got[1].before.Add(p)))
		require.False(t, got[2].tick.After(got[1].after.Add(p)))
		assert.Zero(t, rt.Stats().Timers)
	})
}

// TestIntervalConfig rejects bad periods and behaviours.
func TestIntervalConfig(t *testing.T) {
	_, err := blitz.NewInterval(0, blitz.Burst)
	require.ErrorIs(t, err, blitz.ErrConfig)
	_, err = blitz.NewInterval(time.Second, blitz.MissedTickBehavior(9))
	require.ErrorIs(t, err, blitz.ErrConfig)
	require.Equal(t, "skip", blitz.Skip.String())
}

// TestTimerWakesParkedWorkers: with every worker parked, a sleep inserted
// from outside still fires on time (the insert notifies a worker, which
// parks again with the new timeout).
func TestTimerWakesParkedWorkers(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	time.Sleep(20 * time.Millisecond) // let both workers park without timers
	for range 5 {
		start := time.Now()
		_, err := blitz.BlockOn(testCtx(t), rt.Handle(), (blitz.Sleep(3 * time.Millisecond)))
		require.NoError(t, err)
		el := time.Since(start)
		require.GreaterOrEqual(t, el, 3*time.Millisecond)
		require.Less(t, el, time.Second, "a sleep waited for an unrelated wakeup")
	}
}

// TestBlockOnContextAndShutdown: BlockOn returns the context's error and
// cancels its future; after Shutdown it returns ErrShutdown.
func TestBlockOnContextAndShutdown(t *testing.T) {
	rt, err := blitz.New(blitz.Config{Workers: 1})
	require.NoError(t, err)
	inner := &cancelCounter{}
	ctx, cancel := contextWithTimeout(5 * time.Millisecond)
	defer cancel()
	_, err = blitz.BlockOn(ctx, rt.Handle(), future.Future[int](inner))
	require.Error(t, err)
	require.True(t, errors.Is(err, errDeadline()), "got %v", err)
	require.EqualValues(t, 1, inner.cancels.Load())

	inner2 := &cancelCounter{}
	done := make(chan error, 1)
	go func() {
		_, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[int](inner2))
		done <- err
	}()
	for inner2.polls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, rt.Shutdown(testCtx(t)))
	require.ErrorIs(t, <-done, blitz.ErrShutdown)
	require.EqualValues(t, 1, inner2.cancels.Load())

	// Spawning after shutdown: the handle reports ErrShutdown.
	h := blitz.SpawnOn(rt.Handle(), future.Ready(1))
	_, err = h.Wait(testCtx(t))
	require.ErrorIs(t, err, blitz.ErrShutdown)
	_, err = blitz.TrySpawnOn(rt.Handle(), future.Ready(1))
	require.ErrorIs(t, err, blitz.ErrShutdown)
}

// TestSleepRearmedAsItFires re-arms a sleep just as the worker fires the one
// before, over and over, so that the arm races the driver's scan, publish
// and timeout. A lost timer shows as a BlockOn that runs into its 2 s
// context instead of ending a millisecond later. Under -race this hung about
// one iteration in 2,000 before the driver clamped a timeout that went
// negative while it was computed.
func TestSleepRearmedAsItFires(t *testing.T) {
	iterations := 3000
	if testing.Short() {
		iterations = 300
	}
	for _, backend := range []string{blitz.BackendNone, blitz.BackendAuto} {
		t.Run("backend="+backend, func(t *testing.T) {
			rt := newRuntime(t, blitz.Config{Workers: 1, Backend: backend})
			var s blitz.SleepFuture
			for i := range iterations {
				s.ResetAfter(time.Millisecond)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, err := blitz.BlockOn(ctx, rt.Handle(), sleepPolledAtItsDeadline(&s))
				cancel()
				require.NoError(t, err, "iteration %d: %d timers pending", i, rt.Stats().Timers)
			}
		})
	}
}

// sleepPolledAtItsDeadline polls s once to arm it, spins until its deadline
// (so that the next poll lands when the worker fires it), and then polls it
// until it completes.
func sleepPolledAtItsDeadline(s *blitz.SleepFuture) future.Future[struct{}] {
	armed := false
	return future.PollFn(func(cx *future.Context) (struct{}, bool) {
		if !armed {
			armed = true
			if _, ok := s.Poll(cx); ok {
				return struct{}{}, true
			}
			for time.Now().Before(s.Deadline()) {
			}
		}
		return s.Poll(cx)
	})
}
