package psort

import "math/bits"

// This file holds the helpers that do not compare elements, shared by the
// comparator variant (*_func.go) and the generated ordered variant
// (z*_ordered.go), plus lessFunc, the one comparison the generator rewrites.

// lessFunc reports whether a sorts strictly before b under cmpFn. It is the
// only way the *_func.go files compare elements, so that gen_ordered.go can
// turn every comparison into cmp.Less by plain text substitution (see
// "Code generation" in doc.go). It inlines to a call of cmpFn.
func lessFunc[T any](cmpFn func(a, b T) int, a, b T) bool { return cmpFn(a, b) < 0 }

// b2i is 1 for true and 0 for false; the compiler emits SETcc, no branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// depthLimit is pdqsort's budget of unbalanced partitions for n elements
// before a part falls back to heapsort (see "pdqsort" in doc.go).
func depthLimit(n int) int { return bits.Len(uint(n)) }

// sortedHint is what pivot selection learned about the order of a part.
type sortedHint uint8

const (
	hintUnknown    sortedHint = iota
	hintIncreasing            // the sampled elements were already in order
	hintDecreasing            // the sampled elements were in strictly reverse order
)

// pdqState is the history pdqsort carries from a part to its sub-parts.
type pdqState struct {
	limit          int  // bad partitions left before heapsort
	wasBalanced    bool // the partition that produced this part was balanced
	wasPartitioned bool // that partition swapped nothing
}

func newPDQState(n int) pdqState {
	return pdqState{limit: depthLimit(n), wasBalanced: true, wasPartitioned: true}
}

// stepResult tells the pdqsort loop how to go on after pdqStep*.
type stepResult uint8

const (
	stepDone      stepResult = iota // the part is sorted
	stepSkipEqual                   // s[a:mid] all equal the predecessor; go on with s[mid:b]
	stepSplit                       // s[mid] is in place; sort s[a:mid] and s[mid+1:b]
)

// balanceDivisor: a partition is unbalanced when its smaller side holds less
// than 1/balanceDivisor of the part.
const balanceDivisor = 8

// breakPatterns swaps three elements near the middle of s with pseudo-random
// ones, so that an adversarial or patterned input that produced an
// unbalanced partition does not do so again. Deterministic (seeded by len).
func breakPatterns[T any](s []T) {
	n := len(s)
	if n < 8 {
		return
	}
	r := uint64(n)
	mask := uint64(1)<<bits.Len(uint(n)) - 1
	mid := n / 2
	for i := -1; i <= 1; i++ {
		r ^= r << 13 // xorshift64
		r ^= r >> 7
		r ^= r << 17
		other := int(r & mask)
		if other >= n {
			other -= n
		}
		s[mid+i], s[other] = s[other], s[mid+i]
	}
}

// reverse reverses s in place.
func reverse[T any](s []T) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// parCopy copies src to dst (equal lengths) in chunks of up to
// mergeSeqCutoff elements, in parallel through join.
func parCopy[C any, T any](c C, join Join[C], dst, src []T) {
	if len(src) <= mergeSeqCutoff {
		copy(dst, src)
		return
	}
	h := len(src) / 2
	join(c,
		func(c C) { parCopy(c, join, dst[:h], src[:h]) },
		func(c C) { parCopy(c, join, dst[h:], src[h:]) })
}

// parReverse reverses s, swapping pairs in parallel through join.
func parReverse[C any, T any](c C, join Join[C], s []T) {
	h := len(s) / 2
	parSwapMirrored(c, join, s[:h], s[len(s)-h:])
}

// parSwapMirrored swaps a[i] with b[len(b)-1-i] for every i (len(a) ==
// len(b)), in chunks of up to mergeSeqCutoff pairs.
func parSwapMirrored[C any, T any](c C, join Join[C], a, b []T) {
	n := len(a)
	if n <= mergeSeqCutoff {
		for i := range a {
			a[i], b[n-1-i] = b[n-1-i], a[i]
		}
		return
	}
	h := n / 2
	join(c,
		func(c C) { parSwapMirrored(c, join, a[:h], b[n-h:]) },
		func(c C) { parSwapMirrored(c, join, a[h:], b[:n-h]) })
}
