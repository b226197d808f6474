package parallel_test

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/blitz-go/blitz/parallel"
	"github.com/stretchr/testify/require"
)

// loopSizes are every size from 0 to past the sequential cut-off, then some
// larger ones.
func loopSizes() []int {
	var ns []int
	for n := 0; n <= 4*parallel.AutoMinGrain+3; n++ {
		ns = append(ns, n)
	}
	return append(ns, 1000, 4097, scale(200_000, 20_000))
}

// loopPlaces runs check with each way of choosing where and how a loop runs.
func loopPlaces(t *testing.T, check func(t *testing.T, opts ...parallel.Option)) {
	p := newPool(t, 0)
	t.Run("default", func(t *testing.T) { check(t) })
	t.Run("pool", func(t *testing.T) { check(t, parallel.On(p)) })
	t.Run("pool/grain=1", func(t *testing.T) { check(t, parallel.On(p), parallel.Grain(1)) })
	t.Run("pool/grain=7", func(t *testing.T) { check(t, parallel.On(p), parallel.Grain(7)) })
	t.Run("ctx", func(t *testing.T) {
		p.Run(func(c *parallel.Ctx) { check(t, parallel.On(c)) })
	})
}

func randInts(r *rand.Rand, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = r.IntN(1000) - 500
	}
	return s
}

func TestLoopsEqualSequential(t *testing.T) {
	loopPlaces(t, func(t *testing.T, opts ...parallel.Option) {
		r := rand.New(rand.NewPCG(1, 2))
		for _, n := range loopSizes() {
			in := randInts(r, n)

			hits := make([]atomic.Int32, n)
			parallel.For(n, func(lo, hi int) {
				require.LessOrEqual(t, 0, lo)
				require.Less(t, lo, hi)
				for i := lo; i < hi; i++ {
					hits[i].Add(1)
				}
			}, opts...)
			for i := range hits {
				require.Equalf(t, int32(1), hits[i].Load(), "For n=%d: index %d", n, i)
			}

			want := 0
			for _, v := range in {
				want += v
			}
			got := parallel.Reduce(n, 0, func(lo, hi int) int {
				s := 0
				for _, v := range in[lo:hi] {
					s += v
				}
				return s
			}, func(x, y int) int { return x + y }, opts...)
			require.Equalf(t, want, got, "Reduce n=%d", n)

			// Order matters: concatenation is associative, not commutative.
			if n <= 2000 {
				var wantS string
				for _, v := range in {
					wantS += strconv.Itoa(v) + ","
				}
				gotS := parallel.MapReduce(n, "", func(i int) string { return strconv.Itoa(in[i]) + "," },
					func(x, y string) string { return x + y }, opts...)
				require.Equalf(t, wantS, gotS, "MapReduce n=%d", n)
			}

			sq := func(v int) int { return v*v - 3 }
			gotC := parallel.Collect(n, func(i int) int { return sq(in[i]) }, opts...)
			wantC := make([]int, n)
			for i, v := range in {
				wantC[i] = sq(v)
			}
			if n == 0 {
				require.Empty(t, gotC)
			} else {
				require.Equalf(t, wantC, gotC, "Collect n=%d", n)
			}

			m := slices.Clone(in)
			parallel.MapInPlace(m, sq, opts...)
			if n > 0 {
				require.Equalf(t, wantC, m, "MapInPlace n=%d", n)
			}
		}
	})
}

func TestLoopPanicsAfterEveryPieceRan(t *testing.T) {
	loopPlaces(t, func(t *testing.T, opts ...parallel.Option) {
		for _, n := range []int{1, 10, 2 * parallel.AutoMinGrain, 5000} {
			bad := n / 2
			var ran atomic.Int64
			v := panicValue(t, func() {
				parallel.For(n, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						if i == bad {
							panic(i)
						}
						ran.Add(1)
					}
				}, append(opts, parallel.Grain(1))...)
			})
			require.Equal(t, bad, v)
			require.Equalf(t, int64(n-1), ran.Load(), "n=%d: every other element must have run", n)

			v = panicValue(t, func() {
				parallel.Collect(n, func(i int) int {
					if i == bad {
						panic("collect")
					}
					return i
				}, opts...)
			})
			require.Equal(t, "collect", v)
		}
	})
}

func TestLoopOptionMisusePanics(t *testing.T) {
	require.Equal(t, "parallel: Grain must be at least 1", recoverPanic(func() { parallel.Grain(0) }))
	require.Equal(t, "parallel: On(nil)", recoverPanic(func() { parallel.On(nil) }))
}

// Loops run below the cut-off on the caller, without a pool: even a closed
// one.
func TestSmallLoopsRunOnTheCaller(t *testing.T) {
	p, err := parallel.NewPool(parallel.Config{Workers: 1})
	require.NoError(t, err)
	p.Close()
	var n int
	parallel.For(2*parallel.AutoMinGrain-1, func(lo, hi int) { n += hi - lo }, parallel.On(p))
	require.Equal(t, 2*parallel.AutoMinGrain-1, n)
}
