package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// With PollTiming, every poll lands in the poll-duration histogram, and a
// poll over SlowPoll is counted and kept with its task's id and name;
// parked time grows while the workers have nothing to do.
func TestPollTimingMetrics(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2, PollTiming: true, SlowPoll: 5 * time.Millisecond})
	const quick = 50
	for range quick {
		_, err := wait(e, scheduler.Spawn(e.s, nil, future.Ready(1)), "quick")
		require.NoError(t, err)
	}
	slow := scheduler.Spawn(e.s, nil, scheduler.Named("sluggard", future.PollFn(func(*future.Context) (int, bool) {
		time.Sleep(20 * time.Millisecond) // a poll that keeps its worker
		return 1, true
	})))
	_, err := wait(e, slow, "sluggard")
	require.NoError(t, err)
	// Parked for 50ms, then woken: the park's time is counted when it
	// ends (a coarse clock, as on Windows, may round short parks to 0).
	time.Sleep(50 * time.Millisecond)
	_, err = wait(e, scheduler.Spawn(e.s, nil, future.Ready(1)), "waker")
	require.NoError(t, err)

	var st scheduler.Stats
	require.Eventually(t, func() bool {
		st = e.s.Stats()
		var parked time.Duration
		for _, w := range st.PerWorker {
			parked += w.ParkedTime
		}
		return st.PollDurations.Count() >= quick+2 && st.SlowPolls >= 1 && parked >= 20*time.Millisecond
	}, 10*time.Second, time.Millisecond, "stats: %+v", st)
	require.Len(t, st.PollDurations.Counts, scheduler.HistogramBuckets)
	require.Len(t, st.PollDurations.Bounds, scheduler.HistogramBuckets-1)
	assert.GreaterOrEqual(t, st.PollDurations.Sum, 20*time.Millisecond)
	// The slow poll is in a bucket whose bound is at least 20ms.
	var over uint64
	for i, b := range st.PollDurations.Bounds {
		if b >= 16*time.Millisecond {
			over += st.PollDurations.Counts[i]
		}
	}
	over += st.PollDurations.Counts[scheduler.HistogramBuckets-1]
	assert.GreaterOrEqual(t, over, uint64(1))
	require.NotEmpty(t, st.LatestSlowPolls)
	last := st.LatestSlowPolls[len(st.LatestSlowPolls)-1]
	assert.Equal(t, "sluggard", last.Name)
	assert.Equal(t, slow.ID(), last.Task)
	assert.GreaterOrEqual(t, last.Duration, 20*time.Millisecond)
	var parked time.Duration
	for _, w := range st.PerWorker {
		parked += w.ParkedTime
		assert.LessOrEqual(t, w.ParkedTime, st.Uptime)
	}
	assert.Greater(t, parked, time.Duration(0))
}

// Without PollTiming there is no histogram and no slow poll, however long
// a poll takes.
func TestNoPollTimingNoHistogram(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1, SlowPoll: time.Microsecond})
	_, err := wait(e, scheduler.Spawn(e.s, nil, future.PollFn(func(*future.Context) (int, bool) {
		time.Sleep(time.Millisecond)
		return 1, true
	})), "poll")
	require.NoError(t, err)
	st := e.s.Stats()
	assert.Zero(t, st.PollDurations.Count())
	assert.Zero(t, st.SlowPolls)
	assert.Empty(t, st.LatestSlowPolls)
}

// A negative SlowPoll is refused.
func TestSlowPollConfig(t *testing.T) {
	_, err := scheduler.New(scheduler.Config{SlowPoll: -time.Second})
	require.ErrorIs(t, err, scheduler.ErrConfig)
}

// With PollTiming, each wake that schedules a task and the poll it leads
// to count a scheduling delay (not the first poll after the spawn).
func TestSchedulingDelays(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2, PollTiming: true})
	const wakes = 20
	wakers := make(chan waker.Waker, 1)
	polls := 0
	h := scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
		polls++
		if polls > wakes {
			return polls, true
		}
		wakers <- cx.Waker()
		return 0, false
	}))
	for range wakes {
		(<-wakers).Wake() // from this goroutine: through the global queue
	}
	n, err := wait(e, h, "woken task")
	require.NoError(t, err)
	require.Equal(t, wakes+1, n)
	var st scheduler.Stats
	require.Eventually(t, func() bool {
		st = e.s.Stats()
		return st.SchedulingDelays.Count() >= wakes
	}, 10*time.Second, time.Millisecond, "delays counted: %d", st.SchedulingDelays.Count())
	assert.Equal(t, uint64(wakes), st.SchedulingDelays.Count(), "one per wake, none for the spawn")
	// The sum is not checked: a coarse clock (Windows) measures delays of
	// microseconds as 0.
}
