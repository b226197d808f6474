package parallel_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/parallel"
	"github.com/stretchr/testify/require"
)

// countingRange returns Range(n) with every item counted as it is produced
// (a Map that counts), and the counter.
func countingRange(n int) (parallel.Iter[int], *atomic.Int64) {
	visited := new(atomic.Int64)
	return parallel.Map(parallel.Range(n), func(i int) int {
		visited.Add(1)
		return i
	}), visited
}

// earlyOps are the early-exit operations, each looking for the single
// match m; each returns whether it found m where it should.
var earlyOps = []struct {
	name string
	run  func(it parallel.Iter[int], m int, opts ...parallel.Option) bool
}{
	{"FindAny", func(it parallel.Iter[int], m int, opts ...parallel.Option) bool {
		v, ok := it.FindAny(func(i int) bool { return i == m }, opts...)
		return ok && v == m
	}},
	{"FindFirst", func(it parallel.Iter[int], m int, opts ...parallel.Option) bool {
		v, ok := it.FindFirst(func(i int) bool { return i == m }, opts...)
		return ok && v == m
	}},
	{"Position", func(it parallel.Iter[int], m int, opts ...parallel.Option) bool {
		return it.Position(func(i int) bool { return i == m }, opts...) == m
	}},
	{"Any", func(it parallel.Iter[int], m int, opts ...parallel.Option) bool {
		return it.Any(func(i int) bool { return i == m }, opts...)
	}},
	{"All", func(it parallel.Iter[int], m int, opts ...parallel.Option) bool {
		return !it.All(func(i int) bool { return i != m }, opts...)
	}},
	{"FindFirstFiltered", func(it parallel.Iter[int], m int, opts ...parallel.Option) bool {
		// Filter drops every item but the match: the stop check must not
		// depend on items reaching the terminal operation.
		v, ok := it.Filter(func(i int) bool { return i == m }).FindFirst(func(int) bool { return true }, opts...)
		return ok && v == m
	}},
	{"AnyFlattened", func(it parallel.Iter[int], m int, opts ...parallel.Option) bool {
		fl := parallel.Flatten(parallel.Map(it, func(i int) []int { return []int{i, i} }))
		return fl.Any(func(i int) bool { return i == m }, opts...)
	}},
}

// On one worker the pieces run left to right, so an early exit visits the
// match's batch and nothing after it: exactly, not statistically.
func TestEarlyExitOnOneWorkerVisitsOnlyUpToTheMatch(t *testing.T) {
	p := newPool(t, 1)
	n, m := scale(1<<22, 1<<18), 1000
	for _, op := range earlyOps {
		t.Run(op.name, func(t *testing.T) {
			it, visited := countingRange(n)
			require.True(t, op.run(it, m, parallel.On(p)))
			require.LessOrEqual(t, visited.Load(), int64(m+parallel.BlockSize))
		})
	}
}

// On several workers, the others stop at their next batch once the match is
// published. Timing decides how far they got, so the bound is loose and the
// best of a few runs counts.
func TestEarlyExitStopsTheOtherWorkers(t *testing.T) {
	n, m := scale(1<<22, 1<<20), 1000
	for _, workers := range []int{2, 4} {
		p := newPool(t, workers)
		for _, op := range earlyOps {
			t.Run(fmt.Sprintf("%s/workers=%d", op.name, workers), func(t *testing.T) {
				best := int64(n)
				for range 5 {
					it, visited := countingRange(n)
					require.True(t, op.run(it, m, parallel.On(p)))
					best = min(best, visited.Load())
				}
				t.Logf("%d workers: visited %d of %d", workers, best, n)
				require.Less(t, best, int64(n/8))
			})
		}
	}
}

// A match right of another stops only what is right of it: FindFirst still
// returns the leftmost match, even when the right one is found first.
func TestFindFirstLeftOfAMatchKeepsGoing(t *testing.T) {
	p := newPool(t, 2)
	n := scale(1<<20, 1<<17)
	left, right := 10, n-10
	var rightFound atomic.Bool
	pred := func(i int) bool {
		if i == 0 { // hold the left piece until the right match is found
			deadline := time.Now().Add(5 * time.Second)
			for !rightFound.Load() && time.Now().Before(deadline) {
				time.Sleep(50 * time.Microsecond)
			}
		}
		if i == right {
			rightFound.Store(true)
		}
		return i == left || i == right
	}
	v, ok := parallel.Range(n).FindFirst(pred, parallel.On(p))
	require.True(t, ok)
	require.Equal(t, left, v)
	require.True(t, rightFound.Load(), "the right match was never found: no steal?")

	rightFound.Store(false)
	require.Equal(t, left, parallel.Range(n).Position(pred, parallel.On(p)))
}

// A panic in any function of a pipeline is re-raised as a *PanicError, and
// only once every piece has finished: nothing runs after the call returns.
func TestIterPanicsAfterEveryPieceFinished(t *testing.T) {
	p := newPool(t, 4)
	ops := map[string]func(it parallel.Iter[int], boom func(int) bool){
		"Sum":       func(it parallel.Iter[int], boom func(int) bool) { parallel.Sum(it.Filter(boom), parallel.On(p)) },
		"Collect":   func(it parallel.Iter[int], boom func(int) bool) { it.Filter(boom).Collect(parallel.On(p)) },
		"ForEach":   func(it parallel.Iter[int], boom func(int) bool) { it.ForEach(func(i int) { boom(i) }, parallel.On(p)) },
		"FindFirst": func(it parallel.Iter[int], boom func(int) bool) { it.FindFirst(boom, parallel.On(p)) },
		"Position":  func(it parallel.Iter[int], boom func(int) bool) { it.Position(boom, parallel.On(p)) },
		"Reduce": func(it parallel.Iter[int], boom func(int) bool) {
			it.Reduce(0, func(x, y int) int { boom(y); return x + y }, parallel.On(p))
		},
	}
	for name, op := range ops {
		for _, n := range []int{50, scale(1<<20, 1<<17)} {
			it, visited := countingRange(n)
			boom := func(i int) bool {
				if i == n/2+1 { // not a split point: Reduce's op sees it as y
					panic("boom")
				}
				return false
			}
			t.Run(fmt.Sprintf("%s/n=%d", name, n), func(t *testing.T) {
				require.Equal(t, "boom", panicValue(t, func() { op(it, boom) }))
				after := visited.Load()
				time.Sleep(5 * time.Millisecond)
				require.Equal(t, after, visited.Load(), "a piece ran after the panic was re-raised")
			})
		}
	}
}
