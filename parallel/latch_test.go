package parallel_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/parallel"
	"github.com/stretchr/testify/require"
)

func TestOnceLatchReleasesGoroutinesAndJobs(t *testing.T) {
	p := newPool(t, 2)
	var l parallel.OnceLatch
	require.False(t, l.Probe())
	var wg sync.WaitGroup
	var released atomic.Int32
	for range 3 {
		wg.Add(2)
		go func() { defer wg.Done(); l.Wait(); released.Add(1) }()
		go func() { defer wg.Done(); p.Run(func(c *parallel.Ctx) { l.WaitCtx(c); released.Add(1) }) }()
	}
	time.Sleep(time.Millisecond)
	require.Zero(t, released.Load())
	l.Set()
	l.Set() // idempotent
	wg.Wait()
	require.Equal(t, int32(6), released.Load())
	require.True(t, l.Probe())
	l.Wait() // set: returns at once
}

// A job waiting on a latch keeps its worker busy with other jobs: with one
// worker, the job that sets the latch can only run inside the wait.
func TestWaitCtxRunsOtherWork(t *testing.T) {
	p := newPool(t, 1)
	p.Run(func(c *parallel.Ctx) {
		var l parallel.OnceLatch
		c.Scope(func(s *parallel.Scope) {
			s.Spawn(func(*parallel.Ctx) { l.Set() })
			l.WaitCtx(c)
		})
		require.True(t, l.Probe())
	})
}

func TestCountLatchCountsDownFromJobs(t *testing.T) {
	p := newPool(t, 0)
	n := scale(1000, 100)
	l := parallel.NewCountLatch(n)
	go parallel.For(n, func(lo, hi int) {
		for range hi - lo {
			l.CountDown()
		}
	}, parallel.On(p), parallel.Grain(1))
	l.Wait()
	require.True(t, l.Probe())
	require.Zero(t, l.Count())

	l2 := parallel.NewCountLatch(0)
	require.True(t, l2.Probe())
	p.Run(func(c *parallel.Ctx) { l2.WaitCtx(c) })

	var l3 parallel.CountLatch
	l3.Add(2)
	p.Run(func(c *parallel.Ctx) {
		c.Join(func(*parallel.Ctx) { l3.CountDown() }, func(*parallel.Ctx) { l3.CountDown() })
		l3.WaitCtx(c)
	})
	require.True(t, l3.Probe())
}

func TestCountLatchMisusePanics(t *testing.T) {
	require.NotNil(t, recoverPanic(func() { parallel.NewCountLatch(-1) }))
	l := parallel.NewCountLatch(1)
	require.NotNil(t, recoverPanic(func() { l.Add(-1) }))
	l.CountDown()
	require.Equal(t, "parallel: CountLatch.Add after the latch was set", recoverPanic(func() { l.Add(1) }))
	require.Equal(t, "parallel: CountLatch count below zero", recoverPanic(l.CountDown))
}
