package parallel

// The early-exit operations: FindAny, FindFirst, Position, Any, All. Each
// shares a cutoff among its pieces (section "Iterators" of the package doc):
// a match stops the batches it makes irrelevant, in every piece, before
// they start.

// FindAny returns some item of it for which pred returns true, and true;
// or the zero T and false if there is none. The first match found, on any
// worker, stops every piece at its next batch, so FindAny may call pred on
// far fewer items than it holds; which match it returns depends on timing.
// Any goroutine may call it; a job passes On(c).
func (it Iter[T]) FindAny(pred func(T) bool, opts ...Option) (T, bool) {
	cut := newCutoff()
	r := driveReduce(it, cut, opts, func(acc *maybe[T], _ int, xs []T) bool {
		for _, x := range xs {
			if pred(x) {
				*acc = maybe[T]{x, true}
				cut.stopAll()
				return false
			}
		}
		return true
	}, firstPresent[T])
	return r.v, r.ok
}

// FindFirst returns the first item of it, in order, for which pred returns
// true, and true; or the zero T and false if there is none. A match stops
// the batches after it, in every piece, while the batches before it go on,
// since they may hold an earlier match. Any goroutine may call it; a job
// passes On(c).
func (it Iter[T]) FindFirst(pred func(T) bool, opts ...Option) (T, bool) {
	cut := newCutoff()
	r := driveReduce(it, cut, opts, func(acc *maybe[T], base int, xs []T) bool {
		for _, x := range xs {
			if pred(x) {
				*acc = maybe[T]{x, true}
				cut.lower(base)
				return false
			}
		}
		return true
	}, firstPresent[T])
	return r.v, r.ok
}

// position is the result of Position for one piece: the number of items
// the piece saw (before its match, if any) and the offset of its match in
// the piece's items.
type position struct {
	count int
	pos   int
	found bool
}

// combinePositions merges adjacent pieces' positions: the left match wins;
// a right match is offset by the left piece's count. Every piece left of
// the first match runs to its end (the cutoff stops only batches after a
// match), so the counts it adds are complete.
func combinePositions(x, y position) position {
	switch {
	case x.found:
		return x
	case y.found:
		return position{pos: x.count + y.pos, found: true}
	}
	return position{count: x.count + y.count}
}

// Position returns the index, in the items of it, of the first item for
// which pred returns true, or -1 if there is none; like slices.IndexFunc.
// It stops early as FindFirst does. After Filter the index counts the
// items that passed the filter. Any goroutine may call it; a job passes
// On(c).
func (it Iter[T]) Position(pred func(T) bool, opts ...Option) int {
	cut := newCutoff()
	r := driveReduce(it, cut, opts, func(acc *position, base int, xs []T) bool {
		for i, x := range xs {
			if pred(x) {
				acc.pos, acc.found = acc.count+i, true
				cut.lower(base)
				return false
			}
		}
		acc.count += len(xs)
		return true
	}, combinePositions)
	if !r.found {
		return -1
	}
	return r.pos
}

// Any reports whether pred returns true for some item of it, stopping
// early as FindAny does; false if it has no items. Any goroutine may call
// it; a job passes On(c).
func (it Iter[T]) Any(pred func(T) bool, opts ...Option) bool {
	_, ok := it.FindAny(pred, opts...)
	return ok
}

// All reports whether pred returns true for every item of it, stopping at
// the first item found for which it returns false; true if it has no
// items. Any goroutine may call it; a job passes On(c).
func (it Iter[T]) All(pred func(T) bool, opts ...Option) bool {
	return !it.Any(func(x T) bool { return !pred(x) }, opts...)
}
