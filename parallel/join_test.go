package parallel_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/parallel"
	"github.com/stretchr/testify/require"
)

func TestJoinRunsBothSides(t *testing.T) {
	p := newPool(t, 2)
	for range scale(1000, 100) {
		var a, b bool
		p.Join(func(*parallel.Ctx) { a = true }, func(*parallel.Ctx) { b = true })
		require.True(t, a && b)
	}
}

func TestJoinValues(t *testing.T) {
	p := newPool(t, 2)
	p.Run(func(c *parallel.Ctx) {
		s, n := parallel.JoinValues(c,
			func(*parallel.Ctx) string { return "a" },
			func(*parallel.Ctx) int { return 42 })
		require.Equal(t, "a", s)
		require.Equal(t, 42, n)
	})
}

// chain joins depth deep: each level's a side recurses, its b side counts.
func chain(c *parallel.Ctx, depth int, n *atomic.Int64) {
	if depth == 0 {
		return
	}
	c.Join(func(c *parallel.Ctx) { chain(c, depth-1, n) }, func(*parallel.Ctx) { n.Add(1) })
}

// tree joins a full binary tree of the given depth and counts its leaves.
func tree(c *parallel.Ctx, depth int, n *atomic.Int64) {
	if depth == 0 {
		n.Add(1)
		return
	}
	c.Join(func(c *parallel.Ctx) { tree(c, depth-1, n) }, func(c *parallel.Ctx) { tree(c, depth-1, n) })
}

func TestJoinNested20Deep(t *testing.T) {
	p := newPool(t, 0)
	var n atomic.Int64
	p.Run(func(c *parallel.Ctx) { chain(c, 20, &n) })
	require.Equal(t, int64(20), n.Load())

	n.Store(0)
	depth := scale(20, 14)
	p.Run(func(c *parallel.Ctx) { tree(c, depth, &n) })
	require.Equal(t, int64(1)<<depth, n.Load())
}

// stolenB makes b likely to be stolen: a waits (bounded) until b has started.
func stolenB(started *atomic.Bool) func(*parallel.Ctx) {
	return func(*parallel.Ctx) {
		spinUntil(100*time.Millisecond, started.Load)
	}
}

func TestJoinPanicInAWaitsForB(t *testing.T) {
	p := newPool(t, 2)
	for range scale(200, 20) {
		var bStarted, bDone atomic.Bool
		v := panicValue(t, func() {
			p.Join(func(c *parallel.Ctx) {
				stolenB(&bStarted)(c)
				panic("a")
			}, func(*parallel.Ctx) {
				bStarted.Store(true)
				time.Sleep(100 * time.Microsecond)
				bDone.Store(true)
			})
		})
		require.Equal(t, "a", v)
		require.True(t, bDone.Load(), "Join re-panicked before b finished")
	}
}

func TestJoinPanicInBWaitsForA(t *testing.T) {
	p := newPool(t, 2)
	for range scale(200, 20) {
		var aDone atomic.Bool
		v := panicValue(t, func() {
			p.Join(func(*parallel.Ctx) {
				time.Sleep(100 * time.Microsecond)
				aDone.Store(true)
			}, func(*parallel.Ctx) { panic("b") })
		})
		require.Equal(t, "b", v)
		require.True(t, aDone.Load())
	}
}

func TestJoinPanicInBothSidesKeepsA(t *testing.T) {
	p := newPool(t, 2)
	for range scale(200, 20) {
		var bStarted atomic.Bool
		v := panicValue(t, func() {
			p.Join(func(c *parallel.Ctx) {
				stolenB(&bStarted)(c)
				panic("a")
			}, func(*parallel.Ctx) {
				bStarted.Store(true)
				panic("b")
			})
		})
		require.Equal(t, "a", v)
	}
}

func TestNestedPanicKeepsOriginalStack(t *testing.T) {
	p := newPool(t, 2)
	r := recoverPanic(func() {
		p.Run(func(c *parallel.Ctx) {
			c.Join(func(c *parallel.Ctx) {
				c.Join(func(*parallel.Ctx) {}, func(*parallel.Ctx) { panic("deep") })
			}, func(*parallel.Ctx) {})
		})
	})
	pe := r.(*parallel.PanicError)
	require.Equal(t, "deep", pe.Value)
}

// A pool stays usable after a panic, and its frame stack is balanced.
func TestPoolUsableAfterPanics(t *testing.T) {
	p := newPool(t, 1)
	for range 10 {
		recoverPanic(func() {
			p.Run(func(c *parallel.Ctx) { chainPanic(c, 5) })
		})
	}
	var n atomic.Int64
	p.Run(func(c *parallel.Ctx) {
		chain(c, 5, &n)
		require.LessOrEqual(t, parallel.FrameDepth(c), 5)
	})
	require.Equal(t, int64(5), n.Load())
}

func chainPanic(c *parallel.Ctx, depth int) {
	if depth == 0 {
		panic("bottom")
	}
	c.Join(func(c *parallel.Ctx) { chainPanic(c, depth-1) }, func(*parallel.Ctx) {})
}

func TestJoinAllocatesNothing(t *testing.T) {
	for _, workers := range []int{1, 2} {
		p := newPool(t, workers)
		var sink atomic.Int64
		fa := func(*parallel.Ctx) { sink.Add(1) }
		fb := func(*parallel.Ctx) { sink.Add(1) }
		var allocs, nested float64
		p.Run(func(c *parallel.Ctx) {
			c.Join(fa, fb) // the first Join at depth 0 makes the frame
			allocs = testing.AllocsPerRun(1000, func() { c.Join(fa, fb) })
			fn := func(c *parallel.Ctx) { c.Join(fa, fb) }
			c.Join(fn, fn)
			nested = testing.AllocsPerRun(1000, func() { c.Join(fn, fn) })
		})
		require.Zerof(t, allocs, "%d workers: allocations per Join", workers)
		require.Zerof(t, nested, "%d workers: allocations per nested Join", workers)
	}
}
