package blitz

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/internal/iodriver"
	"github.com/blitz-go/blitz/waker"
)

// ErrBusy is the error of a second read (or write, or accept) started on a
// socket while one is in flight: a socket has one op of each direction at a
// time. Split a stream to read and write from two tasks.
var ErrBusy = errors.New("blitz: another operation of this direction is in flight on the socket")

// ioSlot is one direction of a socket: the op in flight and who waits for
// it. Its ioOp lives with the socket, not in the future, for two reasons.
// Memory the backend points into must not be reused while the op is in
// flight, and a future's memory is the user's to reuse (a state machine
// assigns a new ReadFuture to the same field); and a cancelled op must not
// lose what it got: a cancelled read's completion may carry data the kernel
// already took from the socket, a cancelled accept a connection. So a
// cancelled op lingers in its slot, and the next op of that direction first
// waits for it and takes over its result: the data is delivered to the next
// read, the connection to the next accept. Nothing is lost, and the ops
// stay in order.
//
// The ioSlot itself is a handle of one word in the socket: the op record
// (slotState) is attached to it while an op uses it, lingers in it or
// left bytes in it, and given back to slotStates as soon as none does, so
// that an idle connection holds no op record for the direction it does not
// use, and none for a read it waits for through an armed receive (see
// recvArm). A claimer that loaded the handle's state finds, under the
// state's io.mu, whether it still serves this handle (home); if it was
// given up meanwhile (and perhaps taken by another socket), the claimer
// loads the handle again (claimStale).
type ioSlot struct {
	// cur is the attached state, nil when none: set from nil by get, back
	// to nil by retire, each under the state's io.mu.
	cur atomic.Pointer[slotState]
}

// slotState is an ioSlot's op record while attached. io.mu guards owner,
// home, lingering and stash along with the ioOp's own state.
type slotState struct {
	io ioOp
	// owner is the future whose op is in the slot, nil when free.
	owner *ioFuture
	// home is the handle the state is attached to, nil once given up.
	home *ioSlot
	// stash holds bytes a read took over and could not deliver (the next
	// read's buffer was smaller), served first by the next read.
	stash []byte
	// lingering is set when the owner cancelled: the op is still in flight
	// or its result is stored, for the next claimer to take over.
	lingering bool
}

// slotStates holds the op records no socket holds.
var slotStates = sync.Pool{New: func() any { return new(slotState) }}

// get returns the handle's state, attaching one from slotStates if none
// is. The state may be given up before the caller locks it: claim checks
// home.
func (s *ioSlot) get() *slotState {
	for {
		if st := s.cur.Load(); st != nil { // load: pairs with retire's CAS and another get's
			return st
		}
		st := slotStates.Get().(*slotState)
		st.io.mu.Lock()
		st.home = s
		st.io.mu.Unlock()
		if s.cur.CompareAndSwap(nil, st) { // publish: pairs with the load above
			return st
		}
		st.io.mu.Lock()
		st.home = nil
		st.io.mu.Unlock()
		slotStates.Put(st)
	}
}

// idle reports whether the handle has no state attached: no op in flight
// or lingering, no bytes left.
func (s *ioSlot) idle() bool { return s.cur.Load() == nil }

// retireLocked gives st up if nothing uses it: no owner, nothing lingering
// or stored, no bytes left. It reports whether it did; the caller puts st
// back in slotStates after unlocking. Called with st.io.mu held.
func (st *slotState) retireLocked() bool {
	if st.home == nil || st.owner != nil || st.lingering || st.io.state != ioIdle || len(st.stash) > 0 {
		return false
	}
	st.home.cur.CompareAndSwap(st, nil) // pairs with get's load; a claimer that loaded st sees home nil
	st.home = nil
	st.io.op, st.io.ring = backend.Op{}, nil // drop what the op referenced
	return true
}

// claimStatus is claim's answer.
type claimStatus uint8

const (
	claimed     claimStatus = iota // the slot is the caller's
	claimWait                      // a cancelled op still runs: wait, the waker is registered
	claimBusy                      // another live future owns the slot
	claimClosed                    // the socket was closed
	claimStale                     // the state was given up since the caller loaded it: load the handle again
)

// ioFuture is the part of every socket future that deals with its slot.
// Futures embed it by value; it is not copied after the first poll.
type ioFuture struct {
	slot      *slotState
	owns      bool
	submitted bool
	done      bool
	// armed is ReadPooledFuture's: the read owns the socket's armed
	// receive (see recvArm). It lives here, in the padding of this
	// struct, so that a pending pooled read fits 32 bytes; no other
	// future uses it, and nothing in this file touches it.
	armed bool
	// finished is WriteAllFuture's: the whole write completed, failed or
	// was cancelled (its f is reset between sends, and finished set only
	// at the end). In the padding for the same reason as armed: a
	// WriteAllFuture fits 48 bytes.
	finished bool
	// fast is ReadFuture's and WriteFuture's: the first attempt goes to
	// the backend's fast path (the net.Conn adapter's reads and writes).
	// In the padding too: a ReadFuture and a WriteFuture fit 48 bytes.
	fast bool
	// starved is ReadPooledFuture's: the read found the pool empty once
	// and tried the pool again (see ReadPooledFuture.noBuffers). In the
	// padding too.
	starved bool
	// tried is WriteFuture's: PollWrite's send without a future found the
	// socket full, so the first poll goes straight to the op. In the
	// padding too.
	tried bool
}

// claim takes the slot for f. On claimed it returns what a cancelled
// predecessor left: the bytes of a read (stash first), or its completion
// (has reports whether there was one).
func (f *ioFuture) claim(cx *future.Context, h *ioSlot, n *netFD) (data []byte, prev backend.Completion, has bool, st claimStatus) {
	slot := h.get()
	o := &slot.io
	o.mu.Lock()
	defer o.mu.Unlock()
	if slot.home != h {
		return nil, prev, false, claimStale
	}
	f.slot = slot
	closed := n.isClosed()
	if slot.owner != nil && !slot.lingering {
		if slot.owner == f {
			return nil, prev, false, claimed
		}
		return nil, prev, false, claimBusy
	}
	if slot.lingering {
		switch o.state {
		case ioInFlight:
			if wk := cx.Waker(); !o.wk.WillWake(wk) {
				o.wk = wk
			}
			return nil, prev, false, claimWait
		case ioDone:
			prev, has = o.res, true
			o.res = backend.Completion{}
			o.state, o.wk = ioIdle, waker.Waker{}
			data = takeData(o.ring, &prev)
		}
		slot.lingering = false
	}
	if closed {
		slot.owner = nil // given up by the socket's close (closed)
		return nil, prev, has, claimClosed
	}
	slot.owner, f.owns = f, true
	if len(slot.stash) > 0 && data == nil {
		data, slot.stash = slot.stash, nil
	}
	return data, prev, has, claimed
}

// start claims the slot for an op and reports how the future goes on:
// pending (wait for a cancelled predecessor), or an error to complete with
// (ErrBusy, ErrClosed), or ready with the predecessor's leftovers. A
// predecessor's completion that the socket's close made useless is
// disposed of here. slot is the socket's read slot (&n.rd) or write slot
// (n.writeSlot()).
func (f *ioFuture) start(cx *future.Context, n *netFD, slot *ioSlot) (data []byte, prev backend.Completion, has, pending bool, err error) {
	data, prev, has, st := f.claim(cx, slot, n)
	for st == claimStale {
		data, prev, has, st = f.claim(cx, slot, n)
	}
	switch st {
	case claimWait:
		return nil, prev, false, true, nil
	case claimBusy:
		return nil, prev, false, false, ErrBusy
	case claimClosed:
		if has {
			n.ring.Dispose(&prev)
		}
		return nil, prev, false, false, ErrClosed
	}
	return data, prev, has, false, nil
}

// keep stores the part of data the caller could not deliver, for the next
// read. Called by the slot's owner.
func (f *ioFuture) keep(rest []byte) {
	if len(rest) == 0 {
		return
	}
	o := &f.slot.io
	o.mu.Lock()
	f.slot.stash = append(f.slot.stash[:0:0], rest...)
	o.mu.Unlock()
}

// submit starts op in the slot. The socket is held in use until the
// backend has the op, so that a concurrent Close cannot release the
// descriptor number in between (see netFD.users).
func (f *ioFuture) submit(cx *future.Context, n *netFD, op backend.Op) error {
	if !n.use() {
		f.release()
		return ErrClosed
	}
	defer n.done()
	f.slot.io.op = op
	f.submitted = true
	if err := f.slot.io.submit(cx, n.ring.Ring); err != nil {
		f.release()
		return err
	}
	return nil
}

// wait returns the op's completion once it came, and frees the slot.
func (f *ioFuture) wait(cx *future.Context) (backend.Completion, bool) {
	c, ok := f.slot.io.poll(cx) // records the wait for a task dump when not ok
	if ok {
		f.release()
	}
	return c, ok
}

// release frees the slot (the caller finished with it). A state with
// nothing left in it is given up (see ioSlot).
func (f *ioFuture) release() {
	if !f.owns {
		return
	}
	s := f.slot
	o := &s.io
	o.mu.Lock()
	if s.owner == f {
		s.owner = nil
	}
	retire := s.retireLocked()
	o.mu.Unlock()
	if retire {
		slotStates.Put(s)
	}
	f.owns, f.submitted, f.done = false, false, true
}

// cancel gives the op up: if it is in flight, the backend is asked to
// cancel it and it lingers in the slot for the next op to take over.
func (f *ioFuture) cancel() {
	if f.owns && f.submitted {
		o := &f.slot.io
		o.mu.Lock()
		f.slot.lingering = true
		o.wk = waker.Waker{}
		inFlight := o.state == ioInFlight
		o.mu.Unlock()
		if inFlight {
			o.requestCancel()
		}
		f.owns, f.submitted = false, false
	} else {
		f.release()
	}
	f.done = true
}

// checkPoll panics on a poll after completion or cancel, as every future of
// this module does.
func (f *ioFuture) checkPoll() {
	if f.done {
		panic(future.ErrPolledAfterCompletion)
	}
}

// closed disposes of what a lingering op left once the socket n is
// closed: an accepted connection is closed, a read's bytes dropped. Called
// by netFD.close after the close op was submitted. A lingering op still in
// flight is abandoned: its completion is disposed of on arrival, since no
// claim will come for it. It may carry something: a cancelled accept that
// took a connection arriving before the close reached the backend, which
// would otherwise stay open with no one to serve or close it.
func (h *ioSlot) closed(n *netFD) {
	s := h.cur.Load()
	if s == nil {
		return
	}
	r := n.ring
	o := &s.io
	o.mu.Lock()
	if s.home != h {
		o.mu.Unlock()
		return
	}
	var c backend.Completion
	take := s.lingering && o.state == ioDone
	if take {
		c = o.res
		o.res = backend.Completion{}
		o.state = ioIdle
		s.lingering = false
	} else if s.lingering && o.state == ioInFlight {
		o.state, o.wk = ioAbandoned, waker.Waker{} // Complete disposes of it
		s.lingering = false
	}
	s.stash = nil
	retire := s.retireLocked()
	o.mu.Unlock()
	if retire {
		slotStates.Put(s)
	}
	if take {
		r.Dispose(&c)
	}
}

// takeData returns the bytes a cancelled read's completion carries: in the
// read's own buffer, or (a pooled read) copied out of the pool buffer, which
// goes back to the pool at once.
func takeData(r *iodriver.Ring, c *backend.Completion) []byte {
	if c.Err != nil || c.Op == nil || c.N <= 0 {
		return nil
	}
	if c.Flags&backend.HasBuffer != 0 {
		data := append([]byte(nil), r.Backend().Buffer(c.Op.BufferGroup, c.BufferID)[:c.N]...)
		_ = r.Backend().ReleaseBuffer(c.Op.BufferGroup, c.BufferID)
		return data
	}
	if len(c.Op.Buf) >= c.N {
		return c.Op.Buf[:c.N]
	}
	return nil
}
