package parallel

import (
	"cmp"

	"github.com/blitz-go/blitz/parallel/internal/psort"
)

// The parallel sorts: wrappers of internal/psort that run it on a pool
// with Join. See the package doc, section "Sort".

// sortSeqMax is the longest slice sorted on the calling goroutine, without
// a pool: psort's own sequential cut-offs (16384 elements, one leaf), below
// which its parallel code would not join anyway.
const sortSeqMax = 1 << 14

// poolJoin is psort's join on a pool: Ctx.Join, whose panic rule (wait for
// both sides, then re-panic a's panic first) is the one psort.Join asks for.
func poolJoin(c *Ctx, a, b func(*Ctx)) { c.Join(a, b) }

// seqJoin runs both sides on the calling goroutine; c is nil. It is the
// join of slices of at most sortSeqMax elements.
func seqJoin(c *Ctx, a, b func(*Ctx)) {
	a(c)
	b(c)
}

// runSort runs sort on s's executor as opts say: on the calling goroutine
// with seqJoin if s is short, else in the executor with poolJoin. A panic
// in sort (from a user comparison or key) is re-raised as a *PanicError
// once no work of the sort is running. Grain is ignored: psort's cut-offs
// are tuned for it. Any goroutine may call it; a job passes On(c).
func runSort(n int, opts []Option, sort func(c *Ctx, join psort.Join[*Ctx])) {
	if n < 2 {
		return
	}
	if n <= sortSeqMax {
		runSequential(func() { sort(nil, seqJoin) })
		return
	}
	cfg := newLoopConfig(opts)
	cfg.executor().exec(func(c *Ctx) { sort(c, poolJoin) })
}

// Sort sorts s in ascending order, in parallel, like slices.Sort (NaNs
// first): a parallel pattern-defeating quicksort, not stable, allocating
// nothing. Sorted and reversed inputs take O(n) work. Slices of at most
// 16384 elements are sorted on the calling goroutine without touching a
// pool. Options: On; Grain is ignored. Any goroutine may call it; a job
// passes On(c).
func Sort[T cmp.Ordered](s []T, opts ...Option) {
	runSort(len(s), opts, func(c *Ctx, join psort.Join[*Ctx]) {
		psort.SortOrdered(c, join, s)
	})
}

// SortDesc sorts s in descending order (NaNs last), in parallel: Sort, then
// a parallel reversal. Not stable. Options as for Sort. Any goroutine may
// call it; a job passes On(c).
func SortDesc[T cmp.Ordered](s []T, opts ...Option) {
	runSort(len(s), opts, func(c *Ctx, join psort.Join[*Ctx]) {
		psort.SortOrdered(c, join, s)
		reverse(c, s)
	})
}

// reverse reverses s, in parallel on c's pool if c is not nil. Called by
// the job c was passed to, or with c nil by any goroutine.
func reverse[T any](c *Ctx, s []T) {
	h := len(s) / 2
	swap := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			j := len(s) - 1 - i
			s[i], s[j] = s[j], s[i]
		}
	}
	if c == nil {
		swap(0, h)
		return
	}
	For(h, swap, On(c), Grain(sortSeqMax))
}

// SortFunc sorts s in ascending order as determined by cmpFn, in parallel,
// like slices.SortFunc: cmpFn returns a negative number when a < b, a
// positive number when a > b and zero when they are equal, and must be a
// strict weak ordering. Not stable; allocates nothing. For a descending
// order, swap cmpFn's arguments. A panic in cmpFn is re-raised as a
// *PanicError, leaving s a permutation of its input. Options as for Sort.
// Any goroutine may call it; a job passes On(c).
func SortFunc[T any](s []T, cmpFn func(a, b T) int, opts ...Option) {
	runSort(len(s), opts, func(c *Ctx, join psort.Join[*Ctx]) {
		psort.Sort(c, join, s, cmpFn)
	})
}

// SortStableFunc is SortFunc keeping equal elements in their original
// order, like slices.SortStableFunc: a parallel merge sort, which
// allocates a scratch slice of len(s) elements. A panic in cmpFn is
// re-raised as a *PanicError and leaves s with unspecified contents
// (elements may be lost or duplicated). Options as for Sort. Any goroutine
// may call it; a job passes On(c).
func SortStableFunc[T any](s []T, cmpFn func(a, b T) int, opts ...Option) {
	runSort(len(s), opts, func(c *Ctx, join psort.Join[*Ctx]) {
		psort.SortStable(c, join, s, cmpFn)
	})
}

// SortByKey sorts s by ascending key(x), as cmp.Compare orders keys (NaN
// keys first), in parallel. It is stable: elements with equal keys keep
// their order, so sorting by a secondary key and then by a primary one
// orders by both. key is called twice per comparison, O(n log n) times in
// all, so it should be cheap (a field, not a computation). Allocation and
// panics as for SortStableFunc. Options as for Sort. Any goroutine may
// call it; a job passes On(c).
func SortByKey[T any, K cmp.Ordered](s []T, key func(T) K, opts ...Option) {
	SortStableFunc(s, func(a, b T) int { return cmp.Compare(key(a), key(b)) }, opts...)
}

// SortByKeyDesc is SortByKey in descending key order (NaN keys last).
// Stable: elements with equal keys keep their original order. Any
// goroutine may call it; a job passes On(c).
func SortByKeyDesc[T any, K cmp.Ordered](s []T, key func(T) K, opts ...Option) {
	SortStableFunc(s, func(a, b T) int { return cmp.Compare(key(b), key(a)) }, opts...)
}
