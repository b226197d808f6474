//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package reactor

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
)

// Reactor implements backend.Backend, except Name, over a Poller. The epoll
// and kqueue backends embed it. Make it with New.
type Reactor struct {
	unixio.Control

	poller Poller
	// edgePerArrival: the poller reports each arrival of data and the
	// peer's close (EdgePerArrival). Immutable.
	edgePerArrival bool
	// waits counts the poller's Waits (poll), for EnterCalls. Added to
	// under pollMu; loaded by any goroutine.
	waits  atomic.Uint64
	epoch  time.Time
	fds    fdTable
	groups groups

	// waitBusy is held (true) by the one goroutine inside Wait.
	waitBusy atomic.Bool
	// closed is set once, under mu, by Close; read lock-free (Submit re-reads
	// it under a descriptor's mutex, after which Close's sweep of that
	// descriptor is ordered).
	closed atomic.Bool

	// mu guards the fields below it and every op's Internal.State.
	mu    sync.Mutex
	ready ring
	heap  timerHeap
	// sleeping: the Wait goroutine is in (or about to enter) the poller's
	// Wait, until sleepUntil (nanoseconds since epoch; MaxInt64: forever).
	sleeping   bool
	sleepUntil int64
	// kicked: the poller has been woken during this sleep (one wake-up each).
	kicked bool
	// wakePending: Wake was called and no Wait has returned since.
	wakePending bool
	// polling: the waiter waits in Go's poller on the poller's descriptor
	// (StartPolling to StopPolling), so a completion posted in user space
	// must kick the poller as it does for a sleeping Wait.
	polling bool
	// pollUntil is the deadline StartPolling returned (as sleepUntil), which
	// the waiter in Go's poller sleeps towards; a Wait(out, 0) in between
	// restores sleepUntil to it, so a sooner deadline still kicks.
	pollUntil int64
	// pollerClosed is set under both mu and pollMu; read under either.
	pollerClosed bool
	// dispatching: the Wait goroutine is dispatching what its poll
	// returned, and will look at ready again before it returns, so a
	// completion posted meanwhile (by its own dispatch, or by another
	// goroutine) needs no kick (see kickForPostLocked). Written only by
	// the Wait goroutine, under mu: set after a poll, cleared at the top
	// of its loop in the same hold of mu as its pop of ready. Read under
	// mu by whoever posts.
	dispatching bool

	// pollMu is held by Wait around the poller's Wait, and by Close to
	// close the poller once no Wait is inside it.
	pollMu sync.Mutex

	// events and expired belong to the goroutine inside Wait.
	events  []Event
	expired []*backend.Op
}

var _ interface {
	Caps() backend.Caps
	Submit(*backend.Op) error
	Flush() error
	Wait([]backend.Completion, time.Duration) (int, error)
	Wake() error
	Close() error
	backend.Resources
	backend.Buffers
} = (*Reactor)(nil)

// New returns a Reactor over p, which it owns from now on (Close closes it).
func New(p Poller) *Reactor {
	r := &Reactor{poller: p, epoch: time.Now(), events: make([]Event, 128)}
	if e, ok := p.(EdgePerArrival); ok {
		r.edgePerArrival = e.EdgePerArrival()
	}
	return r
}

// Caps: Unix sockets and Poll; multishot accept, buffer groups and
// cancellation are emulated in user space.
func (r *Reactor) Caps() backend.Caps { return backend.CapUnixSockets | backend.CapPoll }

// now is the monotonic time in nanoseconds since the reactor's epoch.
func (r *Reactor) now() int64 { return int64(time.Since(r.epoch)) }

// deadlineAfter is now plus d, or math.MaxInt64 (never) when the sum
// overflows: a duration too long for the clock, like math.MaxInt64, means
// never rather than a deadline wrapped into the past. now is not negative.
func deadlineAfter(now int64, d time.Duration) int64 {
	if int64(d) > math.MaxInt64-now {
		return math.MaxInt64
	}
	return now + int64(d)
}

// Flush has nothing to do: Submit makes its system calls at once.
func (r *Reactor) Flush() error {
	if r.closed.Load() {
		return backend.ErrClosed
	}
	return nil
}

// Submit starts op; see backend.Backend.
func (r *Reactor) Submit(op *backend.Op) error {
	if err := backend.CheckOp(op); err != nil {
		return err
	}
	// The file-system kinds (KindOpenAt, KindStatx, ...) have no readiness
	// to wait for: a reactor refuses them, and the caller blocks elsewhere.
	if err := backend.CheckCaps(op, r.Caps()); err != nil {
		return err
	}
	if err := r.checkTarget(op); err != nil {
		return err
	}
	r.mu.Lock()
	if r.closed.Load() {
		r.mu.Unlock()
		return backend.ErrClosed
	}
	if inFlight(op) {
		r.mu.Unlock()
		return backend.NewError(op.Kind.String(), backend.ErrInvalid, errInFlight)
	}
	op.Internal.State = stateInFlight
	op.Internal.Next, op.Internal.Prev, op.Internal.Token = nil, nil, 0
	switch op.Kind {
	case backend.KindNop:
		r.finishLocked(op, backend.Completion{})
	case backend.KindTimeout:
		r.startTimeoutLocked(op)
	}
	r.mu.Unlock()
	switch op.Kind {
	case backend.KindNop, backend.KindTimeout:
	case backend.KindCancel:
		r.finish(op, backend.Completion{Err: r.cancel(op.Target, backend.ErrCanceled)})
	case backend.KindClose:
		r.finish(op, backend.Completion{Err: r.closeFD(int(op.FD), "close")})
	default:
		fs := r.fds.get(int(op.FD), true)
		fs.mu.Lock()
		r.start(fs, op)
		fs.mu.Unlock()
	}
	return nil
}

// checkTarget rejects what CheckOp cannot know: a descriptor out of range,
// a buffer group that is not registered.
func (r *Reactor) checkTarget(op *backend.Op) error {
	switch op.Kind {
	case backend.KindNop, backend.KindTimeout, backend.KindCancel:
		return nil
	}
	if op.FD > math.MaxInt32 {
		return backend.NewError(op.Kind.String(), backend.ErrInvalid, errBadFD)
	}
	if op.Flags&backend.SelectBuffer != 0 && r.groups.get(op.BufferGroup) == nil {
		return backend.NewError(op.Kind.String(), backend.ErrInvalid, errNoGroup)
	}
	return nil
}

// startTimeoutLocked arms a KindTimeout op (or completes it at once for a
// zero Timeout).
func (r *Reactor) startTimeoutLocked(op *backend.Op) {
	if op.Timeout == 0 {
		r.finishLocked(op, backend.Completion{Err: backend.ErrTimeout})
		return
	}
	r.armLocked(op)
}

// armLocked puts op's deadline in the heap and wakes a sleeping Wait whose
// deadline is later. A deadline of never (math.MaxInt64) stays in the heap,
// where Close and a cancel of a KindTimeout find it, and never expires.
func (r *Reactor) armLocked(op *backend.Op) {
	when := deadlineAfter(r.now(), op.Timeout)
	r.heap.push(op, when)
	if (r.sleeping || r.polling) && when < r.sleepUntil {
		r.kickLocked()
	}
}

// kickForPostLocked is kickLocked for a completion just pushed to ready:
// while the Wait goroutine dispatches, it kicks nothing, since that Wait
// pops ready before it returns. Without it, every completion that a
// polled waiter's own look dispatched (an armed receive, a queued op it
// ran) wrote the poller's wake descriptor: a system call, a spurious
// readiness of the descriptor for Go's poller, and a read to drain it.
func (r *Reactor) kickForPostLocked() {
	if !r.dispatching {
		r.kickLocked()
	}
}

// kickLocked wakes the sleeping Wait, once per sleep.
func (r *Reactor) kickLocked() {
	if (r.sleeping || r.polling) && !r.kicked && !r.pollerClosed {
		r.kicked = true
		_ = r.poller.Wake()
	}
}

// finish posts op's final completion (see finishLocked).
func (r *Reactor) finish(op *backend.Op, c backend.Completion) {
	r.mu.Lock()
	r.finishLocked(op, c)
	r.mu.Unlock()
}

// finishLocked disarms op's timer, marks it no longer in flight and posts c
// as its final completion. Op must be out of every queue.
func (r *Reactor) finishLocked(op *backend.Op, c backend.Completion) {
	if i := heapIndex(op); i >= 0 {
		r.heap.remove(i)
	}
	op.Internal.State = 0
	r.postLocked(op, c)
}

// post posts a completion of op flagged More: op stays in flight.
func (r *Reactor) post(op *backend.Op, c backend.Completion) {
	c.Flags |= backend.More
	r.mu.Lock()
	r.postLocked(op, c)
	r.mu.Unlock()
}

func (r *Reactor) postLocked(op *backend.Op, c backend.Completion) {
	c.Op, c.UserData = op, op.UserData
	if c.Err != nil {
		c.FD = backend.InvalidFD
	} else if c.FD == 0 && op.Kind != backend.KindAccept {
		c.FD = backend.InvalidFD
	}
	r.ready.push(c)
	r.kickForPostLocked()
}

// Wake makes a blocked Wait return, or the next Wait.
func (r *Reactor) Wake() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed.Load() {
		return backend.ErrClosed
	}
	r.wakePending = true
	r.kickLocked()
	return nil
}

// Wait returns ready completions, waiting for them as timeout says.
func (r *Reactor) Wait(out []backend.Completion, timeout time.Duration) (int, error) {
	if len(out) == 0 {
		return 0, backend.NewError("wait", backend.ErrInvalid, errNoRoom)
	}
	if !r.waitBusy.CompareAndSwap(false, true) {
		return 0, backend.ErrBusy
	}
	defer r.waitBusy.Store(false)
	// The clock is read only where a deadline is in play: a Wait that
	// does not wait (timeout 0), the workers' look between two ticks,
	// needs none.
	deadline := int64(math.MaxInt64)
	if timeout > 0 {
		deadline = deadlineAfter(r.now(), timeout)
	}
	polled := false
	for {
		r.expire()
		r.mu.Lock()
		r.dispatching = false // the dispatch's posts, if any, are in ready now
		if n := r.ready.pop(out); n > 0 {
			r.wakePending = false
			r.mu.Unlock()
			return n, nil
		}
		if r.closed.Load() {
			r.mu.Unlock()
			return 0, backend.ErrClosed
		}
		// A Wake ends a wait, but a Wait that does not wait (timeout 0)
		// still looks at the poller once: its caller may be waiting in
		// Go's poller on the poller's descriptor (StartPolling), whose
		// readiness edge for these events it may have consumed already.
		if (r.wakePending && (polled || timeout != 0)) || (polled && r.pastDeadline(timeout, deadline)) {
			r.wakePending = false
			r.mu.Unlock()
			return 0, nil
		}
		until := deadline
		if len(r.heap) > 0 && r.heap[0].when < until {
			until = r.heap[0].when
		}
		d := time.Duration(-1) // no limit
		switch {
		case timeout == 0:
			d, until = 0, 0 // a look that does not block: no deadline is sooner
		case until != math.MaxInt64:
			d = time.Duration(max(until-r.now(), 0))
		}
		r.sleeping, r.kicked, r.sleepUntil = true, false, until
		r.mu.Unlock()
		n, err := r.poll(d)
		r.mu.Lock()
		r.sleeping = false
		if r.polling {
			// Back to the polled waiter's deadline. A deadline armed while
			// this Wait was in the poller was measured against this Wait's
			// (and made no kick); if it is sooner than the waiter's, kick
			// now, so that the waiter looks again and takes it.
			r.sleepUntil = r.pollUntil
			if len(r.heap) > 0 && r.heap[0].when < r.pollUntil {
				r.kickLocked()
			}
		}
		r.dispatching = err == nil // cleared at the top of the loop, which pops what dispatch posts
		r.mu.Unlock()
		if err != nil {
			return 0, err
		}
		r.dispatch(r.events[:n])
		polled = true
	}
}

// pastDeadline reports whether a Wait given timeout, which has looked at
// the poller, is done: at once for a timeout of 0, never without one, else
// once the clock has reached deadline.
func (r *Reactor) pastDeadline(timeout time.Duration, deadline int64) bool {
	switch {
	case timeout == 0:
		return true
	case timeout < 0:
		return false
	}
	return r.now() >= deadline
}

// poll runs the poller's Wait for up to d (negative: no limit).
func (r *Reactor) poll(d time.Duration) (int, error) {
	r.pollMu.Lock()
	defer r.pollMu.Unlock()
	if r.pollerClosed {
		return 0, nil // Close ran; the loop sees closed
	}
	r.waits.Add(1)
	n, err := r.poller.Wait(r.events, d)
	if err != nil {
		return 0, unixio.Error("wait", err)
	}
	return n, nil
}

// EnterCalls returns how many times the reactor waited in its poller
// (epoll_wait, kevent); see backend.EnterCounter. Any goroutine.
func (r *Reactor) EnterCalls() uint64 { return r.waits.Load() }

// expire fires the timers that are due: KindTimeout ops complete with
// ErrTimeout; linked timeouts take their op out of its queue, if it is
// still there, and complete it with ErrTimeout.
func (r *Reactor) expire() {
	r.mu.Lock()
	if len(r.heap) == 0 {
		r.mu.Unlock() // nothing armed: no clock to read, nothing expired
		return
	}
	now := r.now()
	for len(r.heap) > 0 && r.heap[0].when <= now {
		op := r.heap.remove(0)
		if op.Kind == backend.KindTimeout {
			r.finishLocked(op, backend.Completion{Err: backend.ErrTimeout})
		} else {
			r.expired = append(r.expired, op)
		}
	}
	r.mu.Unlock()
	for i, op := range r.expired {
		r.expired[i] = nil
		r.unqueue(op, backend.ErrTimeout)
	}
	r.expired = r.expired[:0]
}

// unqueue completes op with err if it still waits in its descriptor's
// queue, and reports whether it did.
func (r *Reactor) unqueue(op *backend.Op, err error) bool {
	fs := r.fds.get(int(op.FD), false)
	if fs == nil {
		return false
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	q := fs.queue(op)
	if q == nil || !q.contains(op) {
		return false
	}
	q.remove(op)
	r.finish(op, backend.Completion{Err: err})
	return true
}

// dispatch runs the queues of the descriptors in events.
func (r *Reactor) dispatch(events []Event) {
	for _, ev := range events {
		fs := r.fds.get(ev.FD, false)
		if fs == nil {
			continue
		}
		fs.mu.Lock()
		if ev.Ready&(backend.EventIn|backend.EventErr|backend.EventHup) != 0 {
			fs.drained = false
			if ev.PeerClosed || ev.Ready&(backend.EventErr|backend.EventHup) != 0 {
				fs.peerClosed = true
			}
			if fs.qs != nil {
				r.run(fs, ev.FD, &fs.qs.rq)
			}
			if fs.armed && fs.readEmpty() {
				r.runArmed(fs, ev.FD)
			}
		}
		if qs := fs.qs; qs != nil {
			if ev.Ready&(backend.EventOut|backend.EventErr|backend.EventHup) != 0 {
				r.run(fs, ev.FD, &qs.wq)
			}
			if !qs.pq.empty() {
				r.runPolls(fs, ev.FD)
			}
		}
		fs.mu.Unlock()
	}
}

// cancel completes target with reason if it is waiting, and returns nil, or
// ErrNotFound if it is not.
func (r *Reactor) cancel(target *backend.Op, reason error) error {
	switch target.Kind {
	case backend.KindTimeout:
		r.mu.Lock()
		defer r.mu.Unlock()
		if !inFlight(target) || heapIndex(target) < 0 {
			return backend.ErrNotFound
		}
		r.finishLocked(target, backend.Completion{Err: reason})
		return nil
	case backend.KindNop, backend.KindCancel, backend.KindClose:
		return backend.ErrNotFound
	}
	if target.FD > math.MaxInt32 || !r.unqueue(target, reason) {
		return backend.ErrNotFound
	}
	return nil
}

// cancelQueued completes every op waiting on fs with ErrCanceled.
// fs.mu is held.
func (r *Reactor) cancelQueued(fs *fdState) {
	if qs := fs.qs; qs != nil {
		for _, q := range [...]*opQueue{&qs.rq, &qs.wq, &qs.pq} {
			for op := q.head; op != nil; op = q.head {
				q.remove(op)
				r.finish(op, backend.Completion{Err: backend.ErrCanceled})
			}
		}
		fs.qs = nil
	}
	r.disarm(fs, backend.Completion{Err: backend.ErrCanceled})
}

// closeFD cancels the ops waiting on fd, deregisters and closes it.
func (r *Reactor) closeFD(fd int, name string) error {
	if fs := r.fds.get(fd, false); fs != nil {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		r.cancelQueued(fs)
		if fs.registered && !r.closed.Load() {
			_ = r.poller.Deregister(fd)
		}
		fs.reset()
	}
	return closeErr(name, fd)
}

// CloseFD closes fd synchronously, after cancelling any op still waiting on
// it, and forgets the reactor's state of it.
func (r *Reactor) CloseFD(fd backend.FD) error {
	if fd > math.MaxInt32 {
		return backend.NewError("close", backend.ErrInvalid, errBadFD)
	}
	return r.closeFD(int(fd), "close")
}

// Socket makes a socket (see unixio.Control) and clears any state left
// from an earlier descriptor with the same number.
func (r *Reactor) Socket(family backend.Family, typ backend.SockType) (backend.FD, error) {
	fd, err := r.Control.Socket(family, typ)
	if err == nil {
		r.forget(int(fd))
	}
	return fd, err
}

// OpenFile opens a file (see unixio.Control) and clears any state left from
// an earlier descriptor with the same number.
func (r *Reactor) OpenFile(path string, flags backend.OpenFlags, perm uint32) (backend.FD, error) {
	fd, err := r.Control.OpenFile(path, flags, perm)
	if err == nil {
		r.forget(int(fd))
	}
	return fd, err
}

// forget resets the record of a descriptor number the kernel has just
// handed out: an earlier descriptor with that number was closed, through
// the reactor or behind its back (then the kernel dropped its registration
// but the record still says registered).
func (r *Reactor) forget(fd int) {
	fs := r.fds.get(fd, false)
	if fs == nil {
		return
	}
	fs.mu.Lock()
	fs.reset()
	fs.tidy()
	// A receive armed on the earlier descriptor, closed behind the
	// reactor's back, ends.
	r.disarm(fs, backend.Completion{Err: backend.ErrCanceled})
	fs.mu.Unlock()
}

// Close cancels everything in flight and closes the poller once no Wait is
// inside it. The cancelled ops' completions stay readable through Wait.
func (r *Reactor) Close() error {
	r.mu.Lock()
	if r.closed.Load() {
		r.mu.Unlock()
		return backend.ErrClosed
	}
	r.closed.Store(true)
	r.mu.Unlock()

	r.fds.each(func(_ int, fs *fdState) {
		fs.mu.Lock()
		r.cancelQueued(fs)
		fs.reset()
		fs.mu.Unlock()
	})

	r.mu.Lock()
	for len(r.heap) > 0 {
		op := r.heap.remove(len(r.heap) - 1)
		r.finishLocked(op, backend.Completion{Err: backend.ErrCanceled})
	}
	r.kickLocked()
	r.mu.Unlock()

	r.pollMu.Lock()
	r.mu.Lock()
	r.pollerClosed = true
	r.mu.Unlock()
	err := r.poller.Close()
	r.pollMu.Unlock()
	return unixio.Error("close", err)
}
