package channels

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
)

// budgetReceives is how many ready receives the budget tests make in what
// the task would like to be one poll.
const budgetReceives = 1000

// filledBounded returns a Bounded channel holding budgetReceives values.
func filledBounded(t *testing.T) *Bounded[int] {
	c := NewBounded[int](budgetReceives)
	for i := range budgetReceives {
		require.NoError(t, c.TrySend(i))
	}
	return c
}

// drainTask returns a poll function that receives budgetReceives values from
// c, one RecvFuture after another, counting its polls; the receives are
// always ready, so without a budget the first poll takes them all.
func drainTask(t *testing.T, c *Bounded[int], polls *atomic.Int32, got *[]int) func(cx *future.Context) (struct{}, bool) {
	var f RecvFuture[int]
	var active bool
	return func(cx *future.Context) (struct{}, bool) {
		polls.Add(1)
		for len(*got) < budgetReceives {
			if !active {
				f, active = *c.Recv(), true
			}
			r, ok := f.Poll(cx)
			if !ok {
				return struct{}{}, false
			}
			active = false
			if r.Err != nil {
				t.Errorf("receive %d: %v", len(*got), r.Err)
				return struct{}{}, true
			}
			*got = append(*got, r.Value)
		}
		return struct{}{}, true
	}
}

// TestReadyReceivesYieldToTheBudget: a task receiving 1,000 values that are
// all already in the channel returns to its worker at least every
// future.TaskBudget receives, so it is polled at least 8 times (7 yields),
// and still receives every value once, in order.
func TestReadyReceivesYieldToTheBudget(t *testing.T) {
	s := newScheduler(t, 1)
	c := filledBounded(t)
	var polls atomic.Int32
	var got []int
	h := spawnFuture(s, future.PollFn(drainTask(t, c, &polls, &got)))
	waitAll(t, h)
	want := (budgetReceives + future.TaskBudget - 1) / future.TaskBudget
	require.GreaterOrEqual(t, int(polls.Load()), want, "polls of a task making %d ready receives", budgetReceives)
	require.GreaterOrEqual(t, want, 8)
	for i, v := range got {
		require.Equal(t, i, v)
	}
}

// TestUnconstrainedReceivesInOnePoll: under future.Unconstrained the same
// 1,000 ready receives complete in the task's first poll.
func TestUnconstrainedReceivesInOnePoll(t *testing.T) {
	s := newScheduler(t, 1)
	c := filledBounded(t)
	var polls atomic.Int32
	var got []int
	h := spawnFuture(s, future.Unconstrained(future.PollFn(drainTask(t, c, &polls, &got))))
	waitAll(t, h)
	require.Equal(t, int32(1), polls.Load())
	require.Len(t, got, budgetReceives)
}

// TestSelectOverPendingReceivesDoesNotSpin: a Select over 200 receives of
// empty channels spends no budget, so its task is polled once and then
// sleeps until a value comes, however long that takes; the value wins.
func TestSelectOverPendingReceivesDoesNotSpin(t *testing.T) {
	const n = 200
	s := newScheduler(t, 1)
	cs := make([]*Bounded[int], n)
	fs := make([]future.Future[future.Result[int]], n)
	for i := range cs {
		cs[i] = NewBounded[int](1)
		f := new(RecvFuture[int])
		*f = *cs[i].Recv()
		fs[i] = f
	}
	sel := future.Select(fs...)
	var polls atomic.Int32
	h := spawnFuture(s, future.PollFn(func(cx *future.Context) (future.Selected[future.Result[int]], bool) {
		polls.Add(1)
		return sel.Poll(cx)
	}))
	deadline := time.Now().Add(10 * time.Second)
	for polls.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // a spinning task would be polled thousands of times meanwhile
	require.Equal(t, int32(1), polls.Load(), "polls while nothing is ready")
	require.NoError(t, cs[137].TrySend(7))
	got := waitAll(t, h)[0]
	require.Equal(t, 137, got.Index)
	require.Equal(t, 7, got.Value.Value)
	require.LessOrEqual(t, polls.Load(), int32(3), "polls in all")
}
