package scheduler_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// countingDriver counts the Maintain calls of the workers and has nothing
// to fire.
type countingDriver struct{ runs atomic.Int64 }

func (d *countingDriver) Maintain(*future.Context) time.Duration {
	d.runs.Add(1)
	return -1
}

// TestYieldRunsAfterTheDriver: a task alone on its worker that yields in a
// loop is polled again only after the worker has run its driver (where I/O
// completions and timers would be collected), at every yield, not once per
// tick of BudgetPerTick polls.
func TestYieldRunsAfterTheDriver(t *testing.T) {
	const yields = 50
	d := new(countingDriver)
	e := newEnv(t, scheduler.Config{Workers: 1, Driver: d})
	var seen []int64 // the driver's count at each poll; the task's own state
	var y scheduler.YieldFuture
	p := newProbe(e, "yielder", func(cx *future.Context) (int, bool) {
		seen = append(seen, d.runs.Load())
		if len(seen) > yields {
			return len(seen), true
		}
		y.Reset()
		if _, ok := y.Poll(cx); ok {
			e.failf("the first poll of a YieldFuture completed")
		}
		return 0, false
	})
	n, err := wait(e, scheduler.Spawn(e.s, nil, future.Future[int](p)), "yielder")
	require.NoError(t, err)
	require.Equal(t, yields+1, n)
	same := 0
	for i := 1; i < len(seen); i++ {
		if seen[i] == seen[i-1] {
			same++
		}
	}
	require.Zero(t, same, "polls after a yield with no driver run in between (of %d yields)", yields)
}

// TestSpentBudgetYields: a task that awaits future.ConsumeBudget 1,000
// times in a loop returns to its worker when it has spent
// future.TaskBudget units (8 polls at least), and is polled again after the
// driver ran; under future.Unconstrained the same loop takes one poll.
func TestSpentBudgetYields(t *testing.T) {
	const units = 1000
	loop := func(polls *atomic.Int32) future.Future[int] {
		done := 0
		var f future.Future[struct{}]
		return future.PollFn(func(cx *future.Context) (int, bool) {
			polls.Add(1)
			for done < units {
				if f == nil {
					f = future.ConsumeBudget()
				}
				if _, ok := f.Poll(cx); !ok {
					return 0, false
				}
				f = nil
				done++
			}
			return done, true
		})
	}
	t.Run("budget", func(t *testing.T) {
		d := new(countingDriver)
		e := newEnv(t, scheduler.Config{Workers: 1, Driver: d})
		var polls atomic.Int32
		_, err := wait(e, scheduler.Spawn(e.s, nil, loop(&polls)), "spender")
		require.NoError(t, err)
		require.GreaterOrEqual(t, int(polls.Load()), (units+future.TaskBudget-1)/future.TaskBudget)
	})
	t.Run("unconstrained", func(t *testing.T) {
		e := newEnv(t, scheduler.Config{Workers: 1})
		var polls atomic.Int32
		_, err := wait(e, scheduler.Spawn(e.s, nil, future.Unconstrained(loop(&polls))), "unconstrained spender")
		require.NoError(t, err)
		require.Equal(t, int32(1), polls.Load())
	})
}

// TestInjectedTaskRunsWhileLocalWorkNeverRunsOut: one worker whose local
// queue never empties (a task that wakes itself in every poll, which sends
// it to the back of the local queue) still looks at the global queue every
// adaptive interval: a task spawned from outside runs within
// 2 x MaxGlobalInterval polls of the spinner. A task that yields in a loop
// beside the spinner is not starved either: its deferred wakes go to the
// local queue after every tick.
func TestInjectedTaskRunsWhileLocalWorkNeverRunsOut(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1})
	var spins atomic.Int64
	var stop atomic.Bool
	spinner := newProbe(e, "spinner", func(cx *future.Context) (int, bool) {
		spins.Add(1)
		if stop.Load() {
			return 0, true
		}
		cx.Waker().Wake() // a wake from elsewhere, not a yield: the local queue
		return 0, false
	})
	hs := scheduler.Spawn(e.s, nil, future.Future[int](spinner))
	eventually(t, func() bool { return spins.Load() > 1000 }, "the spinner spins")

	for round := range 5 {
		var at atomic.Int64
		injected := newProbe(e, "injected", func(*future.Context) (int, bool) {
			at.Store(spins.Load())
			return 0, true
		})
		h := scheduler.Spawn(e.s, nil, future.Future[int](injected))
		from := spins.Load()
		_, err := wait(e, h, "injected task")
		require.NoError(t, err)
		require.LessOrEqual(t, at.Load()-from, int64(2*scheduler.MaxGlobalInterval), "round %d: spinner polls before the injected task ran", round)
	}

	var y scheduler.YieldFuture
	yields := 0
	yielder := newProbe(e, "yielder", func(cx *future.Context) (int, bool) {
		for yields < 20 {
			if _, ok := y.Poll(cx); !ok {
				return 0, false
			}
			y.Reset()
			yields++
		}
		return yields, true
	})
	n, err := wait(e, scheduler.Spawn(e.s, nil, future.Future[int](yielder)), "yielder beside the spinner")
	require.NoError(t, err)
	require.Equal(t, 20, n)

	stop.Store(true)
	_, err = wait(e, hs, "spinner")
	require.NoError(t, err)
}

// TestGlobalIntervalTable: the global-queue interval is 1 ms over the
// average poll time, clamped to [MinGlobalInterval, MaxGlobalInterval], and
// the average is an EWMA of weight 0.1 over the ticks' mean poll times.
func TestGlobalIntervalTable(t *testing.T) {
	for _, c := range []struct {
		avg  time.Duration
		want int
	}{
		{0, scheduler.MaxGlobalInterval},
		{100 * time.Nanosecond, scheduler.MaxGlobalInterval},
		{time.Microsecond, scheduler.MaxGlobalInterval},
		{3 * time.Microsecond, 255}, // 333, clamped
		{4 * time.Microsecond, 250},
		{8 * time.Microsecond, 125},
		{10 * time.Microsecond, 100},
		{50 * time.Microsecond, 20},
		{100 * time.Microsecond, 10},
		{125 * time.Microsecond, 8},
		{200 * time.Microsecond, scheduler.MinGlobalInterval},
		{time.Millisecond, scheduler.MinGlobalInterval},
		{time.Second, scheduler.MinGlobalInterval},
	} {
		require.Equal(t, c.want, scheduler.GlobalInterval(float64(c.avg.Nanoseconds())), "average poll %v", c.avg)
	}

	// A new worker starts at the default interval's average.
	avg := scheduler.InitialAvgPollNs()
	require.Equal(t, scheduler.DefaultGlobalInterval, scheduler.GlobalInterval(avg))
	// One tick of 128 polls of 1 us: 0.1 x 1,000 + 0.9 x 50,000 = 45,100 ns,
	// an interval of 1e6 / 45,100 = 22.
	avg, iv := scheduler.Adapt(avg, 128, 128*time.Microsecond)
	require.InDelta(t, 45100, avg, 1e-6)
	require.Equal(t, 22, iv)
	// Many such ticks converge to 1 us: the interval reaches the maximum.
	for range 200 {
		avg, iv = scheduler.Adapt(avg, 128, 128*time.Microsecond)
	}
	require.InDelta(t, 1000, avg, 1)
	require.Equal(t, scheduler.MaxGlobalInterval, iv)
	// Then ticks of 1 ms polls bring it down to the minimum within 30.
	for range 30 {
		avg, iv = scheduler.Adapt(avg, 1, time.Millisecond)
	}
	require.Equal(t, scheduler.MinGlobalInterval, iv)
}

// TestYieldingTaskDroppedAtShutdown: a task that yields for ever is dropped
// by the shutdown wherever it is (the deferred list, the local queue): its
// future is cancelled once and its handle resolves with ErrShutdown.
func TestYieldingTaskDroppedAtShutdown(t *testing.T) {
	for _, workers := range []int{1, 2} {
		d := new(countingDriver)
		e := newEnv(t, scheduler.Config{Workers: workers, Driver: d})
		ps := make([]*probe, 4)
		hs := make([]scheduler.JoinHandle[int], len(ps))
		for i := range ps {
			ps[i] = newProbe(e, "yield forever", func(cx *future.Context) (int, bool) {
				cx.Yield()
				return 0, false
			})
			hs[i] = scheduler.Spawn(e.s, nil, future.Future[int](ps[i]))
		}
		eventually(t, func() bool {
			for _, p := range ps {
				if p.polls.Load() < 10 {
					return false
				}
			}
			return true
		}, "every yielder polled 10 times")
		e.shutdown()
		for i, p := range ps {
			_, err := wait(e, hs[i], p.name)
			require.ErrorIs(t, err, scheduler.ErrShutdown)
			require.Equal(t, int32(1), p.cancels.Load(), "cancels")
			require.False(t, p.done.Load())
		}
	}
}

// flagWaker records that its child was woken, then wakes the task: the
// child waker of a combinator that polls only the children woken since.
type flagWaker struct {
	woken atomic.Bool
	task  waker.Waker
}

func (f *flagWaker) Wake() { f.woken.Store(true); f.task.Wake() }

// TestYieldUnderAChildWakerReachesTheCombinator: a combinator that gives
// its child a Waker of its own and polls the child again only once that
// Waker fired still sees a child that yields (a yield with the task's own
// Waker wakes nothing, which must not apply to a child's Waker), and the
// task still runs after the driver. A task cancelled while it is set aside
// after a yield is aborted, not polled.
func TestYieldUnderAChildWakerReachesTheCombinator(t *testing.T) {
	const yields = 20
	d := new(countingDriver)
	e := newEnv(t, scheduler.Config{Workers: 1, Driver: d})
	fw := &flagWaker{}
	fw.woken.Store(true) // the first poll polls the child
	var y scheduler.YieldFuture
	childPolls := 0
	p := newProbe(e, "combinator", func(cx *future.Context) (int, bool) {
		if !fw.woken.Swap(false) {
			return 0, false // nothing woke the child: not polled
		}
		fw.task = cx.Waker()
		ccx := cx.WithWaker(waker.New(fw))
		childPolls++
		if childPolls > yields {
			return childPolls, true
		}
		y.Reset()
		y.Poll(&ccx)
		return 0, false
	})
	n, err := wait(e, scheduler.Spawn(e.s, nil, future.Future[int](p)), "combinator")
	require.NoError(t, err)
	require.Equal(t, yields+1, n)
}

// TestCancelWhileSetAsideAfterAYield: a task that yields in a loop and is
// cancelled from outside is aborted with ErrCancelled at its next turn,
// whether the cancel lands while it runs or while it waits behind the
// driver.
func TestCancelWhileSetAsideAfterAYield(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 1, Driver: new(countingDriver)})
	var polls atomic.Int64
	var y scheduler.YieldFuture
	p := newProbe(e, "spinner", func(cx *future.Context) (int, bool) {
		polls.Add(1)
		y.Reset()
		y.Poll(cx)
		return 0, false
	})
	jh := scheduler.Spawn(e.s, nil, future.Future[int](p))
	require.Eventually(t, func() bool { return polls.Load() > 100 }, 10*time.Second, time.Millisecond)
	jh.Cancel()
	_, err := wait(e, jh, "spinner")
	require.ErrorIs(t, err, scheduler.ErrCancelled)
}
