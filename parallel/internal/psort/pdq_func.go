package psort

// Pattern-defeating quicksort over a comparison function; see "pdqsort" in
// doc.go. zpdq_ordered.go is generated from this file by gen_ordered.go;
// follow its conventions (see "Code generation" in doc.go).

// insertionSortToFunc insertion-sorts src into dst (len(dst) == len(src)),
// stably: the leaves of the sequential merge sort. src and dst may be the
// same slice: element i of src is read before any write to dst[i:]. It
// shifts rather than swaps, so a panicking comparison may lose an element.
func insertionSortToFunc[T any](src, dst []T, cmpFn func(a, b T) int) {
	for i := range src {
		x := src[i]
		j := i
		for j > 0 && lessFunc(cmpFn, x, dst[j-1]) {
			dst[j] = dst[j-1]
			j--
		}
		dst[j] = x
	}
}

// insertionSortFunc sorts s by insertion, with swaps only, so that s stays
// a permutation of its input even if the comparison panics (see "Panics" in doc.go).
func insertionSortFunc[T any](s []T, cmpFn func(a, b T) int) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && lessFunc(cmpFn, s[j], s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// heapSortFunc sorts s with heapsort: pdqsort's O(n log n) guarantee once a
// part has had too many bad pivots.
func heapSortFunc[T any](s []T, cmpFn func(a, b T) int) {
	n := len(s)
	for i := n/2 - 1; i >= 0; i-- {
		siftDownFunc(s, i, n, cmpFn)
	}
	for i := n - 1; i > 0; i-- {
		s[0], s[i] = s[i], s[0]
		siftDownFunc(s, 0, i, cmpFn)
	}
}

// siftDownFunc restores the max-heap property of s[:n] below root.
func siftDownFunc[T any](s []T, root, n int, cmpFn func(a, b T) int) {
	for {
		child := 2*root + 1
		if child >= n {
			return
		}
		if child+1 < n && lessFunc(cmpFn, s[child], s[child+1]) {
			child++
		}
		if !lessFunc(cmpFn, s[root], s[child]) {
			return
		}
		s[root], s[child] = s[child], s[root]
		root = child
	}
}

// sort2Func returns i, j ordered by the elements they index, counting a swap.
func sort2Func[T any](s []T, i, j int, swaps *int, cmpFn func(a, b T) int) (int, int) {
	if lessFunc(cmpFn, s[j], s[i]) {
		*swaps++
		return j, i
	}
	return i, j
}

// median3Func returns whichever of i, j, k indexes the median element.
func median3Func[T any](s []T, i, j, k int, swaps *int, cmpFn func(a, b T) int) int {
	i, j = sort2Func(s, i, j, swaps, cmpFn)
	j, _ = sort2Func(s, j, k, swaps, cmpFn)
	_, j = sort2Func(s, i, j, swaps, cmpFn)
	return j
}

// choosePivotFunc picks a pivot index for s (len(s) > insertionMax): the
// median of three quartiles, or for len(s) >= nintherMin Tukey's ninther
// (median of the medians of the quartiles' neighbourhoods). If the sampled
// elements were all in order, or all in reverse order, it says so.
func choosePivotFunc[T any](s []T, cmpFn func(a, b T) int) (int, sortedHint) {
	const nintherMin = 50
	const maxSwaps = 4 * 3 // 3 per median3, 4 median3 calls in a ninther
	n := len(s)
	i, j, k := n/4, n/2, n/4*3
	swaps := 0
	if n >= nintherMin {
		i = median3Func(s, i-1, i, i+1, &swaps, cmpFn)
		j = median3Func(s, j-1, j, j+1, &swaps, cmpFn)
		k = median3Func(s, k-1, k, k+1, &swaps, cmpFn)
	}
	j = median3Func(s, i, j, k, &swaps, cmpFn)
	switch {
	case swaps == 0:
		return j, hintIncreasing
	case swaps == maxSwaps || (n < nintherMin && swaps == 3):
		return j, hintDecreasing
	}
	return j, hintUnknown
}

// partialInsertionSortFunc tries to finish sorting a nearly sorted s with a
// few insertion steps. It reports whether s is now sorted; if not, s is a
// permutation of its input and the caller partitions as usual.
func partialInsertionSortFunc[T any](s []T, cmpFn func(a, b T) int) bool {
	const maxSteps = 5          // out-of-order places fixed before giving up
	const shortestShifting = 50 // below this, quicksorting is as cheap
	n := len(s)
	i := 1
	for step := 0; step < maxSteps; step++ {
		for i < n && !lessFunc(cmpFn, s[i], s[i-1]) {
			i++
		}
		if i == n {
			return true
		}
		if n < shortestShifting {
			return false
		}
		s[i], s[i-1] = s[i-1], s[i]
		for j := i - 1; j > 0 && lessFunc(cmpFn, s[j], s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
		for j := i + 1; j < n && lessFunc(cmpFn, s[j], s[j-1]); j++ {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return false
}

// partitionFunc moves s[p] to its final place m and partitions the rest:
// s[:m] < s[m] <= s[m+1:]. It reports whether s was already partitioned
// (nothing had to be swapped).
func partitionFunc[T any](s []T, p int, cmpFn func(a, b T) int) (m int, already bool) {
	s[0], s[p] = s[p], s[0]
	pivot := s[0]
	i, j := 1, len(s)-1
	for i <= j && lessFunc(cmpFn, s[i], pivot) {
		i++
	}
	for i <= j && !lessFunc(cmpFn, s[j], pivot) {
		j--
	}
	if i > j {
		s[0], s[j] = s[j], s[0]
		return j, true
	}
	s[i], s[j] = s[j], s[i]
	i++
	j--
	for {
		for i <= j && lessFunc(cmpFn, s[i], pivot) {
			i++
		}
		for i <= j && !lessFunc(cmpFn, s[j], pivot) {
			j--
		}
		if i > j {
			break
		}
		s[i], s[j] = s[j], s[i]
		i++
		j--
	}
	s[0], s[j] = s[j], s[0]
	return j, false
}

// partitionEqualFunc moves the elements equal to s[p] to the front of s
// and returns their count m: s[:m] == s[p] < s[m:]. Precondition: no
// element of s is less than s[p].
func partitionEqualFunc[T any](s []T, p int, cmpFn func(a, b T) int) int {
	s[0], s[p] = s[p], s[0]
	pivot := s[0]
	i, j := 1, len(s)-1
	for {
		for i <= j && !lessFunc(cmpFn, pivot, s[i]) {
			i++
		}
		for i <= j && lessFunc(cmpFn, pivot, s[j]) {
			j--
		}
		if i > j {
			return i
		}
		s[i], s[j] = s[j], s[i]
		i++
		j--
	}
}

// pdqStepFunc runs one round of pdqsort on s[a:b], b-a > insertionMax, and
// says how the caller's loop goes on (see stepResult). If a > 0, s[a-1] is
// a previous pivot, no greater than any element of s[a:b]. Shared by the
// sequential loop (pdqFunc) and the parallel one (parPDQFunc).
func pdqStepFunc[T any](s []T, a, b int, st *pdqState, cmpFn func(a, b T) int) (int, stepResult) {
	part := s[a:b]
	if st.limit == 0 {
		heapSortFunc(part, cmpFn)
		return b, stepDone
	}
	if !st.wasBalanced {
		breakPatterns(part)
		st.limit--
	}
	p, hint := choosePivotFunc(part, cmpFn)
	if hint == hintDecreasing {
		reverse(part)
		p = len(part) - 1 - p
		hint = hintIncreasing
	}
	if st.wasBalanced && st.wasPartitioned && hint == hintIncreasing &&
		partialInsertionSortFunc(part, cmpFn) {
		return b, stepDone
	}
	if a > 0 && !lessFunc(cmpFn, s[a-1], part[p]) {
		return a + partitionEqualFunc(part, p, cmpFn), stepSkipEqual
	}
	m, already := partitionFunc(part, p, cmpFn)
	st.wasPartitioned = already
	st.wasBalanced = min(m, len(part)-1-m) >= len(part)/balanceDivisor
	return a + m, stepSplit
}

// pdqFunc sorts s[a:b] sequentially with pdqsort. If a > 0, s[a-1] must be
// no greater than any element of s[a:b] (it is the previous pivot).
func pdqFunc[T any](s []T, a, b int, st pdqState, cmpFn func(a, b T) int) {
	for b-a > insertionMax {
		m, res := pdqStepFunc(s, a, b, &st, cmpFn)
		switch res {
		case stepDone:
			return
		case stepSkipEqual:
			a = m
			continue
		}
		// Recurse into the smaller side, loop on the larger: O(log n) stack.
		if m-a < b-m {
			pdqFunc(s, a, m, st, cmpFn)
			a = m + 1
		} else {
			pdqFunc(s, m+1, b, st, cmpFn)
			b = m
		}
	}
	insertionSortFunc(s[a:b], cmpFn)
}

// seqSortFunc sorts s sequentially and unstably: the leaves of both
// parallel sorts.
func seqSortFunc[T any](s []T, cmpFn func(a, b T) int) {
	pdqFunc(s, 0, len(s), newPDQState(len(s)), cmpFn)
}

// parPDQFunc sorts s[a:b] like pdqFunc, but hands the two sides of each
// partition to join while the part is longer than pdqSeqCutoff.
func parPDQFunc[C any, T any](c C, join Join[C], s []T, a, b int, st pdqState, cmpFn func(a, b T) int) {
	for b-a > pdqSeqCutoff {
		m, res := pdqStepFunc(s, a, b, &st, cmpFn)
		switch res {
		case stepDone:
			return
		case stepSkipEqual:
			a = m
			continue
		}
		join(c,
			func(c C) { parPDQFunc(c, join, s, a, m, st, cmpFn) },
			func(c C) { parPDQFunc(c, join, s, m+1, b, st, cmpFn) })
		return
	}
	pdqFunc(s, a, b, st, cmpFn)
}

// presortedFunc classifies s: sorted, strictly decreasing, or neither. A
// prefix decides most unsorted inputs at once; then halves are checked in
// parallel through join above mergeSeqCutoff, each stopping at its first
// element out of order. The entry points call it first so that sorted and
// reversed inputs cost O(n/P) instead of pdqsort's sequential O(n) scan.
func presortedFunc[C any, T any](c C, join Join[C], s []T, cmpFn func(a, b T) int) sortedHint {
	const prefix = 64
	if presortedSeqFunc(s[:min(len(s), prefix)], cmpFn) == hintUnknown {
		return hintUnknown
	}
	return parPresortedFunc(c, join, s, cmpFn)
}

// parPresortedFunc is presortedFunc without the prefix test.
func parPresortedFunc[C any, T any](c C, join Join[C], s []T, cmpFn func(a, b T) int) sortedHint {
	if len(s) <= mergeSeqCutoff {
		return presortedSeqFunc(s, cmpFn)
	}
	h := len(s) / 2
	want := hintIncreasing // the order the seam allows (equal: sorted only)
	if lessFunc(cmpFn, s[h], s[h-1]) {
		want = hintDecreasing
	}
	var l, r sortedHint
	join(c,
		func(c C) { l = parPresortedFunc(c, join, s[:h], cmpFn) },
		func(c C) { r = parPresortedFunc(c, join, s[h:], cmpFn) })
	if l == want && r == want {
		return want
	}
	return hintUnknown
}

// presortedSeqFunc is presortedFunc for one goroutine.
// A part shorter than 2 counts as sorted (parPresortedFunc never splits
// off such a part: mergeSeqCutoff is at least 4).
func presortedSeqFunc[T any](s []T, cmpFn func(a, b T) int) sortedHint {
	if len(s) < 2 {
		return hintIncreasing
	}
	if lessFunc(cmpFn, s[1], s[0]) {
		for i := 2; i < len(s); i++ {
			if !lessFunc(cmpFn, s[i], s[i-1]) {
				return hintUnknown
			}
		}
		return hintDecreasing
	}
	for i := 2; i < len(s); i++ {
		if lessFunc(cmpFn, s[i], s[i-1]) {
			return hintUnknown
		}
	}
	return hintIncreasing
}

// settlePresortedFunc sorts s if it is already sorted or strictly
// decreasing (reversing it; stable, as no two elements are equal) and
// reports whether it did.
func settlePresortedFunc[C any, T any](c C, join Join[C], s []T, cmpFn func(a, b T) int) bool {
	switch presortedFunc(c, join, s, cmpFn) {
	case hintIncreasing:
		return true
	case hintDecreasing:
		parReverse(c, join, s)
		return true
	}
	return false
}
