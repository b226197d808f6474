// Package psort is the parallel sort behind the parallel package's sort
// functions: a parallel pattern-defeating quicksort (unstable) and a
// parallel merge sort (stable), parameterized by the fork-join primitive.
//
// # Contract
//
// Every sort takes a worker context c and a [Join]. The sorts call join to
// run two independent halves of their work, possibly in parallel, and hand
// each half the context join gives it; they never start goroutines of their
// own. The parallel package passes its pool's join with C = *parallel.Ctx;
// tests pass a sequential join and a goroutine join. A sort returns when s
// is sorted and no work it started is still running.
//
// Entry points: [Sort] (unstable, comparison function), [SortOrdered]
// (unstable, cmp.Ordered elements, no indirect call per comparison),
// [SortStable] and [SortStableBuf] (stable; the latter with a
// caller-provided scratch slice). Wrappers are the root package's: by key
// is Sort with cmp.Compare(key(a), key(b)); descending is Sort with the
// arguments of cmp swapped; a key-cached sort sorts (key, index) pairs,
// with SortStableBuf if it must be stable, then permutes.
//
// # pdqsort
//
// Orson Peters' pattern-defeating quicksort, written for this package
// (pdq_func.go). A part of at most insertionMax (12) elements is
// insertion-sorted. Otherwise the pivot is the median of three quartile
// elements, or for 50 elements and more Tukey's ninther (the median of the
// medians of three neighbourhoods). Pivot selection counts swaps: none
// means the samples were in order, all means strictly reversed (the part
// is then reversed). After a balanced partition that swapped nothing, an
// in-order sample triggers a partial insertion sort that gives up after 5
// misplaced elements, so sorted and nearly sorted parts cost O(n). If the
// previous pivot (the element just before the part) equals the new pivot,
// the part is partitioned into "equal" and "greater" and the equal run is
// done, so few distinct values cost O(n log k). A partition whose smaller
// side holds less than 1/8 of the part is "unbalanced": the next pivot
// selection first swaps a few pseudo-random elements (breakPatterns), and
// after log2(n) of them the part is heapsorted, which bounds the worst case
// to O(n log n).
//
// The parallel version (parPDQFunc) runs the same step (pdqStepFunc) and
// hands both sides of each partition to join while a part is longer than
// pdqSeqCutoff; below it the sequential loop recurses into the smaller side
// and loops on the larger. Partitioning itself is sequential: the top
// partition is the only sequential O(n) pass left, 1 of ~23 levels at
// n = 10^7, which caps the speed-up on 2 cores at about 1.9x; a blocked
// parallel partition is the next step if more is needed.
//
// # Merge sort
//
// merge_func.go. The slice is halved recursively through join down to
// mergeSortSeqCutoff; the leaves are sorted sequentially (stable: a
// top-down merge sort with insertion-sorted runs of stableInsertionMax (16);
// unstable: pdqsort), and the two sorted halves are merged by parMergeFunc
// into the other of (s, scratch): the recursion ping-pongs so that every
// level writes where the level above reads, and the result ends in s with
// one scratch slice of len(s). A merge longer than mergeSeqCutoff is split
// into two independent merges: the middle element of the longer run is
// binary-searched in the other run (lower bound if it comes from the left
// run, upper bound if from the right, which keeps ties in order), so each
// half gets at least a quarter of the elements. If the two halves are
// already in order (last of left <= first of right) the merge is a copy.
// The sequential merge selects with a conditional move rather than a
// branch (see mergeFunc): on random data that halves the cost of a level.
//
// # Presorted inputs
//
// All entry points first classify s (presortedFunc): a 64-element prefix
// decides most unsorted inputs at once; otherwise halves are checked in
// parallel. A sorted input is done; a strictly decreasing one is reversed in
// parallel (stable, as no two elements are equal). pdqsort alone would find
// these in one sequential O(n) scan.
//
// # Cut-offs
//
// pdqSeqCutoff, mergeSortSeqCutoff and mergeSeqCutoff are all 1<<14
// elements (128 KiB of uint64: a leaf stays in L2). A leaf of that size
// takes ~1 ms to sort, so the cost of a join (a goroutine: ~1 µs; the
// pool's: less) is far below 1%, and 10^7 elements give ~600 leaves, plenty
// to balance two to a few dozen workers. The choice is by that reasoning,
// not yet by a clean measurement: the sweep over 1<<12 .. 1<<20
// (BenchmarkAlgo, CompareInterleaved with PSORT_CUT) ran on a machine
// shared with other benchmarks and its differences were within the noise.
// insertionMax 12 is pdqsort's and the standard library's choice.
//
// # Measurements
//
// 2-core development machine (AMD EPYC), 10^7 uint64, goroutine join.
// The machine was shared with other engineers' benchmarks, so the figures
// are minima of interleaved runs (TestCompareInterleaved) taken when it was
// quiet; go test -bench medians drift by 30% or more.
//
//	random, unstable:  slices.Sort 858 ms; SortOrdered (parallel pdqsort)
//	                   448 ms = 1.92x; parallel merge sort 438 ms = 1.96x
//	                   with a preallocated scratch slice (it would have to
//	                   allocate 80 MB per call)
//	sequential leaves: own pdqsort 855 ms = slices.Sort; own merge sort
//	                   (branchless merge) 744 ms = 1.15x
//	random, stable:    slices.SortStableFunc 3.7 s; SortStable 1.3 s = 2.8x
//	sorted/equal:      slices.Sort 7.7/5.7 ms; SortOrdered 4.7/3.3 ms
//	reversed:          slices.Sort 11.1 ms; SortOrdered 9.1 ms; under load
//	                   (no free core) the parallel check + reverse loses,
//	                   ~20 ms against ~13 ms
//
// So the unstable sorts use parallel pdqsort (no O(n) scratch, O(n) on
// patterns, as fast as merge sort within noise), and the stable sorts use
// the merge sort (required). A tuned leaf (merge sort with a per-leaf
// scratch slice, or a branchless block partition) could gain another ~15%
// on random data.
//
// # Panics
//
// If the comparison panics, the panic unwinds through the sort's frames and
// through join, which must wait for the other side and re-panic (see
// [Join]); the caller of the sort sees the original value once no work the
// sort started is running. Sort leaves s a permutation of its input: the
// unstable code moves elements by swaps only. SortStable leaves s with
// unspecified contents (elements may be duplicated or lost): they are in
// flight between s and the scratch slice. SortOrdered cannot panic.
//
// # Code generation
//
// The algorithms are written once, over a comparison function, in
// pdq_func.go and merge_func.go; gen_ordered.go (go generate) rewrites them
// into zpdq_ordered.go and zmerge_ordered.go for cmp.Ordered elements, where
// each comparison is an inlined cmp.Less (which sorts NaNs first, like
// slices.Sort). Go's generics share code between element types of one
// shape and call methods of type parameters through a dictionary, so a
// single generic body cannot inline comparisons; the standard library's
// slices package generates its variants for the same reason. The rewrite is
// textual, so the *_func.go files keep three conventions: compare only with
// lessFunc(cmpFn, x, y); make cmpFn the last parameter ("cmpFn func(a, b T)
// int") and the last argument; end the names of comparing functions in
// "Func". Helpers that do not compare live in shared.go.
package psort
