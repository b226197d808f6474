package future

// This file holds the joins: Join2 and JoinAll. Both poll every unfinished
// child on each Poll, with the same Context, in argument order.

// Pair is the value of Join2 and TryJoin2: the values of the two futures.
type Pair[A, B any] struct {
	First  A
	Second B
}

// join2 is Join2's future.
type join2[A, B any] struct {
	a  Future[A] // nil once it completed or was cancelled; owner only
	b  Future[B] // nil once it completed or was cancelled; owner only
	av A         // a's value, kept until the join completes; owner only
	bv B         // b's value, kept until the join completes; owner only
	ph phase     // owner only
}

// Join2 returns a future that completes when both a and b have, with both
// values. Each Poll polls the children that have not completed, a first.
// Cancel cancels the children that have not completed and only those.
// It panics with ErrNilFuture if a or b is nil. Any goroutine may call
// Join2; the result takes ownership of a and b.
func Join2[A, B any](a Future[A], b Future[B]) Future[Pair[A, B]] {
	mustFuture(a)
	mustFuture(b)
	return &join2[A, B]{a: a, b: b}
}

// Poll polls the unfinished children. The owner calls it.
func (j *join2[A, B]) Poll(cx *Context) (Pair[A, B], bool) {
	j.ph.checkPoll()
	if j.a != nil {
		if v, ok := j.a.Poll(cx); ok {
			j.a, j.av = nil, v
		}
	}
	if j.b != nil {
		if v, ok := j.b.Poll(cx); ok {
			j.b, j.bv = nil, v
		}
	}
	if j.a != nil || j.b != nil {
		return Pair[A, B]{}, false
	}
	p := Pair[A, B]{First: j.av, Second: j.bv}
	var za A
	var zb B
	j.av, j.bv, j.ph = za, zb, phaseDone
	return p, true
}

// Cancel cancels the unfinished children and drops the values of the others.
// It is idempotent. The owner calls it.
func (j *join2[A, B]) Cancel() {
	if j.ph != phasePending {
		return
	}
	a, b := j.a, j.b
	var za A
	var zb B
	j.a, j.b, j.av, j.bv, j.ph = nil, nil, za, zb, phaseCancelled
	if a != nil {
		Cancel(a)
	}
	if b != nil {
		Cancel(b)
	}
}

// joinAll is JoinAll's future.
type joinAll[T any] struct {
	fs   []Future[T] // the children, an entry nil once it completed; the slice nil once done or cancelled; owner only
	out  []T         // the values in argument order, handed to the caller on completion; owner only
	left int         // children not yet completed; owner only
	ph   phase       // owner only
}

// JoinAll returns a future that completes when every future of fs has, with
// their values in argument order. Each Poll polls the children that have not
// completed, in argument order. Of no futures it completes at once with an
// empty slice. Cancel cancels the children that have not completed and only
// those. The slice fs is copied. It panics with ErrNilFuture if any future is
// nil. Any goroutine may call JoinAll; the result takes ownership of the
// futures.
func JoinAll[T any](fs ...Future[T]) Future[[]T] {
	for _, f := range fs {
		mustFuture(f)
	}
	return &joinAll[T]{fs: append([]Future[T](nil), fs...), out: make([]T, len(fs)), left: len(fs)}
}

// Poll polls the unfinished children. The owner calls it.
func (j *joinAll[T]) Poll(cx *Context) ([]T, bool) {
	j.ph.checkPoll()
	for i, f := range j.fs {
		if f == nil {
			continue
		}
		if v, ok := f.Poll(cx); ok {
			j.fs[i], j.out[i] = nil, v
			j.left--
		}
	}
	if j.left > 0 {
		return nil, false
	}
	out := j.out
	j.fs, j.out, j.ph = nil, nil, phaseDone
	return out, true
}

// Cancel cancels the unfinished children, in argument order, and drops the
// values of the others. It is idempotent. The owner calls it.
func (j *joinAll[T]) Cancel() {
	if j.ph != phasePending {
		return
	}
	fs := j.fs
	j.fs, j.out, j.ph = nil, nil, phaseCancelled
	cancelAll(fs, -1)
}

// cancelAll cancels every non-nil future of fs except fs[skip], in index
// order, and clears fs. The owner of the futures calls it.
func cancelAll[T any](fs []Future[T], skip int) {
	for i, f := range fs {
		fs[i] = nil
		if f != nil && i != skip {
			Cancel(f)
		}
	}
}
