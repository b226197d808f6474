package psort

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCompareInterleaved is a measuring tool, skipped unless PSORT_CMP is
// set: it runs the named implementations (see impls) round-robin on the
// same 10^7-element input and prints the minimum and median time of each,
// with the ratio of minima against the first. Interleaving and minima make
// it usable on a shared, noisy machine where -count medians drift. E.g.
//
//	PSORT_CMP=slices,SortO,mergeO PSORT_ROUNDS=5 PSORT_INPUT=random \
//	    go test -run CompareInterleaved -v ./internal/psort/
//
// PSORT_N sets the length, PSORT_CUT all three cut-offs.
func TestCompareInterleaved(t *testing.T) {
	spec := os.Getenv("PSORT_CMP")
	if spec == "" {
		t.Skip()
	}
	rounds, _ := strconv.Atoi(os.Getenv("PSORT_ROUNDS"))
	if rounds == 0 {
		rounds = 5
	}
	n := benchN
	if v, _ := strconv.Atoi(os.Getenv("PSORT_N")); v > 0 {
		n = v
	}
	cut, _ := strconv.Atoi(os.Getenv("PSORT_CUT"))
	if cut > 0 {
		setCutoffs(t, cut, cut, cut)
	}
	buf := make([]uint64, n)
	impls := map[string]func(s []uint64){
		"slices":       func(s []uint64) { slices.Sort(s) },
		"slicesFunc":   func(s []uint64) { slices.SortFunc(s, cmp.Compare[uint64]) },
		"slicesStable": func(s []uint64) { slices.SortStableFunc(s, cmp.Compare[uint64]) },
		"pdqO":         func(s []uint64) { parPDQOrdered(struct{}{}, benchJoin, s, 0, len(s), newPDQState(len(s))) },
		"mergeO":       func(s []uint64) { parMergeSortOrdered(struct{}{}, benchJoin, s, buf, false, false) },
		"mergeStableO": func(s []uint64) { parMergeSortOrdered(struct{}{}, benchJoin, s, buf, false, true) },
		"pdqF": func(s []uint64) {
			parPDQFunc(struct{}{}, benchJoin, s, 0, len(s), newPDQState(len(s)), cmp.Compare[uint64])
		},
		"mergeF":       func(s []uint64) { parMergeSortFunc(struct{}{}, benchJoin, s, buf, false, false, cmp.Compare[uint64]) },
		"mergeStableF": func(s []uint64) { parMergeSortFunc(struct{}{}, benchJoin, s, buf, false, true, cmp.Compare[uint64]) },
		"SortO":        func(s []uint64) { SortOrdered(struct{}{}, benchJoin, s) },
		"SortF":        func(s []uint64) { Sort(struct{}{}, benchJoin, s, cmp.Compare[uint64]) },
		"Stable":       func(s []uint64) { SortStableBuf(struct{}{}, benchJoin, s, buf, cmp.Compare[uint64]) },
		"StableAlloc":  func(s []uint64) { SortStable(struct{}{}, benchJoin, s, cmp.Compare[uint64]) },
		"seqPdqO":      func(s []uint64) { seqSortOrdered(s) },
		"seqMergeO":    func(s []uint64) { seqMergeSortOrdered(s, buf, false) },
	}
	names := strings.Split(spec, ",")
	input := os.Getenv("PSORT_INPUT")
	if input == "" {
		input = "random"
	}
	var in []uint64
	for _, bi := range benchInputs {
		if bi.name == input {
			in = bi.make(n)
		}
	}
	s := make([]uint64, n)
	res := map[string][]time.Duration{}
	for r := 0; r < rounds; r++ {
		for _, name := range names {
			copy(s, in)
			st := time.Now()
			impls[name](s)
			res[name] = append(res[name], time.Since(st))
			if !slices.IsSorted(s) {
				t.Fatal(name, "not sorted")
			}
		}
	}
	base := slices.Min(res[names[0]])
	for _, name := range names {
		d := res[name]
		slices.Sort(d)
		fmt.Printf("%-14s min %8.1fms med %8.1fms  min-ratio vs %s: %.2fx\n", name, float64(d[0])/1e6, float64(d[len(d)/2])/1e6, names[0], float64(base)/float64(d[0]))
	}
}
