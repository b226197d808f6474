package psort

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"testing"
)

// BenchmarkAlgo compares the candidate algorithms behind the entry points
// (see "Measurements" in doc.go): parallel pdqsort against parallel merge
// sort, across cut-offs, with own or slices leaves.
//
// It takes several minutes, so it runs only with PSORT_BENCH_ALGO=1.
func BenchmarkAlgo(b *testing.B) {
	if os.Getenv("PSORT_BENCH_ALGO") == "" {
		b.Skip("set PSORT_BENCH_ALGO=1 to compare the algorithms")
	}
	for _, in := range benchInputs {
		data := in.make(benchN)
		buf := make([]uint64, benchN)
		for _, cut := range []int{1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20} {
			setCutoffs(b, cut, cut, cut)
			name := fmt.Sprintf("%s/cut=%d", in.name, cut)
			b.Run("pdqOrdered/"+name, func(b *testing.B) {
				runSortBench(b, data, func(s []uint64) {
					parPDQOrdered(struct{}{}, benchJoin, s, 0, len(s), newPDQState(len(s)))
				})
			})
			b.Run("mergeOrdered/"+name, func(b *testing.B) {
				runSortBench(b, data, func(s []uint64) {
					parMergeSortOrdered(struct{}{}, benchJoin, s, buf, false, false)
				})
			})
			b.Run("pdqFunc/"+name, func(b *testing.B) {
				runSortBench(b, data, func(s []uint64) {
					parPDQFunc(struct{}{}, benchJoin, s, 0, len(s), newPDQState(len(s)), cmp.Compare[uint64])
				})
			})
			b.Run("mergeFunc/"+name, func(b *testing.B) {
				runSortBench(b, data, func(s []uint64) {
					parMergeSortFunc(struct{}{}, benchJoin, s, buf, false, false, cmp.Compare[uint64])
				})
			})
			b.Run("mergeStableFunc/"+name, func(b *testing.B) {
				runSortBench(b, data, func(s []uint64) {
					parMergeSortFunc(struct{}{}, benchJoin, s, buf, false, true, cmp.Compare[uint64])
				})
			})
		}
	}
}

// BenchmarkSeq compares the sequential leaves with the slices package on
// 10^6 random elements.
func BenchmarkSeq(b *testing.B) {
	data := benchInputs[0].make(1_000_000)
	buf := make([]uint64, len(data))
	b.Run("pdqOrdered", func(b *testing.B) { runSortBench(b, data, func(s []uint64) { seqSortOrdered(s) }) })
	b.Run("slicesSort", func(b *testing.B) { runSortBench(b, data, func(s []uint64) { slices.Sort(s) }) })
	b.Run("pdqFunc", func(b *testing.B) {
		runSortBench(b, data, func(s []uint64) { seqSortFunc(s, cmp.Compare[uint64]) })
	})
	b.Run("slicesSortFunc", func(b *testing.B) {
		runSortBench(b, data, func(s []uint64) { slices.SortFunc(s, cmp.Compare[uint64]) })
	})
	b.Run("mergeStableOrdered", func(b *testing.B) {
		runSortBench(b, data, func(s []uint64) { seqMergeSortOrdered(s, buf, false) })
	})
	b.Run("mergeStableFunc", func(b *testing.B) {
		runSortBench(b, data, func(s []uint64) { seqMergeSortFunc(s, buf, false, cmp.Compare[uint64]) })
	})
	b.Run("slicesSortStableFunc", func(b *testing.B) {
		runSortBench(b, data, func(s []uint64) { slices.SortStableFunc(s, cmp.Compare[uint64]) })
	})
}
