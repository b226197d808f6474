package parallel

import (
	"math"
	"sync/atomic"
)

// Parallel iterators over slices: the type, the batch protocol and the
// sources. See the package doc, section "Iterators".

// blockSize is the most elements a source hands down a pipeline at once (a
// batch), and so how often it checks the stop condition of the early-exit
// operations. Large enough that the per-batch indirect calls vanish next to
// the per-element ones, small enough that a batch's buffers stay in L1 and
// an early exit is seen within microseconds.
const blockSize = 256

// Panic messages for misuse of the iterators.
const (
	msgChunkSize = "parallel: Chunks size must be at least 1"
	msgNotExact  = "parallel: Enumerate and Zip need an iterator with one item per index (none after Filter or Flatten)"
)

// Iter is a lazy parallel iterator: a pipeline of sources and adapters that
// runs only when a terminal operation (Collect, Sum, FindFirst, ...)
// drives it, in one fused pass and without intermediate slices. The
// terminal operation splits the iterator's index range, the indices of its
// source, as For does, and takes the same Options (On, Grain); items keep
// their sequential order wherever order is observable (Collect, FindFirst,
// Position, Reduce, Fold, MinBy, ...).
//
// Adapters that keep the item type are methods (Filter); those that change
// it are functions (Map, Enumerate, Zip, Flatten), since Go has no generic
// methods. An Iter is a value: adapting it returns a new Iter and leaves the
// old one usable. The zero Iter is empty.
//
// The functions passed to an iterator run concurrently on several workers
// and must be safe for that; they must not keep the Ctx of the job that
// started the terminal operation.
type Iter[T any] struct {
	// n is the number of indices the terminal operations split: the
	// source's length.
	n int
	// inexact is set when an index may yield zero or several items (after
	// Filter or Flatten); otherwise index i yields exactly item i.
	inexact bool
	// drive pushes the items of the indices [lo, hi), lo < hi, to sink, in
	// order, in batches (see batchSink); it stops early and returns false
	// if sink returns false or st fires. Called by the worker running the
	// piece [lo, hi); nil only in the zero Iter, whose n is 0.
	drive func(st stopCheck, lo, hi int, sink batchSink[T]) bool
}

// batchSink receives a batch of items: xs, never empty, produced from
// source indices starting at base. If the iterator is exact, xs[i] is the item of index
// base+i; otherwise base only orders batches (a batch with a smaller base
// comes earlier) and every item of xs counts as being at base, which is
// what the early-exit operations compare (see cutoff). A sink must neither
// modify nor keep xs, which may alias the source slice or a reused buffer.
// It returns false to stop the drive.
type batchSink[T any] func(base int, xs []T) bool

// cutoff is the shared stop condition of an early-exit operation: sources
// skip every batch whose base exceeds limit. FindFirst lowers limit to the
// base of the batch that matched, so batches to the left keep going and
// batches to the right stop; FindAny sets it to -1, which stops all.
type cutoff struct {
	// limit: any worker may lower it (CAS loop in lower, store in stopAll);
	// sources load it before each batch. No ordering beyond the value is
	// needed: the results travel through Join, not through limit.
	limit atomic.Int64
}

// newCutoff returns a cutoff that stops nothing yet. Any goroutine may call
// it.
func newCutoff() *cutoff {
	c := new(cutoff)
	c.limit.Store(math.MaxInt64) // not shared yet
	return c
}

// lower makes every batch based after base stop. Any worker may call it.
func (c *cutoff) lower(base int) {
	b := int64(base)
	for {
		old := c.limit.Load() // load; partner of the CAS below and of other lowerers
		if b >= old || c.limit.CompareAndSwap(old, b) {
			return
		}
	}
}

// stopAll makes every batch stop. Any worker may call it.
func (c *cutoff) stopAll() { c.limit.Store(-1) } // store; read by stopped's load

// stopCheck is how a source asks whether its next batch must stop: the
// cutoff of the running operation (nil: never) and the offset of the
// source's indices in the indices the cutoff compares (Chain shifts its
// second part). A value, copied down the pipeline.
type stopCheck struct {
	c   *cutoff
	off int
}

// stopped reports whether a batch based at base must be skipped. Called by
// sources, before each batch.
func (s stopCheck) stopped(base int) bool {
	return s.c != nil && int64(base+s.off) > s.c.limit.Load() // load; see cutoff.limit
}

// shift returns the check for a source whose index 0 is index off of s's.
func (s stopCheck) shift(off int) stopCheck { return stopCheck{s.c, s.off + off} }

// From returns an iterator over the elements of s, in order. The iterator
// reads s when a terminal operation runs, not before; s must not change
// meanwhile. Any goroutine may call it.
func From[T any](s []T) Iter[T] {
	return Iter[T]{n: len(s), drive: func(st stopCheck, lo, hi int, sink batchSink[T]) bool {
		for b := lo; b < hi; b += blockSize {
			if st.stopped(b) {
				return false
			}
			e := min(b+blockSize, hi)
			if !sink(b, s[b:e:e]) {
				return false
			}
		}
		return true
	}}
}

// Range returns an iterator over the integers 0, 1, ..., n-1; empty if n <=
// 0. Any goroutine may call it.
func Range(n int) Iter[int] {
	return Iter[int]{n: max(n, 0), drive: func(st stopCheck, lo, hi int, sink batchSink[int]) bool {
		buf := make([]int, min(blockSize, hi-lo))
		return driveGenerated(st, lo, hi, buf, func(i int) int { return i }, sink)
	}}
}

// Chunks returns an iterator over the consecutive subslices of s of size
// elements each, the last one shorter if size does not divide len(s); empty
// if s is. The chunks alias s (with their capacity cut to their length, so
// appending to one cannot overwrite the next). Grain and the early exit
// count chunks, not elements. It panics with "parallel: Chunks size must be
// at least 1" if size < 1. Any goroutine may call it.
func Chunks[T any](s []T, size int) Iter[[]T] {
	if size < 1 {
		panic(msgChunkSize)
	}
	n := (len(s) + size - 1) / size
	chunk := func(i int) []T {
		lo, hi := i*size, min((i+1)*size, len(s))
		return s[lo:hi:hi]
	}
	return Iter[[]T]{n: n, drive: func(st stopCheck, lo, hi int, sink batchSink[[]T]) bool {
		buf := make([][]T, min(blockSize, hi-lo))
		return driveGenerated(st, lo, hi, buf, chunk, sink)
	}}
}

// driveGenerated is the drive of a source whose item i is gen(i): it fills
// buf (at least min(blockSize, hi-lo) long) batch by batch and hands it to
// sink. Called by a drive.
func driveGenerated[T any](st stopCheck, lo, hi int, buf []T, gen func(i int) T, sink batchSink[T]) bool {
	for b := lo; b < hi; b += blockSize {
		if st.stopped(b) {
			return false
		}
		xs := buf[:min(blockSize, hi-b)]
		for i := range xs {
			xs[i] = gen(b + i)
		}
		if !sink(b, xs) {
			return false
		}
	}
	return true
}

// exact reports whether index i of it yields exactly item i. Any goroutine
// may call it.
func (it Iter[T]) exact() bool { return !it.inexact }
