package future

// This file holds the sequential combinators: Map and Then.

// mapFut is Map's future.
type mapFut[T, U any] struct {
	f  Future[T] // the child; nil once it completed or was cancelled; owner only
	fn func(T) U // nil with f; owner only
	ph phase     // owner only
}

// Map returns a future that completes with fn(v) when f completes with v.
// fn runs inside the Poll that sees f complete, on the polling goroutine;
// it must not block. Cancel cancels f if f has not completed. It panics with
// ErrNilFuture if f or fn is nil. Any goroutine may call Map; the result
// takes ownership of f, which nobody else may poll or cancel afterwards.
func Map[T, U any](f Future[T], fn func(T) U) Future[U] {
	mustFuture(f)
	if fn == nil {
		panic(ErrNilFuture)
	}
	return &mapFut[T, U]{f: f, fn: fn}
}

// Poll polls f and maps its value. The owner calls it.
func (m *mapFut[T, U]) Poll(cx *Context) (U, bool) {
	m.ph.checkPoll()
	v, ok := m.f.Poll(cx)
	if !ok {
		var zero U
		return zero, false
	}
	fn := m.fn
	m.f, m.fn, m.ph = nil, nil, phaseDone
	return fn(v), true
}

// Cancel cancels f unless it completed. It is idempotent. The owner calls it.
func (m *mapFut[T, U]) Cancel() {
	if m.ph != phasePending {
		return
	}
	f := m.f
	m.f, m.fn, m.ph = nil, nil, phaseCancelled
	Cancel(f)
}

// thenFut is Then's future.
type thenFut[T, U any] struct {
	first  Future[T]         // nil once it completed or was cancelled; owner only
	fn     func(T) Future[U] // nil with first; owner only
	second Future[U]         // nil until first completes, nil again once done or cancelled; owner only
	ph     phase             // owner only
}

// Then returns a future that, when f completes with v, makes fn(v) and
// completes with that future's value. The second future is polled in the
// same Poll call that sees f complete, so a chain of ready steps completes in
// one poll. Cancel cancels whichever of the two is running: f before it
// completes, the second future after. It panics with ErrNilFuture if f or fn
// is nil, and from Poll if fn returns nil. Any goroutine may call Then; the
// result takes ownership of f and of the future fn returns.
func Then[T, U any](f Future[T], fn func(T) Future[U]) Future[U] {
	mustFuture(f)
	if fn == nil {
		panic(ErrNilFuture)
	}
	return &thenFut[T, U]{first: f, fn: fn}
}

// Poll drives the first future, then the second. The owner calls it.
func (t *thenFut[T, U]) Poll(cx *Context) (U, bool) {
	t.ph.checkPoll()
	var zero U
	if t.first != nil {
		v, ok := t.first.Poll(cx)
		if !ok {
			return zero, false
		}
		fn := t.fn
		t.first, t.fn = nil, nil
		t.second = fn(v)
		mustFuture(t.second)
	}
	u, ok := t.second.Poll(cx)
	if !ok {
		return zero, false
	}
	t.second, t.ph = nil, phaseDone
	return u, true
}

// Cancel cancels the running future. It is idempotent. The owner calls it.
func (t *thenFut[T, U]) Cancel() {
	if t.ph != phasePending {
		return
	}
	first, second := t.first, t.second
	t.first, t.fn, t.second, t.ph = nil, nil, nil, phaseCancelled
	if first != nil {
		Cancel(first)
	}
	if second != nil {
		Cancel(second)
	}
}
