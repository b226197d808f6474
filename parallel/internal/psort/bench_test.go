package psort

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// benchJoin is the goroutine join of the benchmarks: the parallel pool is
// not used here, and the sorts only join above their cut-offs, so the cost
// of a goroutine per join is small.
func benchJoin(c struct{}, a, b func(struct{})) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); b(c) }()
	a(c)
	wg.Wait()
}

const benchN = 10_000_000

// benchInputs are the 10^7-element uint64 inputs of the benchmarks.
var benchInputs = []struct {
	name string
	make func(n int) []uint64
}{
	{"random", func(n int) []uint64 {
		r := rand.New(rand.NewPCG(1, 1))
		s := make([]uint64, n)
		for i := range s {
			s[i] = r.Uint64()
		}
		return s
	}},
	{"sorted", func(n int) []uint64 {
		s := make([]uint64, n)
		for i := range s {
			s[i] = uint64(i)
		}
		return s
	}},
	{"reversed", func(n int) []uint64 {
		s := make([]uint64, n)
		for i := range s {
			s[i] = uint64(n - i)
		}
		return s
	}},
	{"equal", func(n int) []uint64 { return make([]uint64, n) }},
}

// runSortBench times sortFn on a fresh copy of in per iteration.
func runSortBench(b *testing.B, in []uint64, sortFn func(s []uint64)) {
	s := make([]uint64, len(in))
	b.SetBytes(int64(len(in)) * 8)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		copy(s, in)
		b.StartTimer()
		sortFn(s)
	}
}

type benchImpl struct {
	name string
	sort func(s []uint64)
}

func benchImpls(b *testing.B, impls []benchImpl) {
	for _, impl := range impls {
		b.Run(impl.name, func(b *testing.B) {
			for _, in := range benchInputs {
				data := in.make(benchN)
				b.Run(in.name, func(b *testing.B) { runSortBench(b, data, impl.sort) })
			}
		})
	}
}

// BenchmarkSortOrdered: the unstable sort of ordered elements against
// slices.Sort (not BenchmarkSort: that is the parallel package's, through
// the pool).
func BenchmarkSortOrdered(b *testing.B) {
	benchImpls(b, []benchImpl{
		{"psort", func(s []uint64) { SortOrdered(struct{}{}, benchJoin, s) }},
		{"slicesSort", func(s []uint64) { slices.Sort(s) }},
	})
}

// BenchmarkSortFunc: the unstable sort with a comparison function against
// slices.SortFunc.
func BenchmarkSortFunc(b *testing.B) {
	benchImpls(b, []benchImpl{
		{"psort", func(s []uint64) { Sort(struct{}{}, benchJoin, s, cmp.Compare[uint64]) }},
		{"slicesSortFunc", func(s []uint64) { slices.SortFunc(s, cmp.Compare[uint64]) }},
	})
}

// BenchmarkSortStable: the stable sort against slices.SortStableFunc.
func BenchmarkSortStable(b *testing.B) {
	benchImpls(b, []benchImpl{
		{"psort", func(s []uint64) { SortStable(struct{}{}, benchJoin, s, cmp.Compare[uint64]) }},
		{"slicesSortStableFunc", func(s []uint64) { slices.SortStableFunc(s, cmp.Compare[uint64]) }},
	})
}
