package parallel_test

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/blitz-go/blitz/parallel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sortSizes are every size to 300, then sizes around the sequential
// cut-off and a few larger ones (smaller under the race detector, which
// slows sorting tenfold).
func sortSizes() []int {
	var ns []int
	for n := 0; n <= scale(300, 100); n++ {
		ns = append(ns, n)
	}
	ns = append(ns, parallel.SortSeqMax, parallel.SortSeqMax+1, 3*parallel.SortSeqMax+5)
	switch {
	case testing.Short():
		return ns
	case raceEnabled:
		return append(ns, 1<<17)
	}
	return append(ns, 1<<19)
}

// sortPatterns make the inputs: random, sorted, reversed, all equal, few
// distinct values, and sorted with a few random swaps.
var sortPatterns = map[string]func(r *rand.Rand, n int) []int{
	"random":   func(r *rand.Rand, n int) []int { return genInts(n, func(int) int { return r.IntN(1 << 30) }) },
	"sorted":   func(r *rand.Rand, n int) []int { return genInts(n, func(i int) int { return i }) },
	"reversed": func(r *rand.Rand, n int) []int { return genInts(n, func(i int) int { return n - i }) },
	"equal":    func(r *rand.Rand, n int) []int { return genInts(n, func(int) int { return 7 }) },
	"few":      func(r *rand.Rand, n int) []int { return genInts(n, func(int) int { return r.IntN(4) }) },
	"nearly": func(r *rand.Rand, n int) []int {
		s := genInts(n, func(i int) int { return i })
		for range min(n, 5) {
			i, j := r.IntN(n), r.IntN(n)
			s[i], s[j] = s[j], s[i]
		}
		return s
	},
}

func genInts(n int, f func(i int) int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = f(i)
	}
	return s
}

// item is an element with a key and its original index, so that stability
// is visible.
type item struct{ key, idx int }

func byKey(a, b item) int { return cmp.Compare(a.key, b.key) }

func toItems(keys []int) []item {
	s := make([]item, len(keys))
	for i, k := range keys {
		s[i] = item{k, i}
	}
	return s
}

// sortPlaces are the default pool, a 2-worker pool and a job's Ctx.
func sortPlaces(t *testing.T) []place {
	p2 := newPool(t, 2)
	return []place{
		{"default", func(f func(...parallel.Option)) { f() }},
		{"pool2", func(f func(...parallel.Option)) { f(parallel.On(p2)) }},
		{"ctx", func(f func(...parallel.Option)) {
			p2.Run(func(c *parallel.Ctx) { f(parallel.On(c)) })
		}},
	}
}

func TestSortsEqualTheStandardLibrary(t *testing.T) {
	for _, pl := range sortPlaces(t) {
		for name, gen := range sortPatterns {
			t.Run(pl.name+"/"+name, func(t *testing.T) {
				r := rand.New(rand.NewPCG(5, 6))
				for _, n := range sortSizes() {
					keys := gen(r, n)
					pl.run(func(opts ...parallel.Option) { checkSorts(t, keys, opts) })
					if t.Failed() {
						t.Fatalf("failed at n=%d", n)
					}
				}
			})
		}
	}
}

// checkSorts runs every sort on copies of keys and compares with the
// standard library. It reports with assert: it may run on a worker.
func checkSorts(t *testing.T, keys []int, opts []parallel.Option) {
	n := len(keys)
	want := slices.Clone(keys)
	slices.Sort(want)

	got := slices.Clone(keys)
	parallel.Sort(got, opts...)
	sameSlice(t, want, got, "Sort n=%d", n)

	got = slices.Clone(keys)
	parallel.SortDesc(got, opts...)
	sameSlice(t, want, reversed(got), "SortDesc n=%d", n)

	// Not stable: equal to the standard library's order of keys, and a
	// permutation of the items.
	items := toItems(keys)
	gotItems := slices.Clone(items)
	parallel.SortFunc(gotItems, byKey, opts...)
	assert.True(t, slices.IsSortedFunc(gotItems, byKey), "SortFunc n=%d: not sorted", n)
	slices.SortFunc(gotItems, func(a, b item) int { return a.idx - b.idx })
	sameSlice(t, items, gotItems, "SortFunc n=%d: not a permutation", n)

	stable := slices.Clone(items)
	slices.SortStableFunc(stable, byKey)
	gotItems = slices.Clone(items)
	parallel.SortStableFunc(gotItems, byKey, opts...)
	sameSlice(t, stable, gotItems, "SortStableFunc n=%d", n)

	gotItems = slices.Clone(items)
	parallel.SortByKey(gotItems, func(x item) int { return x.key }, opts...)
	sameSlice(t, stable, gotItems, "SortByKey n=%d", n)

	stableDesc := slices.Clone(items)
	slices.SortStableFunc(stableDesc, func(a, b item) int { return byKey(b, a) })
	gotItems = slices.Clone(items)
	parallel.SortByKeyDesc(gotItems, func(x item) int { return x.key }, opts...)
	sameSlice(t, stableDesc, gotItems, "SortByKeyDesc n=%d", n)
}

// sameSlice reports, with assert, unless want and got are equal; a fast
// comparison first, as assert's is slow on long slices.
func sameSlice[T comparable](t *testing.T, want, got []T, msg string, args ...any) {
	if !slices.Equal(want, got) {
		assert.Equal(t, want, got, append([]any{msg}, args...)...)
	}
}

func reversed[T any](s []T) []T {
	s = slices.Clone(s)
	slices.Reverse(s)
	return s
}

// Floats sort as slices.Sort sorts them: NaNs first (last descending).
func TestSortFloatsWithNaNs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{10, 1000, 3 * parallel.SortSeqMax} {
		s := make([]float64, n)
		for i := range s {
			s[i] = r.NormFloat64()
			if r.IntN(10) == 0 {
				s[i] = math.NaN()
			}
		}
		want := slices.Clone(s)
		slices.Sort(want)
		got := slices.Clone(s)
		parallel.Sort(got)
		require.Equal(t, fmt.Sprint(want), fmt.Sprint(got), "n=%d", n)
		got = slices.Clone(s)
		parallel.SortDesc(got)
		require.Equal(t, fmt.Sprint(reversed(want)), fmt.Sprint(got), "n=%d", n)
	}
}

// Slices up to the cut-off are sorted on the caller, without a pool: even a
// closed one.
func TestSmallSortsRunOnTheCaller(t *testing.T) {
	p, err := parallel.NewPool(parallel.Config{Workers: 1})
	require.NoError(t, err)
	p.Close()
	s := genInts(parallel.SortSeqMax, func(i int) int { return -i })
	parallel.Sort(s, parallel.On(p))
	require.True(t, slices.IsSorted(s))
	parallel.SortStableFunc(toItems(s), byKey, parallel.On(p))
	s = append(s, 0)
	require.Equal(t, parallel.ErrClosed, recoverPanic(func() { parallel.Sort(s, parallel.On(p)) }))
}

// A panicking comparison is re-raised as a *PanicError, from small and
// large sorts alike.
func TestSortComparisonPanics(t *testing.T) {
	p := newPool(t, 2)
	for _, n := range []int{100, 4 * parallel.SortSeqMax} {
		s := toItems(genInts(n, func(i int) int { return (i * 7919) % n }))
		boom := func(a, b item) int {
			if a.key == n/3 || b.key == n/3 {
				panic("boom")
			}
			return byKey(a, b)
		}
		require.Equal(t, "boom", panicValue(t, func() { parallel.SortFunc(s, boom, parallel.On(p)) }), "SortFunc n=%d", n)
		require.Equal(t, "boom", panicValue(t, func() { parallel.SortStableFunc(s, boom, parallel.On(p)) }), "SortStableFunc n=%d", n)
		require.Equal(t, "boom", panicValue(t, func() {
			parallel.SortByKey(s, func(x item) int {
				if x.key == n/3 {
					panic("boom")
				}
				return x.key
			}, parallel.On(p))
		}), "SortByKey n=%d", n)
	}
}
