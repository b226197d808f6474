package future

// This file holds the racing combinators: Race, Select and Select2. On each
// Poll they poll every child, in index order, and stop at the first that
// completes: it wins, and every other child is cancelled in that same Poll.

// Selected is the value of Select: the index of the winning future, in
// argument order, and its value.
type Selected[T any] struct {
	Index int
	Value T
}

// Selected2 is the value of Select2: Index is 0 when the first future won,
// with its value in First, and 1 when the second did, with its value in
// Second. The loser's field is its zero value.
type Selected2[A, B any] struct {
	Index  int
	First  A
	Second B
}

// racer is the state Race and Select share.
type racer[T any] struct {
	fs []Future[T] // the children; nil once done or cancelled; owner only
	ph phase       // owner only
}

// newRacer copies fs, panicking with ErrEmpty or ErrNilFuture.
func newRacer[T any](fs []Future[T]) racer[T] {
	if len(fs) == 0 {
		panic(ErrEmpty)
	}
	for _, f := range fs {
		mustFuture(f)
	}
	return racer[T]{fs: append([]Future[T](nil), fs...)}
}

// poll polls the children in index order until one completes, cancels the
// others and reports the winner's index and value.
func (r *racer[T]) poll(cx *Context) (int, T, bool) {
	r.ph.checkPoll()
	for i, f := range r.fs {
		if v, ok := f.Poll(cx); ok {
			fs := r.fs
			r.fs, r.ph = nil, phaseDone
			cancelAll(fs, i)
			return i, v, true
		}
	}
	var zero T
	return -1, zero, false
}

// Cancel cancels every child, in index order. It is idempotent. The owner
// calls it.
func (r *racer[T]) Cancel() {
	if r.ph != phasePending {
		return
	}
	fs := r.fs
	r.fs, r.ph = nil, phaseCancelled
	cancelAll(fs, -1)
}

// raceFut is Race's future.
type raceFut[T any] struct{ racer[T] }

// Race returns a future that completes with the value of the first of fs to
// complete. Each Poll polls every child in index order and stops at the first
// that completes; every other child, polled in this Poll or not, is cancelled
// before Poll returns. The polling is biased, as with Tokio's select! under
// biased;: when several children are ready at one Poll, the lowest index wins,
// deterministically, and a child that is always ready starves those after it.
// Cancel cancels every child. The slice fs is copied. It panics with ErrEmpty
// if fs is empty (the race could never complete) and with ErrNilFuture if any
// future is nil. Any goroutine may call Race; the result takes ownership of
// the futures.
func Race[T any](fs ...Future[T]) Future[T] {
	return &raceFut[T]{newRacer(fs)}
}

// Poll races the children. The owner calls it.
func (r *raceFut[T]) Poll(cx *Context) (T, bool) {
	_, v, ok := r.poll(cx)
	return v, ok
}

// selectFut is Select's future.
type selectFut[T any] struct{ racer[T] }

// Select is Race that also reports which future won: its value carries the
// winner's index in argument order. Polling, cancellation and panics are as
// for Race. Any goroutine may call Select; the result takes ownership of the
// futures.
func Select[T any](fs ...Future[T]) Future[Selected[T]] {
	return &selectFut[T]{newRacer(fs)}
}

// Poll races the children. The owner calls it.
func (s *selectFut[T]) Poll(cx *Context) (Selected[T], bool) {
	i, v, ok := s.poll(cx)
	if !ok {
		return Selected[T]{}, false
	}
	return Selected[T]{Index: i, Value: v}, true
}

// select2 is Select2's future.
type select2[A, B any] struct {
	a  Future[A] // nil once done or cancelled; owner only
	b  Future[B] // nil once done or cancelled; owner only
	ph phase     // owner only
}

// Select2 races two futures of different types: each Poll polls a, then b,
// and the first to complete wins (a when both are ready: biased, as Race);
// the loser is cancelled in that same Poll. Cancel cancels both. It panics
// with ErrNilFuture if a or b is nil. Any goroutine may call Select2; the
// result takes ownership of a and b.
func Select2[A, B any](a Future[A], b Future[B]) Future[Selected2[A, B]] {
	mustFuture(a)
	mustFuture(b)
	return &select2[A, B]{a: a, b: b}
}

// Poll races a and b. The owner calls it.
func (s *select2[A, B]) Poll(cx *Context) (Selected2[A, B], bool) {
	s.ph.checkPoll()
	a, b := s.a, s.b
	if v, ok := a.Poll(cx); ok {
		s.a, s.b, s.ph = nil, nil, phaseDone
		Cancel(b)
		return Selected2[A, B]{Index: 0, First: v}, true
	}
	if v, ok := b.Poll(cx); ok {
		s.a, s.b, s.ph = nil, nil, phaseDone
		Cancel(a)
		return Selected2[A, B]{Index: 1, Second: v}, true
	}
	return Selected2[A, B]{}, false
}

// Cancel cancels both futures, a first. It is idempotent. The owner calls it.
func (s *select2[A, B]) Cancel() {
	if s.ph != phasePending {
		return
	}
	a, b := s.a, s.b
	s.a, s.b, s.ph = nil, nil, phaseCancelled
	Cancel(a)
	Cancel(b)
}
