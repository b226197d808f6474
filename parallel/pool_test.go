package parallel_test

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/parallel"
	"github.com/stretchr/testify/require"
)

func TestNewPoolRejectsInvalidConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  parallel.Config
		want error
	}{
		{parallel.Config{Workers: -1}, parallel.ErrWorkers},
		{parallel.Config{Workers: parallel.MaxWorkers + 1}, parallel.ErrWorkers},
		{parallel.Config{SleepyRounds: -1}, parallel.ErrSleepyRounds},
	} {
		p, err := parallel.NewPool(tc.cfg)
		require.Nil(t, p)
		require.ErrorIs(t, err, tc.want)
	}
}

func TestNewPoolDefaultsToGOMAXPROCS(t *testing.T) {
	p := newPool(t, 0)
	require.Equal(t, runtime.GOMAXPROCS(0), p.Workers())
}

func TestRunGivesEachJobAWorkerOfThePool(t *testing.T) {
	p := newPool(t, 3)
	p.Run(func(c *parallel.Ctx) {
		require.Same(t, p, c.Pool())
		require.GreaterOrEqual(t, c.WorkerIndex(), 0)
		require.Less(t, c.WorkerIndex(), 3)
		require.True(t, parallel.IsWorkerGoroutine(p))
	})
	require.False(t, parallel.IsWorkerGoroutine(p))
}

func TestCurGoidDiffersPerGoroutine(t *testing.T) {
	a := parallel.CurGoid()
	require.Equal(t, a, parallel.CurGoid())
	ch := make(chan uint64)
	go func() { ch <- parallel.CurGoid() }()
	require.NotEqual(t, a, <-ch)
}

func TestIdlePoolWorkersAllSleep(t *testing.T) {
	p := newPool(t, 4)
	require.True(t, parallel.WaitAllAsleep(p, 5*time.Second), "an idle pool must have every worker blocked")
	p.Run(func(*parallel.Ctx) {})
	require.True(t, parallel.WaitAllAsleep(p, 5*time.Second))
	sleeping, inactive, _ := parallel.Counters(p)
	require.Equal(t, 4, sleeping)
	require.Equal(t, 4, inactive)
}

func TestCloseIsIdempotentAndRejectsLaterWork(t *testing.T) {
	p, err := parallel.NewPool(parallel.Config{Workers: 2})
	require.NoError(t, err)
	p.Run(func(*parallel.Ctx) {})
	p.Close()
	p.Close()
	r := recoverPanic(func() { p.Run(func(*parallel.Ctx) {}) })
	err, _ = r.(error)
	require.ErrorIs(t, err, parallel.ErrClosed)
}

func TestCloseWaitsForSubmittedWork(t *testing.T) {
	p, err := parallel.NewPool(parallel.Config{Workers: 2})
	require.NoError(t, err)
	var done atomic.Int32
	var wg sync.WaitGroup
	started := make(chan struct{}, 4)
	gate := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Run(func(*parallel.Ctx) {
				started <- struct{}{}
				<-gate
				done.Add(1)
			})
		}()
	}
	// Two run (one per worker) and two wait in the injection queue: all
	// four are submitted, so none can come after Close (it would panic).
	<-started
	<-started
	require.Eventually(t, func() bool { return parallel.QueuedInjected(p) == 2 }, 5*time.Second, 100*time.Microsecond)
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	time.Sleep(5 * time.Millisecond)
	close(gate)
	<-closed
	wg.Wait()
	require.Equal(t, int32(4), done.Load(), "Close waited for the queued jobs")
}

func TestCloseFromAWorkerPanics(t *testing.T) {
	p := newPool(t, 2)
	p.Run(func(*parallel.Ctx) {
		require.Equal(t, "parallel: Close called from a worker of the pool it closes", recoverPanic(p.Close))
	})
}

func TestDefaultPoolIgnoresClose(t *testing.T) {
	d := parallel.Default()
	require.Same(t, d, parallel.Default())
	d.Close()
	var ran bool
	parallel.Run(func(*parallel.Ctx) { ran = true })
	require.True(t, ran)
}

func TestRunPanicIsPanicError(t *testing.T) {
	p := newPool(t, 2)
	boom := errors.New("boom")
	r := recoverPanic(func() { p.Run(func(*parallel.Ctx) { panic(boom) }) })
	pe, ok := r.(*parallel.PanicError)
	require.True(t, ok)
	require.ErrorIs(t, pe, boom)
	require.ErrorIs(t, pe, parallel.ErrPanicked)
	require.Contains(t, pe.Error(), "boom")
	require.Contains(t, string(pe.Stack), "pool_test.go")
}

// A job that calls the pool-level API of its own pool, without its Ctx, must
// not block its worker: with every worker doing so at once, a blocking
// implementation would deadlock the pool.
func TestPoolLevelCallsFromWorkersDoNotDeadlock(t *testing.T) {
	p := newPool(t, 2)
	var leaves atomic.Int64
	var rec func(d int)
	rec = func(d int) {
		if d == 0 {
			leaves.Add(1)
			return
		}
		p.Join(func(*parallel.Ctx) { rec(d - 1) }, func(*parallel.Ctx) { rec(d - 1) })
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() { defer wg.Done(); p.Run(func(*parallel.Ctx) { rec(8) }) }()
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("pool-level calls from workers deadlocked")
	}
	require.Equal(t, int64(4*256), leaves.Load())
}

// A worker of one pool may call into another pool and block: the other
// pool's workers run the work.
func TestCallsAcrossPools(t *testing.T) {
	a, b := newPool(t, 2), newPool(t, 2)
	var n atomic.Int64
	a.Run(func(c *parallel.Ctx) {
		c.Join(
			func(*parallel.Ctx) { b.Join(func(*parallel.Ctx) { n.Add(1) }, func(*parallel.Ctx) { n.Add(1) }) },
			func(*parallel.Ctx) {
				parallel.For(1000, func(lo, hi int) { n.Add(int64(hi - lo)) }, parallel.On(b))
			})
	})
	require.Equal(t, int64(1002), n.Load())
}

func TestConcurrentCallersShareOnePool(t *testing.T) {
	p := newPool(t, 0)
	callers := scale(16, 8)
	iters := scale(200, 30)
	var wg sync.WaitGroup
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range iters {
				n := (g*iters + i) % 3000
				got := parallel.Reduce(n, 0,
					func(lo, hi int) int { return (hi-1)*hi/2 - (lo-1)*lo/2 },
					func(x, y int) int { return x + y }, parallel.On(p))
				if got != n*(n-1)/2 {
					t.Errorf("caller %d: sum of [0,%d) = %d", g, n, got)
					return
				}
				var x, y int
				p.Join(func(*parallel.Ctx) { x = i }, func(*parallel.Ctx) { y = g })
				if x != i || y != g {
					t.Errorf("Join lost a side")
					return
				}
			}
		}()
	}
	wg.Wait()
}
