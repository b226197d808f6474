package scheduler_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// chooseFunc adapts a function to scheduler.Chooser.
type chooseFunc func(ready []uint64) int

func (f chooseFunc) Choose(ready []uint64) int { return f(ready) }

// seeded chooses uniformly at random from a seeded source.
func seeded(seed uint64) scheduler.Chooser {
	r := rand.New(rand.NewPCG(seed, 0))
	return chooseFunc(func(ready []uint64) int { return r.IntN(len(ready)) })
}

// newDriven makes a driven scheduler with ch; its shutdown is a cleanup.
func newDriven(t *testing.T, ch scheduler.Chooser) *scheduler.Scheduler {
	t.Helper()
	s, err := scheduler.New(scheduler.Config{Chooser: ch})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

// runAll steps s until nothing is ready, and returns the steps taken.
func runAll(t *testing.T, s *scheduler.Scheduler) int {
	t.Helper()
	for n := 0; ; n++ {
		polled, _, err := s.Step()
		require.NoError(t, err)
		if !polled {
			return n
		}
		require.Less(t, n, 1_000_000, "a driven scheduler that never runs dry")
	}
}

// yielder records its name at each of its polls and yields n times.
func yielder(log *[]int, name, n int) future.Future[struct{}] {
	return future.PollFn(func(cx *future.Context) (struct{}, bool) {
		*log = append(*log, name)
		if n == 0 {
			return struct{}{}, true
		}
		n--
		cx.Yield()
		return struct{}{}, false
	})
}

// interleaving runs three yielding tasks on a driven scheduler with a
// seeded random chooser and returns the order of their polls.
func interleaving(t *testing.T, seed uint64) []int {
	s := newDriven(t, seeded(seed))
	var log []int
	for name := range 3 {
		scheduler.Spawn(s, nil, yielder(&log, name, 4)).Detach()
	}
	require.Equal(t, 15, runAll(t, s))
	return log
}

func TestDrivenStartsNoGoroutineAndWaitsForStep(t *testing.T) {
	s := newDriven(t, chooseFunc(func([]uint64) int { return 0 }))
	require.True(t, s.Driven())
	require.Equal(t, 1, s.Workers())
	var log []int
	h := scheduler.Spawn(s, nil, yielder(&log, 7, 0))
	require.Equal(t, 1, s.Ready())
	require.Empty(t, log, "nothing runs before a Step")
	polled, _, err := s.Step()
	require.NoError(t, err)
	require.True(t, polled)
	require.Equal(t, []int{7}, log)
	require.True(t, h.IsFinished())
	polled, wait, err := s.Step()
	require.NoError(t, err)
	require.False(t, polled)
	require.Negative(t, wait, "no driver: nothing pending")
}

func TestDrivenFollowsTheChooser(t *testing.T) {
	for _, tc := range []struct {
		name   string
		choose func([]uint64) int
		want   []int
	}{
		{"first", func([]uint64) int { return 0 }, []int{0, 1, 2, 3}},
		{"last", func(r []uint64) int { return len(r) - 1 }, []int{3, 2, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newDriven(t, chooseFunc(tc.choose))
			var log []int
			for name := range 4 {
				scheduler.Spawn(s, nil, yielder(&log, name, 0)).Detach()
			}
			require.Equal(t, 4, runAll(t, s))
			require.Equal(t, tc.want, log)
		})
	}
}

func TestDrivenChooserSeesReadyIDsInOrder(t *testing.T) {
	var seen [][]uint64
	s := newDriven(t, chooseFunc(func(r []uint64) int {
		seen = append(seen, slices.Clone(r))
		return 0
	}))
	var log []int
	var ids []uint64
	for name := range 3 {
		h := scheduler.Spawn(s, nil, yielder(&log, name, 1))
		ids = append(ids, h.ID())
		h.Detach()
	}
	runAll(t, s)
	require.Equal(t, ids, seen[0], "the first choice sees the spawns in order")
	// The first task yielded; it is ready again behind the two others.
	require.Equal(t, []uint64{ids[1], ids[2], ids[0]}, seen[1])
}

func TestDrivenSameSeedSameRun(t *testing.T) {
	distinct := map[string]bool{}
	for seed := range uint64(12) {
		a, b := interleaving(t, seed), interleaving(t, seed)
		require.Equal(t, a, b, "seed %d", seed)
		distinct[fmtInts(a)] = true
	}
	require.Greater(t, len(distinct), 6, "different seeds give different interleavings")
}

// fmtInts renders xs compactly, as a map key.
func fmtInts(xs []int) string {
	b := make([]byte, len(xs))
	for i, x := range xs {
		b[i] = byte('0' + x)
	}
	return string(b)
}

func TestDrivenWakeFromPoll(t *testing.T) {
	// A task that awaits another's JoinHandle is woken by its completion
	// during a Step, and runs at a later Step.
	s := newDriven(t, seeded(3))
	var log []int
	child := scheduler.Spawn(s, nil, yielder(&log, 1, 3))
	parent := scheduler.Spawn(s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
		if _, ok := child.Poll(cx); !ok {
			return 0, false
		}
		log = append(log, 9)
		return 42, true
	}))
	runAll(t, s)
	require.Equal(t, 9, log[len(log)-1])
	r, ok := parent.Poll(future.NewContext(waker.Waker{}))
	require.True(t, ok)
	require.Equal(t, 42, r.Value)
}

func TestDrivenMisuse(t *testing.T) {
	_, err := scheduler.New(scheduler.Config{Chooser: seeded(1), Workers: 2})
	require.ErrorIs(t, err, scheduler.ErrConfig)

	s, err := scheduler.New(scheduler.Config{Workers: 1})
	require.NoError(t, err)
	defer s.Shutdown(context.Background())
	_, _, err = s.Step()
	require.ErrorIs(t, err, scheduler.ErrNotDriven)
	require.False(t, s.Driven())

	d := newDriven(t, chooseFunc(func(r []uint64) int { return len(r) }))
	scheduler.Spawn(d, nil, yielder(new([]int), 0, 0)).Detach()
	require.PanicsWithValue(t, "scheduler: Chooser.Choose returned 1 for 1 ready tasks", func() { d.Step() })
}

func TestDrivenShutdown(t *testing.T) {
	s := newDriven(t, seeded(5))
	var log []int
	left := scheduler.Spawn(s, nil, yielder(&log, 0, 100))
	_, _, err := s.Step()
	require.NoError(t, err)
	require.NoError(t, s.Shutdown(context.Background()))
	r, ok := left.Poll(future.NewContext(waker.Waker{}))
	require.True(t, ok)
	require.ErrorIs(t, r.Err, scheduler.ErrShutdown)
	polled, wait, err := s.Step()
	require.NoError(t, err)
	require.False(t, polled)
	require.Negative(t, wait)
	<-s.Done()
}

func TestDrivenShutdownFromAPoll(t *testing.T) {
	s := newDriven(t, chooseFunc(func([]uint64) int { return 0 }))
	var shutdownErr error
	scheduler.Spawn(s, nil, future.PollFn(func(cx *future.Context) (struct{}, bool) {
		shutdownErr = s.Shutdown(context.Background())
		return struct{}{}, true
	})).Detach()
	other := scheduler.Spawn(s, nil, yielder(new([]int), 1, 0))
	polled, _, err := s.Step()
	require.NoError(t, err)
	require.True(t, polled)
	require.ErrorIs(t, shutdownErr, scheduler.ErrBlockingInTask)
	<-s.Done() // finished by the Step, after the poll
	r, ok := other.Poll(future.NewContext(waker.Waker{}))
	require.True(t, ok)
	require.True(t, errors.Is(r.Err, scheduler.ErrShutdown), "%v", r.Err)
}
