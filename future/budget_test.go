package future_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// budgetCx returns a Context with a fresh budget, as an executor makes for
// a task poll, and the waker's counter.
func budgetCx() (*future.Context, *future.Budget, *countWaker) {
	cx, w := newCx()
	b := new(future.Budget)
	b.Reset()
	cx.SetBudget(b)
	return cx, b, w
}

// spendAll is a leaf that proceeds and spends n times in one poll, or
// returns not-ready when Proceed refuses; it reports how many it spent.
func spendAll(n int, spent *int) future.Future[int] {
	return future.PollFn(func(cx *future.Context) (int, bool) {
		for *spent < n {
			if !cx.Proceed() {
				return 0, false
			}
			cx.Spend()
			*spent++
		}
		return *spent, true
	})
}

// Without a budget (outside an executor) every operation proceeds and
// Yield is a plain wake.
func TestNoBudgetProceedsAlways(t *testing.T) {
	cx, w := newCx()
	require.Nil(t, cx.Budget())
	for range 10 * future.TaskBudget {
		require.True(t, cx.Proceed())
		cx.Spend()
	}
	require.Zero(t, w.n.Load())
	cx.Yield()
	require.Equal(t, int32(1), w.n.Load())
}

// A budget of TaskBudget units: the next Proceed refuses and reports the
// yield to the executor through the budget, without waking the task's own
// Waker (the executor reschedules it); the spending stops at exactly
// TaskBudget. Reset starts over.
func TestBudgetSpentYields(t *testing.T) {
	cx, b, w := budgetCx()
	require.Equal(t, future.TaskBudget, b.Remaining())
	spent := 0
	f := spendAll(1000, &spent)
	_, ok := f.Poll(cx)
	require.False(t, ok)
	require.Equal(t, future.TaskBudget, spent)
	require.Zero(t, b.Remaining())
	require.True(t, b.Yielded())
	require.Zero(t, w.n.Load(), "wakes of the task's own Waker")

	polls := 1
	for ; !ok; polls++ {
		b.Reset()
		require.False(t, b.Yielded())
		_, ok = f.Poll(cx)
	}
	require.Equal(t, 1000, spent)
	require.Equal(t, (1000+future.TaskBudget-1)/future.TaskBudget, polls)
}

// A Context made by WithWaker draws on the same budget.
func TestWithWakerSharesBudget(t *testing.T) {
	cx, b, _ := budgetCx()
	var other countWaker
	c2 := cx.WithWaker(waker.New(&other))
	require.Same(t, b, c2.Budget())
	c2.Spend()
	require.Equal(t, future.TaskBudget-1, b.Remaining())
	for b.Remaining() > 0 {
		cx.Spend()
	}
	require.False(t, c2.Proceed())
	require.Equal(t, int32(1), other.n.Load(), "the copy's waker is the one woken")
	require.True(t, b.Yielded())
}

// Unconstrained runs 1,000 operations in one poll even from an almost spent
// budget, and puts the budget back as it was, also when the child panics.
func TestUnconstrained(t *testing.T) {
	cx, b, w := budgetCx()
	for range future.TaskBudget - 3 {
		cx.Spend()
	}
	spent := 0
	v, ok := future.Unconstrained(spendAll(1000, &spent)).Poll(cx)
	require.True(t, ok)
	require.Equal(t, 1000, v)
	require.Equal(t, 3, b.Remaining())
	require.False(t, b.Yielded())
	require.Zero(t, w.n.Load())

	boom := errors.New("boom")
	u := future.Unconstrained(future.PollFn(func(cx *future.Context) (int, bool) {
		cx.Spend()
		panic(boom)
	}))
	require.PanicsWithValue(t, boom, func() { u.Poll(cx) })
	require.Equal(t, 3, b.Remaining())

	// Outside an executor it is a plain wrapper.
	plain, _ := newCx()
	spent = 0
	v, ok = future.Unconstrained(spendAll(10, &spent)).Poll(plain)
	require.True(t, ok)
	require.Equal(t, 10, v)
}

// Unconstrained keeps the futures' contract: Cancel reaches the child once,
// and a poll after completion or cancel panics with the sentinels.
func TestUnconstrainedContract(t *testing.T) {
	reg := new(future.Registry)
	p := future.NewProbe[int](reg)
	u := future.Unconstrained[int](p)
	cx, _ := newCx()
	_, ok := u.Poll(cx)
	require.False(t, ok)
	future.Cancel(u)
	future.Cancel(u)
	require.Equal(t, 1, p.Stats().Cancels)
	require.PanicsWithValue(t, future.ErrPolledAfterCancel, func() { u.Poll(cx) })

	d := future.Unconstrained(future.Ready(5))
	v, ok := d.Poll(cx)
	require.True(t, ok)
	require.Equal(t, 5, v)
	require.PanicsWithValue(t, future.ErrPolledAfterCompletion, func() { d.Poll(cx) })
	require.PanicsWithValue(t, future.ErrNilFuture, func() { future.Unconstrained[int](nil) })
}

// ConsumeBudget spends one unit and completes, or yields on a spent budget
// and completes on the next poll.
func TestConsumeBudget(t *testing.T) {
	cx, b, w := budgetCx()
	_, ok := future.ConsumeBudget().Poll(cx)
	require.True(t, ok)
	require.Equal(t, future.TaskBudget-1, b.Remaining())
	for b.Remaining() > 0 {
		cx.Spend()
	}
	f := future.ConsumeBudget()
	_, ok = f.Poll(cx)
	require.False(t, ok)
	require.True(t, b.Yielded())
	require.Zero(t, w.n.Load())
	b.Reset()
	_, ok = f.Poll(cx)
	require.True(t, ok)
	require.Equal(t, future.TaskBudget-1, b.Remaining())
}

// Under a combinator's child Waker (WithWaker), a yield wakes that Waker as
// well as recording the yield, so the combinator learns which child to poll
// again; with the task's own Waker it only records it. Without a budget it
// is a plain wake.
func TestYieldWakesOnlyChildWakers(t *testing.T) {
	cx, b, own := budgetCx()
	cx.Yield()
	require.True(t, b.Yielded())
	require.Zero(t, own.n.Load())

	b.Reset()
	child := new(countWaker)
	ccx := cx.WithWaker(waker.New(child))
	ccx.Yield()
	require.True(t, b.Yielded())
	require.Equal(t, int32(1), child.n.Load())
	require.Zero(t, own.n.Load())

	plain, w := newCx()
	plain.Yield()
	require.Equal(t, int32(1), w.n.Load())
}
