package psort

import "cmp"

//go:generate go run gen_ordered.go

// Join runs a and b, possibly in parallel, and returns when both have
// finished. Each side receives the context of the worker that runs it. If
// either side panics, Join must wait for the other side and then panic
// with that value (a panic of a preferred); the sorts rely on this to
// propagate a panicking comparison. The parallel pool's join satisfies it;
// a sequential join (a(c); b(c)) does too.
type Join[C any] func(c C, a, b func(C))

// Sequential cut-offs (see "Cut-offs" in doc.go). They are variables only so
// that tests can shrink them to drive small inputs through the parallel
// code; nothing else writes them.
var (
	// pdqSeqCutoff: parts of parallel pdqsort at most this long are
	// sorted sequentially.
	pdqSeqCutoff = 1 << 14
	// mergeSortSeqCutoff: parts of parallel merge sort at most this long
	// are sorted sequentially (the leaves).
	mergeSortSeqCutoff = 1 << 14
	// mergeSeqCutoff: merges (and copies) at most this long are not split.
	mergeSeqCutoff = 1 << 14
)

const (
	// insertionMax: pdqsort insertion-sorts parts at most this long.
	insertionMax = 12
	// stableInsertionMax: the sequential merge sort insertion-sorts runs
	// at most this long.
	stableInsertionMax = 16
)

// Sort sorts s in ascending order as determined by cmpFn, which returns a
// negative number when a < b, a positive number when a > b and zero when
// a == b; it must be a strict weak ordering, as for slices.SortFunc. The
// sort is not stable. It runs in parallel through join, starting on the
// worker whose context is c, and returns when s is sorted.
//
// If cmpFn panics, Sort panics with the same value once all work it
// started has stopped (given a Join as documented); s then holds an
// unspecified permutation of its elements. See "Panics" in doc.go.
func Sort[C any, T any](c C, join Join[C], s []T, cmpFn func(a, b T) int) {
	if settlePresortedFunc(c, join, s, cmpFn) {
		return
	}
	parPDQFunc(c, join, s, 0, len(s), newPDQState(len(s)), cmpFn)
}

// SortOrdered sorts s in ascending order like slices.Sort (NaNs first),
// in parallel through join. It is Sort without the indirect call per
// comparison. There is no stable variant: equal ordered values are
// indistinguishable, but for the sign of zero and NaN payloads.
func SortOrdered[C any, T cmp.Ordered](c C, join Join[C], s []T) {
	if settlePresortedOrdered(c, join, s) {
		return
	}
	parPDQOrdered(c, join, s, 0, len(s), newPDQState(len(s)))
}

// SortStable sorts s like Sort, but keeps equal elements in their
// original order. It allocates a scratch slice of len(s) elements; use
// SortStableBuf to supply one.
//
// If cmpFn panics, SortStable panics with the same value once all work it
// started has stopped; s then holds unspecified contents: elements may be
// duplicated or lost (they are in flight between s and the scratch slice).
func SortStable[C any, T any](c C, join Join[C], s []T, cmpFn func(a, b T) int) {
	if settlePresortedFunc(c, join, s, cmpFn) {
		return // before allocating: at 10^7 elements, make costs more than this
	}
	parMergeSortFunc(c, join, s, make([]T, len(s)), false, true, cmpFn)
}

// SortStableBuf is SortStable with a caller-provided scratch slice, at
// least as long as s and not overlapping it; its contents on return are
// unspecified. Callers that
// sort repeatedly, or that sort (key, index) pairs to cache keys, avoid an
// allocation with it.
func SortStableBuf[C any, T any](c C, join Join[C], s, buf []T, cmpFn func(a, b T) int) {
	if len(buf) < len(s) {
		panic("psort: SortStableBuf: scratch slice shorter than s")
	}
	if settlePresortedFunc(c, join, s, cmpFn) {
		return
	}
	parMergeSortFunc(c, join, s, buf[:len(s)], false, true, cmpFn)
}

// Reverse reverses s in parallel through join. With SortOrdered it makes a
// descending sort of ordered elements without an indirect comparison (NaNs
// then come last).
func Reverse[C any, T any](c C, join Join[C], s []T) {
	parReverse(c, join, s)
}
