package parallel

// The iterator adapters: Filter, Map, Enumerate, Zip, Chain, Flatten. Each
// wraps the drive of its input; none runs anything until a terminal
// operation does. A buffer an adapter needs is allocated once per drive
// call, that is once per piece of the split range.

// Filter returns an iterator over the items of it for which pred returns
// true, in order. The result has an unknown number of items per index, so
// Enumerate and Zip do not accept it. pred runs concurrently on several
// workers. Any goroutine may call it.
func (it Iter[T]) Filter(pred func(T) bool) Iter[T] {
	return Iter[T]{n: it.n, inexact: true, drive: func(st stopCheck, lo, hi int, sink batchSink[T]) bool {
		var buf []T
		return it.drive(st, lo, hi, func(base int, xs []T) bool {
			// Locals, not buf: a captured variable is reloaded after each
			// call of pred. Every x is stored, and kept if pred holds.
			out := grow(buf, len(xs))
			buf = out
			n := 0
			for _, x := range xs {
				out[n] = x
				if pred(x) {
					n++
				}
			}
			return n == 0 || sink(base, out[:n])
		})
	}}
}

// Map returns an iterator over f(x) for each item x of it, in order. f runs
// concurrently on several workers, once per item each time a terminal
// operation drives the iterator (early-exit operations may skip items). Any
// goroutine may call it.
func Map[T, U any](it Iter[T], f func(T) U) Iter[U] {
	return Iter[U]{n: it.n, inexact: it.inexact, drive: func(st stopCheck, lo, hi int, sink batchSink[U]) bool {
		var buf []U
		return it.drive(st, lo, hi, func(base int, xs []T) bool {
			out := grow(buf, len(xs)) // a local, as in Filter
			buf = out
			for i, x := range xs {
				out[i] = f(x)
			}
			return sink(base, out)
		})
	}}
}

// Indexed is an item of Enumerate: the item's index and value.
type Indexed[T any] struct {
	Index int
	Value T
}

// Enumerate returns an iterator over the items of it paired with their
// indices 0, 1, 2, .... It panics if it may yield other than one item per
// index (it comes from Filter or Flatten): collect first, or enumerate
// before filtering. Any goroutine may call it.
func Enumerate[T any](it Iter[T]) Iter[Indexed[T]] {
	if !it.exact() {
		panic(msgNotExact)
	}
	return Iter[Indexed[T]]{n: it.n, drive: func(st stopCheck, lo, hi int, sink batchSink[Indexed[T]]) bool {
		var buf []Indexed[T]
		return it.drive(st, lo, hi, func(base int, xs []T) bool {
			out := grow(buf, len(xs))
			buf = out
			for i, x := range xs {
				out[i] = Indexed[T]{base + i, x}
			}
			return sink(base, out)
		})
	}}
}

// Pair is an item of Zip: an item of each input.
type Pair[A, B any] struct {
	First  A
	Second B
}

// Zip returns an iterator over the pairs (a[i], b[i]), as long as the
// shorter input. It panics if a or b may yield other than one item per
// index (comes from Filter or Flatten). Zip drives its inputs a batch at a
// time, so an input built with Map allocates its buffer once per batch, not
// once per piece. Any goroutine may call it.
func Zip[A, B any](a Iter[A], b Iter[B]) Iter[Pair[A, B]] {
	if !a.exact() || !b.exact() {
		panic(msgNotExact)
	}
	return Iter[Pair[A, B]]{n: min(a.n, b.n), drive: func(st stopCheck, lo, hi int, sink batchSink[Pair[A, B]]) bool {
		var as []A
		var bs []B
		var buf []Pair[A, B]
		for blo := lo; blo < hi; blo += blockSize {
			if st.stopped(blo) {
				return false
			}
			bhi := min(blo+blockSize, hi)
			as = collectInto(a, as[:0], blo, bhi)
			bs = collectInto(b, bs[:0], blo, bhi)
			buf = grow(buf, len(as))
			for i := range buf {
				buf[i] = Pair[A, B]{as[i], bs[i]}
			}
			if !sink(blo, buf) {
				return false
			}
		}
		return true
	}}
}

// collectInto appends the items of it's indices [lo, hi) to dst, without a
// stop check, and returns it. Called by a drive.
func collectInto[T any](it Iter[T], dst []T, lo, hi int) []T {
	it.drive(stopCheck{}, lo, hi, func(_ int, xs []T) bool {
		dst = append(dst, xs...)
		return true
	})
	return dst
}

// Chain returns an iterator over the items of each of its in turn. Its
// indices are those of its[0], then those of its[1], and so on, so a
// terminal operation splits them as one range. The result yields one item
// per index if every input does. Any goroutine may call it.
func Chain[T any](its ...Iter[T]) Iter[T] {
	var out Iter[T]
	for _, it := range its {
		out = chain2(out, it)
	}
	return out
}

// chain2 is Chain of two iterators. Any goroutine may call it.
func chain2[T any](a, b Iter[T]) Iter[T] {
	switch {
	case a.n == 0: // no items, whatever its exactness
		return b
	case b.n == 0:
		return a
	}
	return Iter[T]{n: a.n + b.n, inexact: a.inexact || b.inexact, drive: func(st stopCheck, lo, hi int, sink batchSink[T]) bool {
		if lo < a.n && !a.drive(st, lo, min(hi, a.n), sink) {
			return false
		}
		if hi <= a.n {
			return true
		}
		return b.drive(st.shift(a.n), max(lo, a.n)-a.n, hi-a.n, func(base int, xs []T) bool {
			return sink(base+a.n, xs)
		})
	}}
}

// Flatten returns an iterator over the elements of each slice that it
// yields, in order. Its indices are those of it, so Grain counts slices and
// a terminal operation splits the outer iterator only: one huge inner slice
// is one piece. The result has an unknown number of items per index. Any
// goroutine may call it.
func Flatten[T any](it Iter[[]T]) Iter[T] {
	return Iter[T]{n: it.n, inexact: true, drive: func(st stopCheck, lo, hi int, sink batchSink[T]) bool {
		return it.drive(st, lo, hi, func(base int, xss [][]T) bool {
			for _, xs := range xss {
				for len(xs) > 0 {
					if st.stopped(base) {
						return false
					}
					k := min(len(xs), blockSize)
					if !sink(base, xs[:k:k]) {
						return false
					}
					xs = xs[k:]
				}
			}
			return true
		})
	}}
}

// grow returns buf resliced to n elements, reallocated if it is too short.
func grow[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n, max(n, blockSize))
	}
	return buf[:n]
}
