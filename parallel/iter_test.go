package parallel_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/blitz-go/blitz/parallel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// iterCase is one input of the combinator checks: xs, a value to look for
// (present or not), a chunk size, and the options of the place.
type iterCase struct {
	xs     []int
	target int
	k      int
	opts   []parallel.Option
}

func (c iterCase) String() string {
	return fmt.Sprintf("n=%d target=%d k=%d", len(c.xs), c.target, c.k)
}

// The functions the pipelines use.
func triple(x int) int    { return 3*x + 1 }
func isOdd(x int) bool    { return x%2 != 0 }
func lastDigit(x int) int { return x % 10 }

// filterRef is the sequential Filter.
func filterRef(xs []int, pred func(int) bool) []int {
	var out []int
	for _, x := range xs {
		if pred(x) {
			out = append(out, x)
		}
	}
	return out
}

// mapRef is the sequential Map.
func mapRef[T, U any](xs []T, f func(T) U) []U {
	var out []U
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

// chunksRef is the sequential Chunks.
func chunksRef(xs []int, k int) [][]int {
	var out [][]int
	for lo := 0; lo < len(xs); lo += k {
		out = append(out, xs[lo:min(lo+k, len(xs))])
	}
	return out
}

// enumRef is the sequential Enumerate.
func enumRef[T any](xs []T) []parallel.Indexed[T] {
	var out []parallel.Indexed[T]
	for i, x := range xs {
		out = append(out, parallel.Indexed[T]{Index: i, Value: x})
	}
	return out
}

// affine is x ↦ a·x + b (mod 2^64); composition is associative and not
// commutative, so a Reduce over it checks the order of combination.
type affine struct{ a, b uint64 }

// then returns g after f.
func (f affine) then(g affine) affine { return affine{g.a * f.a, g.a*f.b + g.b} }

func toAffine(x int) affine { return affine{uint64(2*x + 1), uint64(x)} }

// iterChecks compare each combinator with its sequential computation.
var iterChecks = []struct {
	name  string
	check func(t *testing.T, c iterCase)
}{
	{"Collect", func(t *testing.T, c iterCase) {
		assert.Equal(t, nilIfEmpty(c.xs), parallel.From(c.xs).Collect(c.opts...), c)
	}},
	{"Map", func(t *testing.T, c iterCase) {
		assert.Equal(t, mapRef(c.xs, triple), parallel.Map(parallel.From(c.xs), triple).Collect(c.opts...), c)
	}},
	{"Filter", func(t *testing.T, c iterCase) {
		assert.Equal(t, filterRef(c.xs, isOdd), parallel.From(c.xs).Filter(isOdd).Collect(c.opts...), c)
		assert.Equal(t, len(filterRef(c.xs, isOdd)), parallel.From(c.xs).Filter(isOdd).Count(c.opts...), c)
		assert.Equal(t, len(c.xs), parallel.From(c.xs).Count(c.opts...), c)
	}},
	{"Sum", func(t *testing.T, c iterCase) {
		want := 0
		for _, x := range filterRef(c.xs, isOdd) {
			want += triple(x)
		}
		assert.Equal(t, want, parallel.Sum(parallel.Map(parallel.From(c.xs).Filter(isOdd), triple), c.opts...), c)
		f := parallel.Map(parallel.From(c.xs), func(x int) float64 { return float64(x) })
		assert.Equal(t, float64(sumInts(c.xs)), parallel.Sum(f, c.opts...), c) // exact: small integers
	}},
	{"MinMax", func(t *testing.T, c iterCase) {
		lo, okLo := parallel.Min(parallel.From(c.xs), c.opts...)
		hi, okHi := parallel.Max(parallel.From(c.xs), c.opts...)
		assert.Equal(t, len(c.xs) > 0, okLo, c)
		assert.Equal(t, len(c.xs) > 0, okHi, c)
		if len(c.xs) > 0 {
			assert.Equal(t, slices.Min(c.xs), lo, c)
			assert.Equal(t, slices.Max(c.xs), hi, c)
		}
	}},
	{"MinByMaxBy", func(t *testing.T, c iterCase) {
		// Enumerate makes ties visible: the first of equal keys must win.
		en := parallel.Enumerate(parallel.From(c.xs))
		key := func(p parallel.Indexed[int]) int { return lastDigit(p.Value) }
		byKey := func(a, b parallel.Indexed[int]) int { return key(a) - key(b) }
		gotMin, ok1 := parallel.MinBy(en, key, c.opts...)
		gotMax, ok2 := parallel.MaxBy(en, key, c.opts...)
		gotMinF, ok3 := parallel.MinFunc(en, byKey, c.opts...)
		gotMaxF, ok4 := parallel.MaxFunc(en, byKey, c.opts...)
		for _, ok := range []bool{ok1, ok2, ok3, ok4} {
			assert.Equal(t, len(c.xs) > 0, ok, c)
		}
		if len(c.xs) > 0 {
			ref := enumRef(c.xs)
			assert.Equal(t, slices.MinFunc(ref, byKey), gotMin, c)
			assert.Equal(t, slices.MaxFunc(ref, byKey), gotMax, c)
			assert.Equal(t, slices.MinFunc(ref, byKey), gotMinF, c)
			assert.Equal(t, slices.MaxFunc(ref, byKey), gotMaxF, c)
		}
	}},
	{"Find", func(t *testing.T, c iterCase) {
		eq := func(x int) bool { return x == c.target }
		want := slices.Index(c.xs, c.target)
		assert.Equal(t, want, parallel.From(c.xs).Position(eq, c.opts...), c)

		en := parallel.Enumerate(parallel.From(c.xs))
		got, ok := en.FindFirst(func(p parallel.Indexed[int]) bool { return eq(p.Value) }, c.opts...)
		assert.Equal(t, want >= 0, ok, c)
		if want >= 0 {
			assert.Equal(t, want, got.Index, c)
		}
		anyP, ok := en.FindAny(func(p parallel.Indexed[int]) bool { return eq(p.Value) }, c.opts...)
		assert.Equal(t, want >= 0, ok, c)
		if ok {
			assert.Equal(t, c.target, c.xs[anyP.Index], c)
		}

		// After Filter the position counts filtered items.
		odd := filterRef(c.xs, isOdd)
		assert.Equal(t, slices.Index(odd, c.target), parallel.From(c.xs).Filter(isOdd).Position(eq, c.opts...), c)
		v, ok := parallel.From(c.xs).Filter(isOdd).FindFirst(func(x int) bool { return x > c.target }, c.opts...)
		i := slices.IndexFunc(odd, func(x int) bool { return x > c.target })
		assert.Equal(t, i >= 0, ok, c)
		if i >= 0 {
			assert.Equal(t, odd[i], v, c)
		}
	}},
	{"AnyAll", func(t *testing.T, c iterCase) {
		assert.Equal(t, slices.Contains(c.xs, c.target), parallel.From(c.xs).Any(func(x int) bool { return x == c.target }, c.opts...), c)
		below := func(x int) bool { return x < c.target }
		assert.Equal(t, !slices.ContainsFunc(c.xs, func(x int) bool { return !below(x) }), parallel.From(c.xs).All(below, c.opts...), c)
		assert.True(t, parallel.From(c.xs).All(func(x int) bool { return x >= 0 }, c.opts...), c)
	}},
	{"Chunks", func(t *testing.T, c iterCase) {
		assert.Equal(t, nilIfEmpty(chunksRef(c.xs, c.k)), parallel.Chunks(c.xs, c.k).Collect(c.opts...), c)
		assert.Equal(t, sumInts(c.xs), parallel.Sum(parallel.Map(parallel.Chunks(c.xs, c.k), sumInts), c.opts...), c)
		assert.Equal(t, (len(c.xs)+c.k-1)/c.k, parallel.Chunks(c.xs, c.k).Count(c.opts...), c)
	}},
	{"Enumerate", func(t *testing.T, c iterCase) {
		got := parallel.Enumerate(parallel.Map(parallel.From(c.xs), triple)).Collect(c.opts...)
		assert.Equal(t, enumRef(mapRef(c.xs, triple)), got, c)
		ch := parallel.Enumerate(parallel.Chunks(c.xs, c.k)).Collect(c.opts...)
		assert.Equal(t, enumRef(chunksRef(c.xs, c.k)), ch, c)
	}},
	{"Zip", func(t *testing.T, c iterCase) {
		m := len(c.xs) * c.k / 9 // shorter than xs, sometimes
		got := parallel.Zip(parallel.From(c.xs), parallel.Map(parallel.Range(m), triple)).Collect(c.opts...)
		var want []parallel.Pair[int, int]
		for i := range min(len(c.xs), m) {
			want = append(want, parallel.Pair[int, int]{First: c.xs[i], Second: triple(i)})
		}
		assert.Equal(t, want, got, c)
	}},
	{"Chain", func(t *testing.T, c iterCase) {
		i := len(c.xs) / 3
		j := i + (len(c.xs)-i)*c.k/10
		a, b, d := c.xs[:i], c.xs[i:j], c.xs[j:]
		exact := parallel.Chain(parallel.From(a), parallel.From(b), parallel.From(d))
		assert.Equal(t, nilIfEmpty(c.xs), exact.Collect(c.opts...), c)
		assert.Equal(t, enumRef(c.xs), parallel.Enumerate(exact).Collect(c.opts...), c)

		mixed := parallel.Chain(parallel.From(a).Filter(isOdd), parallel.From(b), parallel.From(d).Filter(isOdd))
		want := slices.Concat(filterRef(a, isOdd), b, filterRef(d, isOdd))
		assert.Equal(t, nilIfEmpty(want), mixed.Collect(c.opts...), c)
		eq := func(x int) bool { return x == c.target }
		assert.Equal(t, slices.Index(want, c.target), mixed.Position(eq, c.opts...), c)
		assert.Equal(t, slices.Contains(want, c.target), mixed.Any(eq, c.opts...), c)
	}},
	{"Flatten", func(t *testing.T, c iterCase) {
		// Each chunk keeps its odd elements, doubled: some inner slices
		// are empty, some longer than the chunk.
		inner := func(ch []int) []int {
			var out []int
			for _, x := range ch {
				if isOdd(x) {
					out = append(out, x, x+100)
				}
			}
			return out
		}
		fl := parallel.Flatten(parallel.Map(parallel.Chunks(c.xs, c.k), inner))
		var want []int
		for _, ch := range chunksRef(c.xs, c.k) {
			want = append(want, inner(ch)...)
		}
		assert.Equal(t, want, fl.Collect(c.opts...), c)
		assert.Equal(t, len(want), fl.Count(c.opts...), c)
		eq := func(x int) bool { return x == c.target+100 }
		assert.Equal(t, slices.IndexFunc(want, eq), fl.Position(eq, c.opts...), c)
	}},
	{"ForEach", func(t *testing.T, c iterCase) {
		hits := make([]atomic.Int32, len(c.xs))
		var sum atomic.Int64
		parallel.Enumerate(parallel.From(c.xs)).ForEach(func(p parallel.Indexed[int]) {
			hits[p.Index].Add(1)
			sum.Add(int64(p.Value))
		}, c.opts...)
		for i := range hits {
			if hits[i].Load() != 1 {
				t.Errorf("%v: index %d visited %d times", c, i, hits[i].Load())
				break
			}
		}
		assert.Equal(t, int64(sumInts(c.xs)), sum.Load(), c)
	}},
	{"Reduce", func(t *testing.T, c iterCase) {
		id := affine{1, 0}
		want := id
		for _, x := range c.xs {
			want = want.then(toAffine(x))
		}
		got := parallel.Map(parallel.From(c.xs), toAffine).Reduce(id, affine.then, c.opts...)
		assert.Equal(t, want, got, c)
		// The identity is only returned for no items, never combined.
		none := affine{7, 7}
		got = parallel.Map(parallel.From(c.xs).Filter(isOdd), toAffine).Reduce(none, affine.then, c.opts...)
		want = none
		for i, x := range filterRef(c.xs, isOdd) {
			if i == 0 {
				want = toAffine(x)
			} else {
				want = want.then(toAffine(x))
			}
		}
		assert.Equal(t, want, got, c)
	}},
	{"Fold", func(t *testing.T, c iterCase) {
		var want [10]int
		for _, x := range c.xs {
			want[lastDigit(x)]++
		}
		got := parallel.Fold(parallel.From(c.xs),
			func() [10]int { return [10]int{} },
			func(h [10]int, x int) [10]int { h[lastDigit(x)]++; return h },
			func(x, y [10]int) [10]int {
				for i := range x {
					x[i] += y[i]
				}
				return x
			}, c.opts...)
		assert.Equal(t, want, got, c)
	}},
	{"Range", func(t *testing.T, c iterCase) {
		n := len(c.xs)
		assert.Equal(t, n*(n-1)/2, parallel.Sum(parallel.Range(n), c.opts...), c)
		var want []int
		for i := range n {
			if i%3 == 0 {
				want = append(want, i)
			}
		}
		assert.Equal(t, want, parallel.Range(n).Filter(func(i int) bool { return i%3 == 0 }).Collect(c.opts...), c)
	}},
}

// nilIfEmpty returns nil for an empty slice: Collect returns nil for no
// items.
func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func sumInts(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func TestIterEqualsSequential(t *testing.T) {
	for _, pl := range iterPlaces(t) {
		t.Run(pl.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			for _, n := range iterSizes() {
				xs := make([]int, n)
				for i := range xs {
					xs[i] = r.IntN(64)
				}
				target, k := r.IntN(80), 1+r.IntN(9)
				pl.run(func(opts ...parallel.Option) {
					c := iterCase{xs, target, k, opts}
					for _, ch := range iterChecks {
						ch.check(t, c)
					}
				})
				if t.Failed() {
					t.Fatalf("failed at n=%d", n)
				}
			}
		})
	}
}

func TestZeroIterIsEmpty(t *testing.T) {
	var it parallel.Iter[int]
	require.Nil(t, it.Collect())
	require.Zero(t, it.Count())
	require.Zero(t, parallel.Sum(it))
	require.Equal(t, -1, it.Position(func(int) bool { return true }))
	require.Nil(t, parallel.Enumerate(it).Collect())
	require.Equal(t, []int{1, 2}, parallel.Chain(it, parallel.From([]int{1, 2}), it).Collect())
	_, ok := parallel.Min(it)
	require.False(t, ok)
}

// An Iter is a description: driving it twice gives the same result, and
// adapting it leaves it unchanged.
func TestIterIsReusable(t *testing.T) {
	xs := make([]int, 10_000)
	for i := range xs {
		xs[i] = i
	}
	base := parallel.From(xs)
	odd := base.Filter(isOdd)
	require.Equal(t, odd.Collect(), odd.Collect())
	require.Equal(t, len(xs), base.Count())
	require.Equal(t, len(xs)/2, odd.Count())
}

func TestIterMisusePanics(t *testing.T) {
	require.Equal(t, "parallel: Chunks size must be at least 1", recoverPanic(func() { parallel.Chunks([]int{1}, 0) }))
	notExact := "parallel: Enumerate and Zip need an iterator with one item per index (none after Filter or Flatten)"
	filtered := parallel.From([]int{1}).Filter(isOdd)
	require.Equal(t, notExact, recoverPanic(func() { parallel.Enumerate(filtered) }))
	require.Equal(t, notExact, recoverPanic(func() { parallel.Zip(parallel.Range(1), filtered) }))
	flat := parallel.Flatten(parallel.Chunks([]int{1, 2}, 1))
	require.Equal(t, notExact, recoverPanic(func() { parallel.Zip(flat, parallel.Range(1)) }))
	require.Equal(t, notExact, recoverPanic(func() { parallel.Enumerate(parallel.Chain(parallel.Range(3), filtered)) }))
}

// Chunks cut the capacity of each chunk, so that appending to one does not
// overwrite the next.
func TestChunksDoNotOverlap(t *testing.T) {
	xs := []int{1, 2, 3, 4, 5}
	chunks := parallel.Chunks(xs, 2).Collect()
	_ = append(chunks[0], 99)
	require.Equal(t, []int{1, 2, 3, 4, 5}, xs)
}

// Iterators below the sequential cut-off run on the caller, without a pool:
// even a closed one.
func TestSmallIterRunsOnTheCaller(t *testing.T) {
	p, err := parallel.NewPool(parallel.Config{Workers: 1})
	require.NoError(t, err)
	p.Close()
	xs := make([]int, 2*parallel.AutoMinGrain-1)
	for i := range xs {
		xs[i] = i
	}
	it := parallel.Map(parallel.From(xs).Filter(isOdd), triple)
	require.Equal(t, mapRef(filterRef(xs, isOdd), triple), it.Collect(parallel.On(p)))
	require.Equal(t, 3, it.Position(func(x int) bool { return x == triple(7) }, parallel.On(p)))
	big := parallel.From(append(xs, 0))
	require.Equal(t, parallel.ErrClosed, recoverPanic(func() { big.Count(parallel.On(p)) }))
}
