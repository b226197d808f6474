package blitz_test

import (
	"math"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// timeBackends are the backends the time tests run on: none (the workers
// park on their own) and the platform's default (a worker parks in the
// backend's wait).
var timeBackends = []string{blitz.BackendNone, blitz.BackendAuto}

// forEachTimeBackend runs body in a subtest per backend, with a fresh
// one-worker runtime.
func forEachTimeBackend(t *testing.T, body func(t *testing.T, rt *blitz.Runtime)) {
	for _, b := range timeBackends {
		t.Run("backend="+b, func(t *testing.T) {
			body(t, newRuntime(t, blitz.Config{Workers: 1, Backend: b}))
		})
	}
}

// farDurations are durations that reach, or nearly reach, the end of what a
// time.Duration counts from now.
func farDurations() map[string]time.Duration {
	up := blitz.ClockUptime()
	return map[string]time.Duration{
		"MaxInt64":            math.MaxInt64,
		"MaxInt64-1":          math.MaxInt64 - 1,
		"MaxInt64-uptime+1ms": math.MaxInt64 - up + time.Millisecond,
		"MaxInt64-uptime-1ms": math.MaxInt64 - up - time.Millisecond,
		"MaxInt64-uptime-1h":  math.MaxInt64 - up - time.Hour,
		"1<<62":               1 << 62,
		"MaxInt64/2+1":        math.MaxInt64/2 + 1,
		"MaxInt64-1000ns":     math.MaxInt64 - 1000,
	}
}

// farTimes are instants far in the future, up to the latest a time.Time holds.
func farTimes() map[string]time.Time {
	return map[string]time.Time{
		"year 9999":       time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		"Unix(1<<62)":     time.Unix(1<<62, 0),
		"Unix(1<<40)":     time.Unix(1<<40, 0),
		"now+MaxInt64":    time.Now().Add(math.MaxInt64),
		"uptime+MaxInt64": time.Now().Add(-blitz.ClockUptime()).Add(math.MaxInt64),
	}
}

// observe polls f in a task of rt, beside a 30 ms sleep (some thirty timer
// ticks) and returns whether f completed before that sleep did, and at which
// poll. f is cancelled if it did not complete.
func observe[T any](t *testing.T, rt *blitz.Runtime, f future.Future[T]) (done bool, polls int, v T) {
	t.Helper()
	window := blitz.Sleep(30 * time.Millisecond)
	_, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.PollFn(func(cx *future.Context) (struct{}, bool) {
		polls++
		var ok bool
		if v, ok = f.Poll(cx); ok {
			done = true
			return struct{}{}, true
		}
		_, ok = window.Poll(cx)
		return struct{}{}, ok
	}))
	require.NoError(t, err)
	if !done {
		future.Cancel(f)
	}
	future.Cancel(window)
	return done, polls, v
}

// TestSleepForever: a sleep whose deadline runs past what a time.Duration
// counts from now never completes: it stays pending through many polls and
// timer ticks, in a runtime and outside one. One that far ahead takes no
// place in the timer wheels either.
func TestSleepForever(t *testing.T) {
	forEachTimeBackend(t, func(t *testing.T, rt *blitz.Runtime) {
		for name, d := range farDurations() {
			done, polls, _ := observe(t, rt, blitz.Sleep(d))
			assert.False(t, done, "Sleep(%s) completed at poll %d", name, polls)
			var s blitz.SleepFuture
			s.ResetAfter(d)
			assert.False(t, s.Deadline().Before(time.Now().Add(100*365*24*time.Hour)), "Sleep(%s)'s deadline %v", name, s.Deadline())
		}
		for name, at := range farTimes() {
			done, polls, _ := observe(t, rt, blitz.SleepUntil(at))
			assert.False(t, done, "SleepUntil(%s) completed at poll %d", name, polls)
		}
		// The longest ones wait in no wheel: a task parked on one costs no
		// timer entry.
		_, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.PollFn(func(cx *future.Context) (struct{}, bool) {
			for _, f := range []future.Future[struct{}]{blitz.Sleep(math.MaxInt64), blitz.SleepUntil(time.Unix(1<<62, 0))} {
				_, ok := f.Poll(cx)
				require.False(t, ok)
				assert.Zero(t, rt.Stats().Timers, "a sleep that never ends took a timer entry")
				future.Cancel(f)
			}
			return struct{}{}, true
		}))
		require.NoError(t, err)
		assert.Zero(t, rt.Stats().Timers)
	})
	t.Run("no runtime", func(t *testing.T) {
		for name, d := range farDurations() {
			s := blitz.Sleep(d)
			for range 3 {
				_, ok := s.Poll(future.NewContext(noopWaker()))
				require.False(t, ok, "Sleep(%s) completed outside a runtime", name)
			}
			future.Cancel(s)
		}
	})
}

// TestSelectForeverAgainstShort: the short sleep wins a race against a sleep
// of math.MaxInt64.
func TestSelectForeverAgainstShort(t *testing.T) {
	forEachTimeBackend(t, func(t *testing.T, rt *blitz.Runtime) {
		for _, short := range []time.Duration{1, time.Millisecond} {
			sel, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Select(blitz.Sleep(math.MaxInt64), blitz.Sleep(short)))
			require.NoError(t, err)
			assert.Equal(t, 1, sel.Index, "Select(Sleep(MaxInt64), Sleep(%v)) won by the long sleep", short)
		}
	})
}

// TestTimeoutForever: a timeout or deadline that never comes returns the
// inner future's value, and leaves a future that never completes pending.
func TestTimeoutForever(t *testing.T) {
	forEachTimeBackend(t, func(t *testing.T, rt *blitz.Runtime) {
		later := func(v int) future.Future[int] {
			return future.Map(blitz.Sleep(5*time.Millisecond), func(struct{}) int { return v })
		}
		for name, d := range farDurations() {
			r, err := blitz.BlockOn(testCtx(t), rt.Handle(), blitz.Timeout(d, later(7)))
			require.NoError(t, err)
			require.NoError(t, r.Err, "Timeout(%s, f)", name)
			assert.Equal(t, 7, r.Value)
			done, polls, _ := observe(t, rt, blitz.Timeout(d, future.Pending[int]()))
			assert.False(t, done, "Timeout(%s, Pending) completed at poll %d", name, polls)
		}
		for name, at := range farTimes() {
			r, err := blitz.BlockOn(testCtx(t), rt.Handle(), blitz.Deadline(at, later(8)))
			require.NoError(t, err)
			require.NoError(t, r.Err, "Deadline(%s, f)", name)
			assert.Equal(t, 8, r.Value)
			done, polls, _ := observe(t, rt, blitz.Deadline(at, future.Pending[int]()))
			assert.False(t, done, "Deadline(%s, Pending) completed at poll %d", name, polls)
		}
		assert.Zero(t, rt.Stats().Timers)
	})
}

// TestResetAfterForever re-arms a SleepFuture that completed a short sleep
// with math.MaxInt64 and other far durations: it stays pending.
func TestResetAfterForever(t *testing.T) {
	forEachTimeBackend(t, func(t *testing.T, rt *blitz.Runtime) {
		for name, d := range farDurations() {
			var s blitz.SleepFuture
			s.ResetAfter(time.Millisecond)
			_, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[struct{}](&s))
			require.NoError(t, err)
			s.ResetAfter(d)
			done, polls, _ := observe(t, rt, future.Future[struct{}](&s))
			assert.False(t, done, "ResetAfter(%s) completed at poll %d", name, polls)
		}
		assert.Zero(t, rt.Stats().Timers)
	})
}

// TestIntervalHugePeriod: an interval whose period runs past the end of a
// time.Duration, or whose missed-tick arithmetic would, delivers its first
// tick at once and then waits; it never delivers a tick in the past of the
// one before.
func TestIntervalHugePeriod(t *testing.T) {
	forEachTimeBackend(t, func(t *testing.T, rt *blitz.Runtime) {
		huge := time.Duration(math.MaxInt64/2 + 1)
		cases := []struct {
			name   string
			start  time.Time
			period time.Duration
		}{
			{"period MaxInt64", time.Now(), math.MaxInt64},
			{"period MaxInt64-1", time.Now(), math.MaxInt64 - 1},
			{"period 1<<62", time.Now(), 1 << 62},
			// One missed tick: the next one of the schedule is start +
			// 2*period, past what a time.Duration counts.
			{"late by one huge period", time.Now().Add(-huge - time.Hour), huge},
			// A schedule that began in year 1: now - start saturates.
			{"start in year 1", time.Time{}, time.Hour},
			{"start in year 1, huge period", time.Time{}, huge},
		}
		for _, tc := range cases {
			for _, missed := range []blitz.MissedTickBehavior{blitz.Burst, blitz.Delay, blitz.Skip} {
				if missed == blitz.Burst && tc.start.IsZero() && tc.period == time.Hour {
					continue // bursts the seventeen million hours since year 1
				}
				iv, err := blitz.NewIntervalAt(tc.start, tc.period, missed)
				require.NoError(t, err)
				before := time.Now()
				done, _, first := observe(t, rt, future.Future[time.Time](iv))
				require.True(t, done, "%s, %v: no first tick", tc.name, missed)
				assert.True(t, first.Equal(tc.start), "%s, %v: first tick %v, want the start", tc.name, missed, first)
				done, polls, next := observe(t, rt, future.Future[time.Time](iv))
				switch {
				case !done:
				case missed == blitz.Burst:
					// Burst keeps the schedule: a second tick already
					// due is delivered at once, and it is the next one.
					assert.True(t, next.Equal(tc.start.Add(tc.period)), "%s, %v: second tick %v, want start+period", tc.name, missed, next)
				default:
					// Delay and Skip schedule the next tick after the
					// late one's delivery: it cannot be in the past of
					// the clock read before the first tick, and only the
					// hourly schedule can come due within the window.
					assert.False(t, next.Before(before), "%s, %v: tick %v in the past at poll %d", tc.name, missed, next, polls)
					assert.Equal(t, time.Hour, tc.period, "%s, %v: second tick %v at poll %d", tc.name, missed, next, polls)
				}
				iv.Cancel()
			}
		}
		assert.Zero(t, rt.Stats().Timers)
	})
}
