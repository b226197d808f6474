package parallel_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/parallel"
	"github.com/stretchr/testify/require"
)

func TestScopeWaitsForEverySpawn(t *testing.T) {
	p := newPool(t, 0)
	n := scale(10_000, 1000)
	var ran atomic.Int64
	p.Scope(func(s *parallel.Scope) {
		for range n {
			s.Spawn(func(*parallel.Ctx) { ran.Add(1) })
		}
	})
	require.Equal(t, int64(n), ran.Load())
}

// spawnTree spawns a binary tree of jobs into s from whichever worker runs
// each job, and counts the leaves.
func spawnTree(s *parallel.Scope, c *parallel.Ctx, depth int, n *atomic.Int64) {
	if depth == 0 {
		n.Add(1)
		return
	}
	for range 2 {
		s.SpawnFrom(c, func(c *parallel.Ctx) { spawnTree(s, c, depth-1, n) })
	}
}

func TestScopeNestedSpawnsFromOtherWorkers(t *testing.T) {
	p := newPool(t, 0)
	depth := scale(14, 10)
	var n atomic.Int64
	p.Scope(func(s *parallel.Scope) { spawnTree(s, s.Ctx(), depth, &n) })
	require.Equal(t, int64(1)<<depth, n.Load())
}

// Leftover spawns on a worker's deque sit above its join frames; Join must
// run them and still find its own frame.
func TestJoinUnderLeftoverSpawns(t *testing.T) {
	p := newPool(t, 2)
	var n atomic.Int64
	for range scale(200, 20) {
		p.Scope(func(s *parallel.Scope) {
			c := s.Ctx()
			c.Join(func(c *parallel.Ctx) {
				s.SpawnFrom(c, func(*parallel.Ctx) { n.Add(1) })
				c.Join(func(c *parallel.Ctx) {
					s.SpawnFrom(c, func(*parallel.Ctx) { n.Add(1) })
				}, func(*parallel.Ctx) { n.Add(1) })
			}, func(*parallel.Ctx) { n.Add(1) })
		})
	}
	require.Equal(t, int64(4*scale(200, 20)), n.Load())
}

func TestScopePanicsAfterAllJobsFinish(t *testing.T) {
	p := newPool(t, 0)
	for range scale(100, 10) {
		var done atomic.Int64
		v := panicValue(t, func() {
			p.Scope(func(s *parallel.Scope) {
				for i := range 20 {
					s.Spawn(func(*parallel.Ctx) {
						if i == 3 {
							panic("job")
						}
						time.Sleep(10 * time.Microsecond)
						done.Add(1)
					})
				}
			})
		})
		require.Equal(t, "job", v)
		require.Equal(t, int64(19), done.Load())
	}
	var done atomic.Int64
	v := panicValue(t, func() {
		parallel.Scoped(func(s *parallel.Scope) {
			s.Spawn(func(*parallel.Ctx) { time.Sleep(time.Millisecond); done.Add(1) })
			panic("body")
		})
	})
	require.Equal(t, "body", v)
	require.Equal(t, int64(1), done.Load())
}

func TestSpawnOnFinishedScopePanics(t *testing.T) {
	p := newPool(t, 1)
	var kept *parallel.Scope
	p.Scope(func(s *parallel.Scope) { kept = s })
	p.Run(func(c *parallel.Ctx) {
		require.Equal(t, "parallel: Spawn on a scope that has finished",
			recoverPanic(func() { kept.SpawnFrom(c, func(*parallel.Ctx) {}) }))
	})
}
