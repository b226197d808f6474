package future

// This file holds the leaves: futures built from a value or a function,
// holding no child.

// readyFut is Ready's future.
type readyFut[T any] struct {
	v  T     // the value, zeroed once delivered or cancelled; owner only
	ph phase // owner only
}

// Ready returns a future that completes with v on its first poll. Like every
// future of this package it implements Canceler (cancelling drops v) and
// panics if polled after completing or after Cancel. Any goroutine may call
// Ready; the returned future is then owned by whoever polls it.
func Ready[T any](v T) Future[T] {
	return &readyFut[T]{v: v}
}

// Poll returns the value. The owner calls it.
func (r *readyFut[T]) Poll(*Context) (T, bool) {
	r.ph.checkPoll()
	v := r.v
	var zero T
	r.v, r.ph = zero, phaseDone
	return v, true
}

// Cancel drops the value. The owner calls it.
func (r *readyFut[T]) Cancel() {
	if r.ph == phasePending {
		var zero T
		r.v, r.ph = zero, phaseCancelled
	}
}

// pendingFut is Pending's future.
type pendingFut[T any] struct {
	ph phase // owner only
}

// Pending returns a future that never completes. It registers nothing, so
// returning not-ready without a wake is no lost wakeup: there is nothing to
// wake for. It is the identity of Race and Select (a child that never wins)
// and a stand-in for "forever" in tests. Cancel makes a later Poll panic with
// ErrPolledAfterCancel. Any goroutine may call Pending.
func Pending[T any]() Future[T] {
	return &pendingFut[T]{}
}

// Poll reports not-ready. The owner calls it.
func (p *pendingFut[T]) Poll(*Context) (T, bool) {
	p.ph.checkPoll()
	var zero T
	return zero, false
}

// Cancel marks the future cancelled. The owner calls it.
func (p *pendingFut[T]) Cancel() {
	if p.ph == phasePending {
		p.ph = phaseCancelled
	}
}

// pollFn is PollFn's future.
type pollFn[T any] struct {
	fn func(cx *Context) (T, bool) // nil once done or cancelled; owner only
	ph phase                       // owner only
}

// PollFn returns a future whose Poll is fn: fn obeys the poll contract (it
// returns true with the value, or false having arranged a wake of
// cx.Waker()). After fn has returned true the future panics if polled again,
// and fn is dropped. Cancel drops fn without calling it, so fn must leave
// nothing registered that outlives the future (keep a Waker in a place that
// a wake of a gone task does not harm); a future that registers in a waiter
// list is written by hand with its own Cancel (see "Writing a future by
// hand"). It panics with ErrNilFuture if fn is nil. Any goroutine may call
// PollFn.
func PollFn[T any](fn func(cx *Context) (T, bool)) Future[T] {
	if fn == nil {
		panic(ErrNilFuture)
	}
	return &pollFn[T]{fn: fn}
}

// Poll calls fn. The owner calls it.
func (p *pollFn[T]) Poll(cx *Context) (T, bool) {
	p.ph.checkPoll()
	v, ok := p.fn(cx)
	if ok {
		p.fn, p.ph = nil, phaseDone
	}
	return v, ok
}

// Cancel drops fn. The owner calls it.
func (p *pollFn[T]) Cancel() {
	if p.ph == phasePending {
		p.fn, p.ph = nil, phaseCancelled
	}
}
