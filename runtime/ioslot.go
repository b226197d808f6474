package runtime

import (
	"errors"
	"sync"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// ErrBusy is the error of a second read (or write, or accept) started on a
// socket while one is in flight: a socket has one op of each direction at a
// time. Split a stream to read and write from two tasks.
var ErrBusy = errors.New("runtime: another operation of this direction is in flight on the socket")

// ioSlot is one direction of a socket: the op in flight and who waits for
// it. Its ioOp lives in the socket, not in the future, for two reasons.
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
// A socket's read slot lives in its netFD for good. Its write slot does
// not: a connection that waits for its peer would hold one for nothing
// between its writes, so a write slot is given up (retired to writeSlots)
// as soon as its op ended and nothing lingers in it, and the next write of
// the socket takes one from writeSlots again (netFD.writeSlot). sock says
// whose a write slot is at the moment; a claimer that loaded netFD.wr and
// finds, under io.mu, that the slot went to another socket (or to none)
// loads netFD.wr again (claimStale).
//
// io.mu guards owner, lingering, sock and stash along with the ioOp's own
// state.
type ioSlot struct {
	io ioOp
	// owner is the future whose op is in the slot, nil when free.
	owner *ioFuture
	// sock is the socket whose write slot this is, nil while it is
	// retired (or in writeSlots). Unused by read slots.
	sock *netFD
	// stash holds bytes a read took over and could not deliver (the next
	// read's buffer was smaller), served first by the next read.
	stash []byte
	// lingering is set when the owner cancelled: the op is still in flight
	// or its result is stored, for the next claimer to take over.
	lingering bool
	// write marks a write slot (retired when idle). Immutable.
	write bool
}

// writeSlots holds retired write slots for the next write of any socket.
var writeSlots = sync.Pool{New: func() any { return &ioSlot{write: true} }}

// claimStatus is claim's answer.
type claimStatus uint8

const (
	claimed     claimStatus = iota // the slot is the caller's
	claimWait                      // a cancelled op still runs: wait, the waker is registered
	claimBusy                      // another live future owns the slot
	claimClosed                    // the socket was closed
	claimStale                     // a write slot retired since the caller loaded it: load netFD.wr again
)

// ioFuture is the part of every socket future that deals with its slot.
// Futures embed it by value; it is not copied after the first poll.
type ioFuture struct {
	slot      *ioSlot
	owns      bool
	submitted bool
	done      bool
}

// claim takes the slot for f. On claimed it returns what a cancelled
// predecessor left: the bytes of a read (stash first), or its completion
// (has reports whether there was one).
func (f *ioFuture) claim(cx *future.Context, slot *ioSlot, n *netFD) (data []byte, prev backend.Completion, has bool, st claimStatus) {
	o := &slot.io
	o.mu.Lock()
	defer o.mu.Unlock()
	if slot.write && slot.sock != n {
		return nil, prev, false, claimStale
	}
	f.slot = slot
	closed := n.closed.Load()
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
		slot.owner = nil
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
// disposed of here. slot is the socket's read slot, or what its
// writeSlot returned.
func (f *ioFuture) start(cx *future.Context, n *netFD, slot *ioSlot) (data []byte, prev backend.Completion, has, pending bool, err error) {
	data, prev, has, st := f.claim(cx, slot, n)
	for st == claimStale {
		data, prev, has, st = f.claim(cx, n.writeSlot(), n)
	}
	switch st {
	case claimWait:
		return nil, prev, false, true, nil
	case claimBusy:
		return nil, prev, false, false, ErrBusy
	case claimClosed:
		if has {
			n.ring.dispose(&prev)
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
	if err := f.slot.io.submit(cx, n.ring); err != nil {
		f.release()
		return err
	}
	return nil
}

// wait returns the op's completion once it came, and frees the slot.
func (f *ioFuture) wait(cx *future.Context) (backend.Completion, bool) {
	c, ok := f.slot.io.poll(cx)
	if ok {
		f.release()
	}
	return c, ok
}

// release frees the slot (the caller finished with it). A write slot with
// nothing left in it is retired: detached from its socket and put back in
// writeSlots.
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
	retire := s.write && s.sock != nil && s.owner == nil && !s.lingering && o.state == ioIdle
	if retire {
		s.sock.wr.CompareAndSwap(s, nil) // pairs with writeSlot's load; a claimer that loaded s sees sock nil
		s.sock = nil
		o.op, o.ring = backend.Op{}, nil // drop the buffers the op referenced
	}
	o.mu.Unlock()
	if retire {
		writeSlots.Put(s)
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
// closed: an accepted connection is closed. Called by netFD.close after the
// close op was submitted; a lingering op still in flight is disposed of by
// the next claim (which sees the socket closed) or never needs to be (its
// completion, ErrCanceled by the close, carries nothing). A write slot
// retired in the meantime is left alone.
func (s *ioSlot) closed(n *netFD) {
	r := n.ring
	o := &s.io
	o.mu.Lock()
	if s.write && s.sock != n {
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
	}
	s.stash = nil
	o.mu.Unlock()
	if take {
		r.dispose(&c)
	}
}

// takeData returns the bytes a cancelled read's completion carries: in the
// read's own buffer, or (a pooled read) copied out of the pool buffer, which
// goes back to the pool at once.
func takeData(r *ioRing, c *backend.Completion) []byte {
	if c.Err != nil || c.Op == nil || c.N <= 0 {
		return nil
	}
	if c.Flags&backend.HasBuffer != 0 {
		data := append([]byte(nil), r.b.Buffer(c.Op.BufferGroup, c.BufferID)[:c.N]...)
		_ = r.b.ReleaseBuffer(c.Op.BufferGroup, c.BufferID)
		return data
	}
	if len(c.Op.Buf) >= c.N {
		return c.Op.Buf[:c.N]
	}
	return nil
}
