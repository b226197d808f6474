package psort

import "testing"

// setCutoffs shrinks the sequential cut-offs for the duration of t, so that
// small inputs run through the parallel code paths.
func setCutoffs(t testing.TB, pdq, mergeSort, merge int) {
	t.Helper()
	oldPDQ, oldMergeSort, oldMerge := pdqSeqCutoff, mergeSortSeqCutoff, mergeSeqCutoff
	pdqSeqCutoff, mergeSortSeqCutoff, mergeSeqCutoff = pdq, mergeSort, merge
	t.Cleanup(func() {
		pdqSeqCutoff, mergeSortSeqCutoff, mergeSeqCutoff = oldPDQ, oldMergeSort, oldMerge
	})
}
