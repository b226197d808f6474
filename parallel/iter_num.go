package parallel

import "cmp"

// The numeric and ordering reductions: Sum, Min, Max, MinFunc, MaxFunc,
// MinBy, MaxBy. They are functions, not methods, because they constrain
// the item type.

// Number is the constraint of Sum: the types with a + operator whose zero
// value is the identity.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr |
		~float32 | ~float64 | ~complex64 | ~complex128
}

// Sum returns the sum of the items of it; 0 if there are none. Pieces are
// summed separately and then added in order, so for floating-point items
// the rounding differs from a sequential sum's (and from run to run, as
// the split depends on stealing). Any goroutine may call it; a job passes
// On(c).
func Sum[T Number](it Iter[T], opts ...Option) T {
	return driveReduce(it, nil, opts, func(acc *T, _ int, xs []T) bool {
		*acc += sumOf(xs)
		return true
	}, func(x, y T) T { return x + y })
}

// sumOf returns the sum of xs, accumulating in a local variable so that the
// loop keeps it in a register.
func sumOf[T Number](xs []T) T {
	var s T
	for _, x := range xs {
		s += x
	}
	return s
}

// Min returns the smallest item of it and true, or the zero T and false if
// it has no items. As the built-in min and slices.Min, it returns NaN if
// any item is a NaN. Any goroutine may call it; a job passes On(c).
func Min[T cmp.Ordered](it Iter[T], opts ...Option) (T, bool) {
	r := driveReduce(it, nil, opts, func(acc *maybe[T], _ int, xs []T) bool {
		if !acc.ok {
			*acc = maybe[T]{xs[0], true}
		}
		v := acc.v
		for _, x := range xs {
			v = min(v, x)
		}
		acc.v = v
		return true
	}, combinePresent(func(x, y T) T { return min(x, y) }))
	return r.v, r.ok
}

// Max returns the largest item of it and true, or the zero T and false if
// it has no items. As the built-in max and slices.Max, it returns NaN if
// any item is a NaN. Any goroutine may call it; a job passes On(c).
func Max[T cmp.Ordered](it Iter[T], opts ...Option) (T, bool) {
	r := driveReduce(it, nil, opts, func(acc *maybe[T], _ int, xs []T) bool {
		if !acc.ok {
			*acc = maybe[T]{xs[0], true}
		}
		v := acc.v
		for _, x := range xs {
			v = max(v, x)
		}
		acc.v = v
		return true
	}, combinePresent(func(x, y T) T { return max(x, y) }))
	return r.v, r.ok
}

// MinFunc returns the first smallest item of it as ordered by cmpFn (which
// returns a negative number for a < b, as for slices.MinFunc) and true, or
// the zero T and false if it has no items. Any goroutine may call it; a job
// passes On(c).
func MinFunc[T any](it Iter[T], cmpFn func(a, b T) int, opts ...Option) (T, bool) {
	return extreme(it, func(x, best T) bool { return cmpFn(x, best) < 0 }, opts)
}

// MaxFunc returns the first largest item of it as ordered by cmpFn, and
// true, or the zero T and false if it has no items; as slices.MaxFunc, the
// first of several largest items. Any goroutine may call it; a job passes
// On(c).
func MaxFunc[T any](it Iter[T], cmpFn func(a, b T) int, opts ...Option) (T, bool) {
	return extreme(it, func(x, best T) bool { return cmpFn(x, best) > 0 }, opts)
}

// extreme returns the first item of it that no later item beats: x
// replaces best only if beats(x, best), so ties keep the earlier item.
func extreme[T any](it Iter[T], beats func(x, best T) bool, opts []Option) (T, bool) {
	r := driveReduce(it, nil, opts, func(acc *maybe[T], _ int, xs []T) bool {
		if !acc.ok {
			*acc = maybe[T]{xs[0], true}
		}
		v := acc.v
		for _, x := range xs {
			if beats(x, v) {
				v = x
			}
		}
		acc.v = v
		return true
	}, func(x, y maybe[T]) maybe[T] {
		if x.ok && y.ok && beats(y.v, x.v) {
			return y
		}
		return firstPresent(x, y)
	})
	return r.v, r.ok
}

// MinBy returns the first item of it with the smallest key, as cmp.Compare
// orders keys (a NaN key is the smallest), and true; or the zero T and
// false if it has no items. key is called once per item. Any goroutine may
// call it; a job passes On(c).
func MinBy[T any, K cmp.Ordered](it Iter[T], key func(T) K, opts ...Option) (T, bool) {
	return extremeBy(it, key, func(k, best K) bool { return cmp.Less(k, best) }, opts)
}

// MaxBy returns the first item of it with the largest key, as cmp.Compare
// orders keys, and true; or the zero T and false if it has no items. key is
// called once per item. Any goroutine may call it; a job passes On(c).
func MaxBy[T any, K cmp.Ordered](it Iter[T], key func(T) K, opts ...Option) (T, bool) {
	return extremeBy(it, key, func(k, best K) bool { return cmp.Less(best, k) }, opts)
}

// keyed is an item with its cached key, and whether it is present.
type keyed[T any, K any] struct {
	v  T
	k  K
	ok bool
}

// extremeBy is extreme comparing cached keys.
func extremeBy[T any, K cmp.Ordered](it Iter[T], key func(T) K, beats func(k, best K) bool, opts []Option) (T, bool) {
	r := driveReduce(it, nil, opts, func(acc *keyed[T, K], _ int, xs []T) bool {
		best := *acc
		for _, x := range xs {
			if k := key(x); !best.ok || beats(k, best.k) {
				best = keyed[T, K]{x, k, true}
			}
		}
		*acc = best
		return true
	}, func(x, y keyed[T, K]) keyed[T, K] {
		if !x.ok || (y.ok && beats(y.k, x.k)) {
			return y
		}
		return x
	})
	return r.v, r.ok
}
