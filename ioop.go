package blitz

import (
	"sync"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/internal/contain"
	"github.com/blitz-go/blitz/internal/iodriver"
	"github.com/blitz-go/blitz/waker"
)

// ioState is where an ioOp is in its life.
type ioState uint8

const (
	ioIdle      ioState = iota // not submitted, or its result was taken
	ioInFlight                 // submitted; the backend owns op
	ioDone                     // final completion stored in res, not yet taken
	ioAbandoned                // cancelled in flight: the completion is dropped on arrival
)

// ioOp is one backend operation and the waiter of the task that waits for
// it: the building block of every I/O future. It lives inside the future
// (by value, so a task allocates once), and the backend keeps it reachable
// through op while the op is in flight, after an abandon too.
//
// The submitting task owns op's input fields until submit and after take;
// between them the backend does. mu guards state, wk and res, which the
// task (poll, abandon) and the worker that collects the completion
// (complete) share.
type ioOp struct {
	op backend.Op
	// ring is the ring op was submitted to, where its cancel goes. Set by
	// submit.
	ring *iodriver.Ring

	mu    sync.Mutex
	state ioState
	wk    waker.Waker
	res   backend.Completion
}

// submit hands op (filled by the caller) to ring's backend, with cx's waker
// as the one to wake. An error from Submit is returned as is and the op
// stays idle.
func (o *ioOp) submit(cx *future.Context, r *iodriver.Ring) error {
	return o.submitAs(cx, r, o)
}

// submitAs is submit with owner as the op's Owner, for a type that embeds
// the ioOp and wraps its Complete (owner's Complete must call the ioOp's).
func (o *ioOp) submitAs(cx *future.Context, r *iodriver.Ring, owner iodriver.Waiter) error {
	o.ring = r
	o.op.Owner = owner
	o.mu.Lock()
	o.wk = cx.Waker()
	o.state = ioInFlight
	o.mu.Unlock()
	if err := r.Submit(&o.op); err != nil {
		o.mu.Lock()
		o.state, o.wk = ioIdle, waker.Waker{}
		o.mu.Unlock()
		return err
	}
	return nil
}

// poll returns the final completion once it arrived (and makes the op idle
// again), or registers cx's waker and returns false.
func (o *ioOp) poll(cx *future.Context) (backend.Completion, bool) {
	o.mu.Lock()
	if o.state == ioDone {
		c := o.res
		o.res = backend.Completion{}
		o.state, o.wk = ioIdle, waker.Waker{}
		o.mu.Unlock()
		return c, true
	}
	if wk := cx.Waker(); !o.wk.WillWake(wk) {
		o.wk = wk
	}
	o.mu.Unlock()
	if o.op.Kind.Valid() {
		cx.Waiting(ioWaitKinds[o.op.Kind], uint64(o.op.FD)) // for a task dump: files, pipes, processes
	}
	return backend.Completion{}, false
}

// abandon gives the op up: if it is in flight, a cancel is submitted and the
// completion, when it comes, is disposed of (an accepted socket closed, a
// group buffer released); a completion already stored is disposed of now.
// The future's Cancel calls it.
func (o *ioOp) abandon() {
	o.mu.Lock()
	switch o.state {
	case ioInFlight:
		o.state, o.wk = ioAbandoned, waker.Waker{}
		o.mu.Unlock()
		// The cancel op is allocated here, not kept in every ioOp: abandons
		// are rare and idle connections many. Its completion has no Owner,
		// so the driver skips it. A refused cancel (backend closed) changes
		// nothing: the backend's Close cancels the op anyway.
		_ = o.ring.Submit(&backend.Op{Kind: backend.KindCancel, Target: &o.op})
		return
	case ioDone:
		c := o.res
		o.res = backend.Completion{}
		o.state, o.wk = ioIdle, waker.Waker{}
		o.mu.Unlock()
		o.ring.Dispose(&c)
		return
	}
	o.mu.Unlock()
}

// requestCancel asks the backend to cancel the op in flight but, unlike
// abandon, keeps waiting for it: the final completion (ErrCanceled, or the
// result if it won the race) still arrives through poll. For callers that
// reuse the op afterwards, like the net.Conn adapter on a deadline. It
// returns false if the op is not in flight.
func (o *ioOp) requestCancel() bool {
	o.mu.Lock()
	inFlight := o.state == ioInFlight
	o.mu.Unlock()
	if !inFlight {
		return false
	}
	_ = o.ring.Submit(&backend.Op{Kind: backend.KindCancel, Target: &o.op})
	return true
}

// cancelKeeping asks the backend to cancel the op in flight and forgets
// its waiter, but keeps the final completion (ErrCanceled, or the result if
// it won the race) for whoever polls the op next: a cancelled read whose
// data must reach the next read. It reports false if the op is idle.
func (o *ioOp) cancelKeeping() bool {
	o.mu.Lock()
	switch o.state {
	case ioInFlight:
		o.wk = waker.Waker{}
		o.mu.Unlock()
		_ = o.ring.Submit(&backend.Op{Kind: backend.KindCancel, Target: &o.op})
		return true
	case ioDone:
		o.mu.Unlock()
		return true
	}
	o.mu.Unlock()
	return false
}

// Complete is the driver's delivery of a completion. Intermediate ones
// (More) are for multishot ops, whose futures override this; here only final
// completions arrive.
func (o *ioOp) Complete(cx *future.Context, c *backend.Completion) {
	o.mu.Lock()
	if o.state == ioAbandoned {
		o.state = ioIdle
		o.mu.Unlock()
		o.ring.Dispose(c)
		return
	}
	o.res = *c
	o.state = ioDone
	wk := o.wk
	o.wk = waker.Waker{}
	o.mu.Unlock()
	if !wk.IsZero() {
		contain.Wake(cx, wk, contain.OfIODriver)
	}
}
