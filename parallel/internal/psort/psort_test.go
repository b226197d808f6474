package psort

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// pair is the element of the comparator tests: sorted by key only, idx
// records the original position so that stability can be checked.
type pair struct{ key, idx int }

func cmpKey(a, b pair) int { return cmp.Compare(a.key, b.key) }

// cmpKeyIdx is the total order used to compare results of unstable sorts.
func cmpKeyIdx(a, b pair) int {
	if c := cmp.Compare(a.key, b.key); c != 0 {
		return c
	}
	return cmp.Compare(a.idx, b.idx)
}

// A sorter is one entry point or internal algorithm under test.
type (
	pairSorter struct {
		name   string
		stable bool
		sort   func(c ctx, join Join[ctx], s []pair)
	}
	intSorter struct {
		name string
		sort func(c ctx, join Join[ctx], s []int)
	}
)

var pairSorters = []pairSorter{
	{"Sort", false, func(c ctx, j Join[ctx], s []pair) { Sort(c, j, s, cmpKey) }},
	{"SortStable", true, func(c ctx, j Join[ctx], s []pair) { SortStable(c, j, s, cmpKey) }},
	{"parPDQFunc", false, func(c ctx, j Join[ctx], s []pair) {
		parPDQFunc(c, j, s, 0, len(s), newPDQState(len(s)), cmpKey)
	}},
	{"parMergeSortFunc/unstable", false, func(c ctx, j Join[ctx], s []pair) {
		parMergeSortFunc(c, j, s, make([]pair, len(s)), false, false, cmpKey)
	}},
	{"parMergeSortFunc/stable/toBuf", true, func(c ctx, j Join[ctx], s []pair) {
		buf := make([]pair, len(s))
		parMergeSortFunc(c, j, s, buf, true, true, cmpKey)
		copy(s, buf)
	}},
}

var intSorters = []intSorter{
	{"SortOrdered", func(c ctx, j Join[ctx], s []int) { SortOrdered(c, j, s) }},
	{"parPDQOrdered", func(c ctx, j Join[ctx], s []int) {
		parPDQOrdered(c, j, s, 0, len(s), newPDQState(len(s)))
	}},
	{"parMergeSortOrdered/unstable", func(c ctx, j Join[ctx], s []int) {
		parMergeSortOrdered(c, j, s, make([]int, len(s)), false, false)
	}},
	{"parMergeSortOrdered/stable", func(c ctx, j Join[ctx], s []int) {
		parMergeSortOrdered(c, j, s, make([]int, len(s)), false, true)
	}},
}

// expected holds the slices package's results for one input, computed once
// for all sorters.
type expected struct {
	in     []pair
	stable []pair // slices.SortStableFunc by key
	total  []pair // slices.SortFunc by (key, idx): what unstable results are compared with
	ints   []int  // slices.Sort of the keys
}

func expect(in []pair) *expected {
	e := &expected{in: in, stable: slices.Clone(in), total: slices.Clone(in), ints: keys(in)}
	slices.SortStableFunc(e.stable, cmpKey)
	slices.SortFunc(e.total, cmpKeyIdx)
	slices.Sort(e.ints)
	return e
}

// checkAll runs every sorter through join on e.in and compares the results
// with the slices package's.
func checkAll(t testing.TB, join Join[ctx], e *expected) {
	t.Helper()
	for _, ps := range pairSorters {
		checkPairs(t, ps, join, e)
	}
	for _, is := range intSorters {
		checkInts(t, is, join, e)
	}
}

func checkPairs(t testing.TB, ps pairSorter, join Join[ctx], e *expected) {
	t.Helper()
	got := slices.Clone(e.in)
	ps.sort(ctx{}, join, got)
	want := e.stable
	if !ps.stable {
		// Unstable: keys in order, and the same multiset of pairs.
		if !slices.IsSortedFunc(got, cmpKey) {
			t.Fatalf("%s: n=%d: not sorted: %v", ps.name, len(got), head(got))
		}
		slices.SortFunc(got, cmpKeyIdx)
		want = e.total
	}
	if !slices.Equal(got, want) {
		i := mismatch(got, want)
		t.Fatalf("%s: n=%d: differs from slices at %d: got %v, want %v",
			ps.name, len(got), i, got[i], want[i])
	}
}

func checkInts(t testing.TB, is intSorter, join Join[ctx], e *expected) {
	t.Helper()
	got := keys(e.in)
	is.sort(ctx{}, join, got)
	if !slices.Equal(got, e.ints) {
		i := mismatch(got, e.ints)
		t.Fatalf("%s: n=%d: differs from slices.Sort at %d: got %v, want %v",
			is.name, len(got), i, got[i], e.ints[i])
	}
}

func mismatch[T comparable](a, b []T) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}

func head[T any](s []T) []T { return s[:min(len(s), 20)] }

// randomPairs returns n pairs with keys in [0, distinct).
func randomPairs(r *rand.Rand, n, distinct int) []pair {
	s := make([]pair, n)
	for i := range s {
		s[i] = pair{r.IntN(distinct), i}
	}
	return s
}

func keys(s []pair) []int {
	k := make([]int, len(s))
	for i, p := range s {
		k[i] = p.key
	}
	return k
}

// patterns builds the structured inputs pdqsort special-cases.
var patterns = []struct {
	name string
	key  func(i, n int, r *rand.Rand) int
}{
	{"random", func(i, n int, r *rand.Rand) int { return r.Int() }},
	{"sorted", func(i, n int, r *rand.Rand) int { return i }},
	{"reversed", func(i, n int, r *rand.Rand) int { return n - i }},
	{"equal", func(i, n int, r *rand.Rand) int { return 7 }},
	{"sawtooth", func(i, n int, r *rand.Rand) int { return i % 97 }},
	{"fewDistinct", func(i, n int, r *rand.Rand) int { return r.IntN(4) }},
	{"organPipe", func(i, n int, r *rand.Rand) int { return min(i, n-i) }},
	{"sortedTail", func(i, n int, r *rand.Rand) int {
		if i > n/2 {
			return i
		}
		return r.IntN(n + 1)
	}},
	{"nearlySorted", func(i, n int, r *rand.Rand) int {
		if r.IntN(100) == 0 {
			return r.IntN(n + 1)
		}
		return i
	}},
}

func patternPairs(key func(i, n int, r *rand.Rand) int, n int, r *rand.Rand) []pair {
	s := make([]pair, n)
	for i := range s {
		s[i] = pair{key(i, n, r), i}
	}
	return s
}

// smallCutoffs makes inputs of a few dozen elements go parallel.
func smallCutoffs(t testing.TB) { setCutoffs(t, 24, 24, 16) }

// TestEverySizeMatchesSlices sorts random inputs of every size up to 2000
// with small cut-offs, with keys drawn from a range of n/4 so that there
// are many ties. The sequential join takes every size; the goroutine join,
// slower under -race, every third (-short: every 5th and every 23rd).
func TestEverySizeMatchesSlices(t *testing.T) {
	smallCutoffs(t)
	steps := map[string]int{"seqJoin": 1, "goJoin": 3}
	if testing.Short() || raceEnabled {
		steps = map[string]int{"seqJoin": 5, "goJoin": 23}
	}
	for _, j := range testJoins {
		t.Run(j.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			for n := 0; n <= 2000; n += steps[j.name] {
				checkAll(t, j.join, expect(randomPairs(r, n, n/4+1)))
			}
		})
	}
}

// TestPatternsMatchSlices covers the structured inputs, across the default
// and the small cut-offs.
func TestPatternsMatchSlices(t *testing.T) {
	small := []int{0, 1, 2, 3, 12, 13, 49, 50, 51, 100, 1000, 4099}
	big := []int{1 << 15, 100_003} // with the default cut-offs only
	if testing.Short() || raceEnabled {
		small, big = small[:len(small)-1], big[:1]
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, smallCut := range []bool{false, true} {
		t.Run(fmt.Sprintf("smallCutoffs=%v", smallCut), func(t *testing.T) {
			sizes := append(small, big...)
			if smallCut {
				smallCutoffs(t)
				sizes = small
			}
			for _, p := range patterns {
				for _, n := range sizes {
					e := expect(patternPairs(p.key, n, r))
					for _, j := range testJoins {
						checkAll(t, j.join, e)
					}
				}
			}
		})
	}
}

// TestBigInputsGoJoin runs the default cut-offs on inputs large enough to
// split many times, with real concurrency.
func TestBigInputsGoJoin(t *testing.T) {
	n := 500_000
	if testing.Short() || raceEnabled {
		n = 200_000
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, distinct := range []int{math.MaxInt, 1000} {
		checkAll(t, goJoin, expect(randomPairs(r, n, distinct)))
	}
}

// TestSortOrderedFloatsLikeSlices checks NaN placement (first, as in
// slices.Sort) and ±0.
func TestSortOrderedFloatsLikeSlices(t *testing.T) {
	smallCutoffs(t)
	r := rand.New(rand.NewPCG(7, 8))
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1)}
	for n := 0; n < 600; n += 13 {
		in := make([]float64, n)
		for i := range in {
			if r.IntN(5) == 0 {
				in[i] = specials[r.IntN(len(specials))]
			} else {
				in[i] = r.NormFloat64()
			}
		}
		for _, j := range testJoins {
			got := slices.Clone(in)
			SortOrdered(ctx{}, j.join, got)
			want := slices.Clone(in)
			slices.Sort(want)
			eq := func(a, b float64) bool { return a == b || (a != a && b != b) }
			if !slices.EqualFunc(got, want, eq) {
				t.Fatalf("n=%d: got %v, want %v", n, head(got), head(want))
			}
		}
	}
}

// TestHeapSortFallback forces the bad-pivot budget to zero or one, so that
// parts are finished by heapsort, sequentially and in parallel.
func TestHeapSortFallback(t *testing.T) {
	smallCutoffs(t)
	r := rand.New(rand.NewPCG(9, 10))
	for _, limit := range []int{0, 1} {
		for _, n := range []int{0, 1, 5, 13, 100, 1001} {
			in := randomPairs(r, n, n/3+1)
			st := pdqState{limit: limit, wasBalanced: true, wasPartitioned: true}
			got := slices.Clone(in)
			pdqFunc(got, 0, n, st, cmpKey)
			if !slices.IsSortedFunc(got, cmpKey) {
				t.Fatalf("pdqFunc limit=%d n=%d: not sorted", limit, n)
			}
			got = slices.Clone(in)
			parPDQFunc(ctx{}, goJoin, got, 0, n, st, cmpKey)
			if !slices.IsSortedFunc(got, cmpKey) {
				t.Fatalf("parPDQFunc limit=%d n=%d: not sorted", limit, n)
			}
		}
	}
}

// TestJoinReceivesWorkerContext checks that the nested sorts use the
// context handed to each side, not the caller's.
func TestJoinReceivesWorkerContext(t *testing.T) {
	smallCutoffs(t)
	maxDepth := 0
	join := func(c ctx, a, b func(ctx)) {
		maxDepth = max(maxDepth, c.depth)
		seqJoin(c, a, b)
	}
	s := randomPairs(rand.New(rand.NewPCG(11, 12)), 5000, 1<<30)
	Sort(ctx{}, join, s, cmpKey)
	if maxDepth < 3 {
		t.Fatalf("join saw a maximum depth of %d; want nested contexts", maxDepth)
	}
}

// TestCmpPanicPropagates: a panic in the comparison reaches the caller
// once every side has stopped (goleak in TestMain checks that none is left
// running), and Sort leaves a permutation of the input.
func TestCmpPanicPropagates(t *testing.T) {
	smallCutoffs(t)
	type boom struct{}
	sorts := []struct {
		name        string
		sort        func(c ctx, j Join[ctx], s []pair, cmpFn func(a, b pair) int)
		permutation bool // s is a permutation of the input after a panic
	}{
		{"Sort", Sort[ctx, pair], true},
		{"SortStable", SortStable[ctx, pair], false},
	}
	for _, j := range testJoins {
		for _, ps := range sorts {
			for _, after := range []int64{0, 100, 3000} {
				in := randomPairs(rand.New(rand.NewPCG(13, 14)), 2000, 1<<30)
				s := slices.Clone(in)
				var calls atomicCounter
				cmpFn := func(a, b pair) int {
					if calls.add() > after {
						panic(boom{})
					}
					return cmpKey(a, b)
				}
				got := catchPanic(func() { ps.sort(ctx{}, j.join, s, cmpFn) })
				if got != (boom{}) {
					t.Fatalf("%s/%s after %d: panic %v, want boom{}", j.name, ps.name, after, got)
				}
				if ps.permutation {
					slices.SortFunc(s, cmpKeyIdx)
					slices.SortFunc(in, cmpKeyIdx)
					if !slices.Equal(s, in) {
						t.Fatalf("%s/%s: after a panic, s is not a permutation", j.name, ps.name)
					}
				}
			}
		}
	}
}

func catchPanic(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

func TestSortStableBufShortScratchPanics(t *testing.T) {
	p := catchPanic(func() { SortStableBuf(ctx{}, seqJoin, make([]pair, 3), make([]pair, 2), cmpKey) })
	if p == nil {
		t.Fatal("no panic")
	}
}

func TestReverse(t *testing.T) {
	smallCutoffs(t)
	for _, j := range testJoins {
		for n := range 200 {
			s := make([]int, n)
			for i := range s {
				s[i] = i
			}
			Reverse(ctx{}, j.join, s)
			for i := range s {
				if s[i] != n-1-i {
					t.Fatalf("%s: n=%d: s[%d] = %d", j.name, n, i, s[i])
				}
			}
		}
	}
}
