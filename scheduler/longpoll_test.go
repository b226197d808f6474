package scheduler_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// stuckInFirstPoll spawns a task, named name, that blocks in its first poll
// until release is closed, the classic stuck handler: it blocks before its
// first await.
func stuckInFirstPoll(e *env, name string, release chan struct{}) scheduler.JoinHandle[int] {
	return scheduler.Spawn[int](e.s, nil, scheduler.Named(name, future.Future[int](future.PollFn(func(*future.Context) (int, bool) {
		e.block(release, name)
		return 0, true
	}))))
}

// TestTaskStuckInItsFirstPollIsListed: with PollTiming, a task blocking
// before its first await is listed (it was only counted: "3 live, 2
// listed"), as running in its first poll, and the dump flags its poll and
// shows the line it blocks on.
func TestTaskStuckInItsFirstPollIsListed(t *testing.T) {
	for _, labels := range []bool{false, true} {
		e := newEnv(t, scheduler.Config{Workers: 2, PollTiming: true, ProfileLabels: labels, SlowPoll: 5 * time.Millisecond})
		release := make(chan struct{})
		h := stuckInFirstPoll(e, "stuck", release)
		var found scheduler.TaskInfo
		eventually(t, func() bool {
			tasks, live := e.s.Tasks()
			for _, ti := range tasks {
				if ti.Name == "stuck" && ti.SinceLastPoll >= 10*time.Millisecond {
					found = ti
					return live == 1
				}
			}
			return false
		}, "the stuck task listed")
		require.Equal(t, scheduler.TaskRunning, found.State)
		require.True(t, found.FirstPoll)

		long := e.s.LongPolls(true)
		require.Len(t, long, 1)
		require.Equal(t, found.ID, long[0].Task)
		require.Equal(t, "stuck", long[0].Name)
		require.True(t, long[0].Exact)
		require.GreaterOrEqual(t, long[0].For, 10*time.Millisecond)
		require.Contains(t, long[0].Stack, "stuckInFirstPoll", "labels %v: the stack:\n%s", labels, long[0].Stack)

		var b bytes.Buffer
		require.NoError(t, e.s.DumpEach(&b))
		out := b.String()
		require.Contains(t, out, "blitz tasks: 1 live, 1 listed\n")
		require.Contains(t, out, `"stuck": running for `)
		require.Contains(t, out, ", in its first poll\n")
		require.Contains(t, out, "LONG POLL on worker ")
		require.Contains(t, out, "longpoll_test.go:")
		close(release)
		_, err := wait(e, h, "stuck")
		require.NoError(t, err)
		// The handle resolves inside the poll; the worker clears its record
		// of the poll just after.
		eventually(t, func() bool { return len(e.s.LongPolls(false)) == 0 }, "no long poll after the poll ended")
	}
}

// TestLongTickFlaggedWithoutPollTiming: without PollTiming, a worker whose
// tick has run past LongTickThreshold is flagged, with its stack found by
// the worker's pprof label; the task itself is not named.
func TestLongTickFlaggedWithoutPollTiming(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1})
	release := make(chan struct{})
	h := stuckInFirstPoll(e, "stuck", release)
	var long []scheduler.LongPoll
	eventually(t, func() bool {
		long = e.s.LongPolls(true)
		return len(long) == 1
	}, "a long tick")
	require.Zero(t, long[0].Task)
	require.False(t, long[0].Exact)
	require.GreaterOrEqual(t, long[0].For, scheduler.LongTickThreshold)
	require.Contains(t, long[0].Stack, "stuckInFirstPoll")
	var b bytes.Buffer
	require.NoError(t, e.s.Dump(&b))
	require.Contains(t, b.String(), "LONG POLL on worker 0: a tick of polls has run ")
	close(release)
	_, err := wait(e, h, "stuck")
	require.NoError(t, err)
}

// TestNoLongPollsWhenIdleOrYielding: a scheduler whose tasks yield all the
// time reports no lasting long poll, and once idle, none at all: the record
// of a poll or a tick in progress is cleared when it ends. (A poll preempted
// by the OS on a loaded machine may be long for a moment: only one longer
// than a second counts here.)
func TestNoLongPollsWhenIdleOrYielding(t *testing.T) {
	for _, timing := range []bool{false, true} {
		e := newEnv(t, scheduler.Config{Workers: 2, PollTiming: timing, SlowPoll: 50 * time.Millisecond})
		stop := make(chan struct{})
		var hs []scheduler.JoinHandle[int]
		for range 4 {
			hs = append(hs, scheduler.Spawn[int](e.s, nil, future.Future[int](future.PollFn(func(cx *future.Context) (int, bool) {
				select {
				case <-stop:
					return 0, true
				default:
				}
				cx.Yield()
				return 0, false
			}))))
		}
		for range 20 {
			for _, lp := range e.s.LongPolls(false) {
				require.Less(t, lp.For, time.Second, "timing %v: a yielding task's poll reported long", timing)
			}
			time.Sleep(5 * time.Millisecond)
		}
		close(stop)
		for _, h := range hs {
			_, err := wait(e, h, "yielder")
			require.NoError(t, err)
		}
		time.Sleep(1200 * time.Millisecond) // a record left set would now be over a second old
		require.Empty(t, e.s.LongPolls(false), "idle, timing %v", timing)
	}
}

// TestLongPollCountsTheTasksQueuedBehindIt: tasks spawned by a task that
// then blocks wait in its worker's queue; the long poll counts them.
func TestLongPollCountsTheTasksQueuedBehindIt(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1})
	release := make(chan struct{})
	var children []scheduler.JoinHandle[int]
	h := scheduler.Spawn[int](e.s, nil, future.Future[int](future.PollFn(func(cx *future.Context) (int, bool) {
		for range 10 {
			children = append(children, scheduler.Spawn[int](e.s, cx, future.Future[int](future.Ready(1))))
		}
		e.block(release, "spawner")
		return 0, true
	})))
	var long []scheduler.LongPoll
	eventually(t, func() bool {
		long = e.s.LongPolls(false)
		return len(long) == 1
	}, "a long tick")
	require.GreaterOrEqual(t, long[0].Queued, 5, "most of the 10 children wait in the local queue (the rest in the LIFO slots)")
	close(release)
	_, err := wait(e, h, "spawner")
	require.NoError(t, err)
	for _, c := range children {
		_, err := wait(e, c, "child")
		require.NoError(t, err)
	}
}
