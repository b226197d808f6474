package psort

// Parallel merge sort over a comparison function; see "Merge sort" in
// doc.go. zmerge_ordered.go is generated from this file by gen_ordered.go
// (same conventions as pdq_func.go).

// mergeFunc merges the sorted runs a and b into dst (len(dst) ==
// len(a)+len(b)), stably: of equal elements, a's come first. dst must not
// overlap a or b. The loop body is written so that, for ordered element
// types, the compiler selects with CMOV instead of a branch that random
// data would mispredict half of the time.
func mergeFunc[T any](a, b, dst []T, cmpFn func(a, b T) int) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		x, y := a[i], b[j]
		takeB := lessFunc(cmpFn, y, x)
		v := x
		if takeB {
			v = y
		}
		dst[k] = v
		t := b2i(takeB)
		j += t
		i += 1 - t
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
}

// splitMergeFunc cuts the merge of a and b into two independent merges:
// the output's first i+j elements are the merge of a[:i] and b[:j]. It
// splits the longer run at its middle and binary-searches the other, so
// each side gets at least a quarter of the elements. Ties go left for a
// and right for b, which keeps the split stable.
func splitMergeFunc[T any](a, b []T, cmpFn func(a, b T) int) (i, j int) {
	if len(a) >= len(b) {
		i = len(a) / 2
		// j = number of elements of b less than a[i].
		lo, hi := 0, len(b)
		for lo < hi {
			h := int(uint(lo+hi) >> 1)
			if lessFunc(cmpFn, b[h], a[i]) {
				lo = h + 1
			} else {
				hi = h
			}
		}
		return i, lo
	}
	j = len(b) / 2
	// i = number of elements of a not greater than b[j].
	lo, hi := 0, len(a)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if !lessFunc(cmpFn, b[j], a[h]) {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo, j
}

// parMergeFunc merges the sorted runs a and b into dst like mergeFunc,
// splitting the merge with splitMergeFunc and join while it is longer
// than mergeSeqCutoff.
func parMergeFunc[C any, T any](c C, join Join[C], a, b, dst []T, cmpFn func(a, b T) int) {
	// A long one-sided "merge" (a copy) splits too: splitMergeFunc then
	// cuts the non-empty run in half.
	if len(dst) <= mergeSeqCutoff {
		mergeFunc(a, b, dst, cmpFn)
		return
	}
	i, j := splitMergeFunc(a, b, cmpFn)
	join(c,
		func(c C) { parMergeFunc(c, join, a[:i], b[:j], dst[:i+j], cmpFn) },
		func(c C) { parMergeFunc(c, join, a[i:], b[j:], dst[i+j:], cmpFn) })
}

// seqMergeSortFunc sorts src stably, sequentially, top-down, ping-ponging
// between src and buf (len(buf) == len(src)). The result is in buf if toBuf,
// else in src; the other slice is left as scratch.
func seqMergeSortFunc[T any](src, buf []T, toBuf bool, cmpFn func(a, b T) int) {
	n := len(src)
	if n <= stableInsertionMax {
		dst := src
		if toBuf {
			dst = buf
		}
		insertionSortToFunc(src, dst, cmpFn)
		return
	}
	h := n / 2
	// The halves land in the slice we are not merging into.
	seqMergeSortFunc(src[:h], buf[:h], !toBuf, cmpFn)
	seqMergeSortFunc(src[h:], buf[h:], !toBuf, cmpFn)
	from, to := buf, src
	if toBuf {
		from, to = src, buf
	}
	if !lessFunc(cmpFn, from[h], from[h-1]) {
		copy(to, from) // already in order: a common case for nearly sorted input
		return
	}
	mergeFunc(from[:h], from[h:], to, cmpFn)
}

// parMergeSortFunc sorts src with a parallel merge sort: stably if stable,
// else with unstable (pdqsort) leaves. The result is in buf if toBuf, else
// in src. The halves are sorted with join into the other slice, then merged
// back with parMergeFunc; parts up to mergeSortSeqCutoff are sorted
// sequentially.
func parMergeSortFunc[C any, T any](c C, join Join[C], src, buf []T, toBuf, stable bool, cmpFn func(a, b T) int) {
	n := len(src)
	if n <= mergeSortSeqCutoff {
		if stable {
			seqMergeSortFunc(src, buf, toBuf, cmpFn)
			return
		}
		seqSortFunc(src, cmpFn)
		if toBuf {
			copy(buf, src)
		}
		return
	}
	h := n / 2
	join(c,
		func(c C) { parMergeSortFunc(c, join, src[:h], buf[:h], !toBuf, stable, cmpFn) },
		func(c C) { parMergeSortFunc(c, join, src[h:], buf[h:], !toBuf, stable, cmpFn) })
	from, to := buf, src
	if toBuf {
		from, to = src, buf
	}
	if !lessFunc(cmpFn, from[h], from[h-1]) {
		parCopy(c, join, to, from)
		return
	}
	parMergeFunc(c, join, from[:h], from[h:], to, cmpFn)
}
