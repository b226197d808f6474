package parallel

// The terminal operations that visit every item: Collect, Count, ForEach,
// Reduce, Fold. The early-exit ones are in iter_find.go, the numeric ones
// in iter_num.go. Each is one call of driveReduce: one pass over the
// pipeline, split as Reduce splits a loop.

// collectParallelMin is the fewest items a Collect of an inexact iterator
// copies into its result in parallel rather than on the calling goroutine.
const collectParallelMin = 1 << 16

// driveReduce runs it over its index range as Reduce runs a loop, with the
// options opts: each piece [lo, hi) starts from the zero A and hands step
// every batch of its items, in order, until step returns false or the
// cutoff cut (nil: none) stops the piece; combine merges the results of
// adjacent pieces, left first. It returns the zero A if it.n == 0. Small
// iterators run on the calling goroutine, and a panic is re-raised as a
// *PanicError after every piece finished, as in Reduce. Any goroutine may
// call it; a job passes On(c).
func driveReduce[T, A any](it Iter[T], cut *cutoff, opts []Option, step func(acc *A, base int, xs []T) bool, combine func(x, y A) A) A {
	leaf := func(lo, hi int) A {
		var acc A
		it.drive(stopCheck{c: cut}, lo, hi, func(base int, xs []T) bool {
			return step(&acc, base, xs)
		})
		return acc
	}
	var zero A
	return Reduce(it.n, zero, leaf, combine, opts...)
}

// maybe is a value that may be absent: the result of a piece that saw no
// items, for the reductions that have no identity.
type maybe[T any] struct {
	v  T
	ok bool
}

// combinePresent lifts op to partial results: op of both when both pieces
// had items, else whichever had some. The combine of Reduce, Fold, Min
// and Max (called once per pair of pieces, not per item).
func combinePresent[T any](op func(x, y T) T) func(x, y maybe[T]) maybe[T] {
	return func(x, y maybe[T]) maybe[T] {
		if x.ok && y.ok {
			return maybe[T]{op(x.v, y.v), true}
		}
		return firstPresent(x, y)
	}
}

// firstPresent returns x if present, else y: combine for "leftmost wins".
func firstPresent[T any](x, y maybe[T]) maybe[T] {
	if x.ok {
		return x
	}
	return y
}

// Collect returns the items of it in order, in a new slice; nil if there
// are none. An iterator with one item per index is written in place into
// the result; otherwise each piece collects into its own slice, and the
// slices are concatenated in order. Any goroutine may call it; a job
// passes On(c).
func (it Iter[T]) Collect(opts ...Option) []T {
	if it.n == 0 {
		return nil
	}
	if it.exact() {
		out := make([]T, it.n)
		driveReduce(it, nil, opts, func(_ *struct{}, base int, xs []T) bool {
			copy(out[base:], xs)
			return true
		}, func(x, _ struct{}) struct{} { return x })
		return out
	}
	parts := driveReduce(it, nil, opts, func(acc *[][]T, _ int, xs []T) bool {
		if len(*acc) == 0 {
			*acc = [][]T{nil}
		}
		(*acc)[0] = append((*acc)[0], xs...)
		return true
	}, func(x, y [][]T) [][]T { return append(x, y...) })
	return concat(parts, opts)
}

// concat returns the concatenation of parts, nil if it is empty, copying
// in parallel with the options opts if it is long. Any goroutine may call
// it; a job passes On(c).
func concat[T any](parts [][]T, opts []Option) []T {
	total := 0
	offsets := make([]int, len(parts))
	for k, p := range parts {
		offsets[k] = total
		total += len(p)
	}
	switch {
	case total == 0:
		return nil
	case len(parts) == 1:
		return parts[0]
	}
	out := make([]T, total)
	body := func(lo, hi int) {
		for k := lo; k < hi; k++ {
			copy(out[offsets[k]:], parts[k])
		}
	}
	if total < collectParallelMin {
		body(0, len(parts))
		return out
	}
	For(len(parts), body, append(opts[:len(opts):len(opts)], Grain(1))...)
	return out
}

// Count returns the number of items of it. It drives the whole pipeline, so
// the functions of Map and Filter run as for any terminal operation. Any
// goroutine may call it; a job passes On(c).
func (it Iter[T]) Count(opts ...Option) int {
	return driveReduce(it, nil, opts, func(acc *int, _ int, xs []T) bool {
		*acc += len(xs)
		return true
	}, func(x, y int) int { return x + y })
}

// ForEach calls f on every item of it, concurrently on several workers and
// in no particular order, and returns when all calls have returned. A panic
// in f is re-raised as a *PanicError once every piece has finished. Any
// goroutine may call it; a job passes On(c).
func (it Iter[T]) ForEach(f func(T), opts ...Option) {
	driveReduce(it, nil, opts, func(_ *struct{}, _ int, xs []T) bool {
		for _, x := range xs {
			f(x)
		}
		return true
	}, func(x, _ struct{}) struct{} { return x })
}

// Reduce combines the items of it with op, in order: op(...op(op(x0, x1),
// x2)..., xn) up to associativity, computed in parallel, so op must be
// associative (it need not be commutative). It returns identity if it has
// no items, and never passes identity to op. Any goroutine may call it; a
// job passes On(c).
func (it Iter[T]) Reduce(identity T, op func(x, y T) T, opts ...Option) T {
	r := driveReduce(it, nil, opts, func(acc *maybe[T], _ int, xs []T) bool {
		if len(xs) > 0 && !acc.ok {
			*acc = maybe[T]{xs[0], true}
			xs = xs[1:]
		}
		v := acc.v
		for _, x := range xs {
			v = op(v, x)
		}
		acc.v = v
		return true
	}, combinePresent(op))
	if !r.ok {
		return identity
	}
	return r.v
}

// Fold is Reduce into another type: each piece of the split range starts
// from init() and folds its items in with step, in order; combine merges
// the results of adjacent pieces, left first, and must be associative with
// init() as its identity. It returns init() if it has no items. init is
// called once per piece that has items, so it must return a fresh value
// when A holds references (a map, a slice). Any goroutine may call it; a
// job passes On(c).
func Fold[T, A any](it Iter[T], init func() A, step func(acc A, x T) A, combine func(x, y A) A, opts ...Option) A {
	r := driveReduce(it, nil, opts, func(acc *maybe[A], _ int, xs []T) bool {
		if !acc.ok {
			*acc = maybe[A]{init(), true}
		}
		v := acc.v
		for _, x := range xs {
			v = step(v, x)
		}
		acc.v = v
		return true
	}, combinePresent(combine))
	if !r.ok {
		return init()
	}
	return r.v
}
