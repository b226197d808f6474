package future

// This file holds the failing joins: TryJoin2 and TryJoinAll. They poll as
// Join2 and JoinAll do, and stop at the first error.

// tryJoin2 is TryJoin2's future.
type tryJoin2[A, B any] struct {
	a  Future[Result[A]] // nil once it completed or was cancelled; owner only
	b  Future[Result[B]] // nil once it completed or was cancelled; owner only
	av A                 // a's value, kept until the join completes; owner only
	bv B                 // b's value, kept until the join completes; owner only
	ph phase             // owner only
}

// TryJoin2 returns a future that completes with both values when a and b have
// both completed with a nil Err, or with the first non-nil Err as soon as a
// child completes with one: the other child, if it has not completed, is
// cancelled in that same Poll, and the error is returned as is. "First" is in
// poll order: a before b within one Poll. Cancel cancels the children that
// have not completed and only those. It panics with ErrNilFuture if a or b is
// nil. Any goroutine may call TryJoin2; the result takes ownership of a and b.
func TryJoin2[A, B any](a Future[Result[A]], b Future[Result[B]]) Future[Result[Pair[A, B]]] {
	mustFuture(a)
	mustFuture(b)
	return &tryJoin2[A, B]{a: a, b: b}
}

// Poll polls the unfinished children. The owner calls it.
func (j *tryJoin2[A, B]) Poll(cx *Context) (Result[Pair[A, B]], bool) {
	j.ph.checkPoll()
	if j.a != nil {
		if r, ok := j.a.Poll(cx); ok {
			j.a = nil
			if r.Err != nil {
				return j.fail(r.Err), true
			}
			j.av = r.Value
		}
	}
	if j.b != nil {
		if r, ok := j.b.Poll(cx); ok {
			j.b = nil
			if r.Err != nil {
				return j.fail(r.Err), true
			}
			j.bv = r.Value
		}
	}
	if j.a != nil || j.b != nil {
		return Result[Pair[A, B]]{}, false
	}
	p := Pair[A, B]{First: j.av, Second: j.bv}
	j.release(phaseDone)
	return Ok(p), true
}

// fail completes the join with err, cancelling the child still running.
func (j *tryJoin2[A, B]) fail(err error) Result[Pair[A, B]] {
	a, b := j.a, j.b
	j.release(phaseDone)
	if a != nil {
		Cancel(a)
	}
	if b != nil {
		Cancel(b)
	}
	return Fail[Pair[A, B]](err)
}

// release drops every reference the join holds and moves it to ph.
func (j *tryJoin2[A, B]) release(ph phase) {
	var za A
	var zb B
	j.a, j.b, j.av, j.bv, j.ph = nil, nil, za, zb, ph
}

// Cancel cancels the unfinished children. It is idempotent. The owner calls
// it.
func (j *tryJoin2[A, B]) Cancel() {
	if j.ph != phasePending {
		return
	}
	a, b := j.a, j.b
	j.release(phaseCancelled)
	if a != nil {
		Cancel(a)
	}
	if b != nil {
		Cancel(b)
	}
}

// tryJoinAll is TryJoinAll's future.
type tryJoinAll[T any] struct {
	fs   []Future[Result[T]] // the children, an entry nil once it completed; the slice nil once done or cancelled; owner only
	out  []T                 // the values in argument order, handed to the caller on success; owner only
	left int                 // children not yet completed; owner only
	ph   phase               // owner only
}

// TryJoinAll returns a future that completes with every value, in argument
// order, when every future of fs has completed with a nil Err, or with the
// first non-nil Err as soon as a child completes with one: every child that
// has not completed is cancelled in that same Poll (in argument order), and
// the error is returned as is. "First" is in poll order: children are polled
// in argument order. Of no futures it completes at once with an empty slice.
// Cancel cancels the children that have not completed and only those. The
// slice fs is copied. It panics with ErrNilFuture if any future is nil. Any
// goroutine may call TryJoinAll; the result takes ownership of the futures.
func TryJoinAll[T any](fs ...Future[Result[T]]) Future[Result[[]T]] {
	for _, f := range fs {
		mustFuture(f)
	}
	return &tryJoinAll[T]{fs: append([]Future[Result[T]](nil), fs...), out: make([]T, len(fs)), left: len(fs)}
}

// Poll polls the unfinished children. The owner calls it.
func (j *tryJoinAll[T]) Poll(cx *Context) (Result[[]T], bool) {
	j.ph.checkPoll()
	for i, f := range j.fs {
		if f == nil {
			continue
		}
		r, ok := f.Poll(cx)
		if !ok {
			continue
		}
		if r.Err != nil {
			fs := j.fs
			j.fs, j.out, j.ph = nil, nil, phaseDone
			cancelAll(fs, i)
			return Fail[[]T](r.Err), true
		}
		j.fs[i], j.out[i] = nil, r.Value
		j.left--
	}
	if j.left > 0 {
		return Result[[]T]{}, false
	}
	out := j.out
	j.fs, j.out, j.ph = nil, nil, phaseDone
	return Ok(out), true
}

// Cancel cancels the unfinished children, in argument order. It is
// idempotent. The owner calls it.
func (j *tryJoinAll[T]) Cancel() {
	if j.ph != phasePending {
		return
	}
	fs := j.fs
	j.fs, j.out, j.ph = nil, nil, phaseCancelled
	cancelAll(fs, -1)
}
