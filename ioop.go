package blitz

import (
	"log"
	"runtime/debug"
	"sync"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
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
	ring *ioRing

	mu    sync.Mutex
	state ioState
	wk    waker.Waker
	res   backend.Completion
}

// submit hands op (filled by the caller) to ring's backend, with cx's waker
// as the one to wake. An error from Submit is returned as is and the op
// stays idle.
func (o *ioOp) submit(cx *future.Context, r *ioRing) error {
	return o.submitAs(cx, r, o)
}

// submitAs is submit with owner as the op's Owner, for a type that embeds
// the ioOp and wraps its complete (owner's complete must call the ioOp's).
func (o *ioOp) submitAs(cx *future.Context, r *ioRing, owner ioWaiter) error {
	o.ring = r
	o.op.Owner = owner
	o.mu.Lock()
	o.wk = cx.Waker()
	o.state = ioInFlight
	o.mu.Unlock()
	if err := r.submit(&o.op); err != nil {
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
		_ = o.ring.submit(&backend.Op{Kind: backend.KindCancel, Target: &o.op})
		return
	case ioDone:
		c := o.res
		o.res = backend.Completion{}
		o.state, o.wk = ioIdle, waker.Waker{}
		o.mu.Unlock()
		o.ring.dispose(&c)
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
	_ = o.ring.submit(&backend.Op{Kind: backend.KindCancel, Target: &o.op})
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
		_ = o.ring.submit(&backend.Op{Kind: backend.KindCancel, Target: &o.op})
		return true
	case ioDone:
		o.mu.Unlock()
		return true
	}
	o.mu.Unlock()
	return false
}

// complete is the driver's delivery of a completion. Intermediate ones
// (More) are for multishot ops, whose futures override this; here only final
// completions arrive.
func (o *ioOp) complete(cx *future.Context, c *backend.Completion) {
	o.mu.Lock()
	if o.state == ioAbandoned {
		o.state = ioIdle
		o.mu.Unlock()
		o.ring.dispose(c)
		return
	}
	o.res = *c
	o.state = ioDone
	wk := o.wk
	o.wk = waker.Waker{}
	o.mu.Unlock()
	if !wk.IsZero() {
		wakeContained(cx, wk, wakerOfIODriver)
	}
}

// Where a contained Waker panic happened, for its report.
const (
	wakerOfIODriver     = "a waker called by the I/O driver"
	wakerOfTimerDriver  = "a waker called by the timer driver"
	wakerOfBlockingPool = "a waker called by the blocking pool"
	wakerOfFileClose    = "a waker called when a file's last operation ended"
	wakerOfResolver     = "a waker called by a name lookup"
)

// wakeContained wakes wk through cx, as a driver delivering an event does,
// containing a panic of the Waker: the panic is reported (reportContained)
// and wakeContained returns normally, so that the driver goes on with the
// rest of its batch and the worker survives. The driver must have stored
// the event before the call (the Waker's task polls again to find it), and
// hold no lock. where names the driver for the report. Called by a driver
// with the Context of the worker (or shutdown) delivering the event.
func wakeContained(cx *future.Context, wk waker.Waker, where string) {
	defer func() {
		if r := recover(); r != nil {
			s, _ := cx.Executor().(*scheduler.Scheduler)
			reportContained(s, where, r)
		}
	}()
	cx.Wake(wk)
}

// wakeReported is wakeContained for a goroutine of the runtime's that has
// no Context (a blocking-pool thread, a name lookup, the last operation of
// a closing file): it calls wk.Wake directly and reports a panic through s
// (nil: the log). The caller must have stored the outcome first and hold
// no lock. Any goroutine.
func wakeReported(s *scheduler.Scheduler, wk waker.Waker, where string) {
	defer func() {
		if r := recover(); r != nil {
			reportContained(s, where, r)
		}
	}()
	wk.Wake()
}

// reportContained reports r, a Waker's panic that wakeContained or
// wakeReported recovered, through s (Scheduler.ReportPanic: counted, then
// Config.OnPanic or the log); with no scheduler, to the log. Called by
// their deferred functions, on the panicking goroutine, so that the stack
// is the panic's.
func reportContained(s *scheduler.Scheduler, where string, r any) {
	pe := &PanicError{Value: r, Stack: debug.Stack()}
	if s != nil {
		s.ReportPanic(where, pe)
		return
	}
	log.Printf("blitz: panic in %s, recovered: %v\n\n%s", where, pe.Value, pe.Stack)
}

// dispose releases what a completion nobody will read holds: the socket an
// accept made, the file an openat opened, the group buffer a recv filled.
func (r *ioRing) dispose(c *backend.Completion) {
	if c.Err != nil {
		return
	}
	if c.Op != nil && (c.Op.Kind == backend.KindAccept || c.Op.Kind == backend.KindOpenAt) && c.FD != backend.InvalidFD {
		_ = r.b.CloseFD(c.FD)
	}
	if c.Flags&backend.HasBuffer != 0 {
		_ = r.b.ReleaseBuffer(c.Op.BufferGroup, c.BufferID)
	}
}
