package blitz

// Armed receives: how a pooled read waits without an op record.

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/internal/contain"
	"github.com/blitz-go/blitz/waker"
)

// A pooled read (ReadPooled) on a backend that arms receives
// (backend.RecvArmer: io_uring where the kernel selects buffers, epoll,
// kqueue) holds no op: the backend keeps a few bytes for the armed
// receive, the ring's armTable maps its key to the socket, and the socket's
// recvArm (in the netFD) holds the waiter and, once the
// completion came, its result. So a connection waiting for its next request
// costs its task, its socket and these records, and no buffer: the data
// lands in a buffer of the read pool picked when it arrives.
//
// A cancelled pooled read leaves its receive armed, or its result stored,
// for the next read of the stream (abandoned): a ReadPooled takes it over,
// a Read copies its data (the rest goes to the read slot's stash). A
// pooled read with a read timeout, or while the read slot is busy (a
// cancelled Read lingers in it, or left bytes), reads through the slot as
// before; so does every read where the backend cannot arm.

// armState is where a recvArm is.
type armState uint8

const (
	armIdle  armState = iota // nothing armed, nothing stored
	armArmed                 // armed in the backend: the completion is to come
	armDone                  // the completion is stored in res, not yet taken
)

// recvArm is a socket's armed receive. mu guards every field.
type recvArm struct {
	mu sync.Mutex
	// wk is the waker of the owner, or of a Read waiting to take over an
	// abandoned receive.
	wk waker.Waker
	// res is the stored completion (armDone), its fields inline so that
	// state fits in their padding (see result, setResult).
	err error
	n   int32
	id  uint16
	// bits holds armBuf, the stored completion's buffer flag, and
	// armOwned: a pooled read owns the receive, the one whose f.armed is
	// set (an abandoned receive, still armed or its result stored, waits
	// unowned for the next read). A flag, not the owner's pointer: only
	// the owner itself clears it, and it knows it owns the receive by its
	// own f.armed. So the recvArm is 48 bytes.
	bits  uint8
	state armState
}

// The flags of recvArm.bits.
const (
	armBuf   uint8 = 1 << iota // the stored data is in pool buffer id
	armOwned                   // a pooled read owns the receive
)

// owned reports whether a pooled read owns the receive. a.mu must be held.
func (a *recvArm) owned() bool { return a.bits&armOwned != 0 }

// setOwned sets or clears armOwned. a.mu must be held.
func (a *recvArm) setOwned(on bool) {
	if on {
		a.bits |= armOwned
	} else {
		a.bits &^= armOwned
	}
}

// result returns the stored completion. a.mu must be held.
func (a *recvArm) result() armResult {
	return armResult{err: a.err, n: a.n, id: a.id, buf: a.bits&armBuf != 0}
}

// setResult stores r as the completion (the zero armResult clears it).
// a.mu must be held.
func (a *recvArm) setResult(r armResult) {
	a.err, a.n, a.id = r.err, r.n, r.id
	a.bits &^= armBuf
	if r.buf {
		a.bits |= armBuf
	}
}

// armResult is an armed receive's completion.
type armResult struct {
	err error
	n   int32
	id  uint16
	buf bool // the data is in pool buffer id
}

// armTable maps the keys of a ring's armed receives to their sockets. A
// key is the slot and its generation, so that a late completion of a slot
// reused since finds nothing. mu guards every field. The slots live in
// pages of armPageSize made as needed (no doubling slack): slot i is
// pages[i>>armPageBits] at i&(armPageSize-1), its socket nil while free;
// n slots have been made; free lists the freed ones.
type armTable struct {
	mu    sync.Mutex
	pages []*armPage
	n     uint32
	free  []uint32
	// off is set when the backend cannot arm (not a RecvArmer, or it
	// answered ErrUnsupported): pooled reads go through the slot.
	off    bool
	armer  backend.RecvArmer
	probed bool
}

const (
	armPageBits = 10
	armPageSize = 1 << armPageBits
)

// armPage is a page of armTable slots: each one's socket and generation.
type armPage struct {
	socks [armPageSize]*netFD
	gens  [armPageSize]uint32
}

const armGenMask = 1<<(backend.ArmKeyBits-32) - 1

// add gives n a key.
func (t *armTable) add(n *netFD) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	var i uint32
	if k := len(t.free); k > 0 {
		i = t.free[k-1]
		t.free = t.free[:k-1]
	} else {
		i = t.n
		if int(i>>armPageBits) == len(t.pages) {
			t.pages = append(t.pages, new(armPage))
		}
		t.n++
	}
	p, j := t.pages[i>>armPageBits], i&(armPageSize-1)
	p.socks[j] = n
	p.gens[j] = (p.gens[j] + 1) & armGenMask
	return uint64(p.gens[j])<<32 | uint64(i)
}

// take removes key and returns its socket, nil if the key is stale.
func (t *armTable) take(key uint64) *netFD {
	i, gen := uint32(key), uint32(key>>32)
	t.mu.Lock()
	defer t.mu.Unlock()
	if i >= t.n {
		return nil
	}
	p, j := t.pages[i>>armPageBits], i&(armPageSize-1)
	n := p.socks[j]
	if p.gens[j] != gen || n == nil {
		return nil
	}
	p.socks[j] = nil
	t.free = append(t.free, i)
	return n
}

// armer returns r's RecvArmer, nil when pooled reads cannot arm on r.
func (r *ioRing) armer() backend.RecvArmer {
	t := &r.arms
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.probed {
		t.probed = true
		t.armer, _ = r.Backend().(backend.RecvArmer)
		t.off = t.armer == nil || armDisabled.Load()
	}
	if t.off {
		return nil
	}
	return t.armer
}

// armDisabled makes every ring refuse to arm, so that tests cover the
// pooled read through the slot on a backend that arms.
var armDisabled atomic.Bool

// arm arms a receive on n into the read pool, counted in flight as an op
// is (see iodriver.Ring.Submit). An ErrUnsupported turns arming off for the ring.
// Called by the pooled read that owns n.arm, with n in use.
func (r *ioRing) arm(a backend.RecvArmer, n *netFD) error {
	key := r.arms.add(n)
	r.StartArmed()
	if err := a.ArmRecv(n.fd, poolGroup, key); err != nil {
		r.UnstartArmed()
		r.arms.take(key)
		if errors.Is(err, backend.ErrUnsupported) {
			t := &r.arms
			t.mu.Lock()
			t.off = true
			t.mu.Unlock()
		}
		return err
	}
	return nil
}

// armComplete is the driver's delivery of an armed receive's completion:
// stored for the owner, whom it wakes, or for the next read; disposed of
// when the socket was closed and nobody waits. Called by the I/O driver's
// collect (through the delivery newIORings set), with the Context of the
// worker that collected it.
func (r *ioRing) armComplete(cx *future.Context, c *backend.Completion) {
	n := r.arms.take(c.UserData)
	if n == nil { // cannot happen: a key lives until its completion
		r.ReleaseArmed(c)
		return
	}
	a := &n.arm
	a.mu.Lock()
	if a.state != armArmed || (!a.owned() && n.isClosed()) {
		a.state = armIdle
		a.mu.Unlock()
		r.ReleaseArmed(c)
		return
	}
	a.setResult(armResult{err: c.Err, n: int32(c.N), id: c.BufferID, buf: c.Flags&backend.HasBuffer != 0})
	a.state = armDone
	wk := a.wk
	a.wk = waker.Waker{}
	a.mu.Unlock()
	if !wk.IsZero() {
		contain.Wake(cx, wk, contain.OfIODriver)
	}
}

// armClosed disposes of an abandoned armed receive's stored result once the
// socket is closed (one still armed is cancelled by the close op, and its
// completion disposed of by armComplete). Called by netFD.close.
func (n *netFD) armClosed() {
	a := &n.arm
	a.mu.Lock()
	var res armResult
	take := a.state == armDone && !a.owned()
	if take {
		res, a.state = a.result(), armIdle
		a.setResult(armResult{})
	}
	a.mu.Unlock()
	if take && res.buf {
		_ = n.ring.Backend().ReleaseBuffer(poolGroup, res.id)
	}
}

// takeArmed is how a Read meets an armed receive: with none, or nothing
// left of one, it returns (nil, false, nil) and the Read goes on; an
// abandoned one still armed makes the Read wait for it (pending); its
// result is returned as data (copied out of the pool buffer, which goes
// back) or as the error or end of stream it ended with (eof). A pooled
// read in flight makes it ErrBusy. Called by the Read that holds the read
// slot.
func (n *netFD) takeArmed(cx *future.Context) (data []byte, eof, pending bool, err error) {
	a := &n.arm
	a.mu.Lock()
	if a.state == armIdle {
		a.mu.Unlock()
		return nil, false, false, nil
	}
	if a.owned() {
		a.mu.Unlock()
		return nil, false, false, ErrBusy
	}
	if a.state == armArmed {
		if wk := cx.Waker(); !a.wk.WillWake(wk) {
			a.wk = wk
		}
		a.mu.Unlock()
		return nil, false, true, nil
	}
	res := a.result()
	a.setResult(armResult{})
	a.state = armIdle
	a.mu.Unlock()
	switch {
	case res.buf:
		data = append([]byte(nil), n.ring.Backend().Buffer(poolGroup, res.id)[:res.n]...)
		_ = n.ring.Backend().ReleaseBuffer(poolGroup, res.id)
		return data, false, false, nil
	case errors.Is(res.err, backend.ErrCanceled) || errors.Is(res.err, backend.ErrNoBuffers):
		return nil, false, false, nil // nothing taken from the socket
	case res.err != nil:
		return nil, false, false, res.err
	}
	return nil, true, false, nil
}

// pollArmed is ReadPooled through an armed receive. handled is false when
// the read must go through the slot instead (no arming on this ring, a
// read timeout, the slot busy); then nothing was changed.
func (r *ReadPooledFuture) pollArmed(cx *future.Context, size int) (v future.Result[PooledBuf], ready, handled bool) {
	n := r.n
	ring := n.ring
	a := &n.arm
again:
	a.mu.Lock()
	if !r.f.armed {
		switch {
		case a.owned():
			a.mu.Unlock()
			r.f.done = true
			return future.Fail[PooledBuf](n.opError("read", ErrBusy)), true, true
		case a.state == armIdle:
			armer := ring.armer()
			if armer == nil || n.readTimeout() != 0 || !n.rd.idle() {
				a.mu.Unlock()
				return v, false, false
			}
			if n.isClosed() || !n.use() {
				a.mu.Unlock()
				r.f.done = true
				return future.Fail[PooledBuf](n.opError("read", ErrClosed)), true, true
			}
			a.state, a.wk = armArmed, cx.Waker()
			a.setOwned(true)
			r.f.armed = true
			err := ring.arm(armer, n)
			n.done()
			if err != nil {
				a.state, a.wk = armIdle, waker.Waker{}
				a.setOwned(false)
				r.f.armed = false
				a.mu.Unlock()
				if errors.Is(err, backend.ErrUnsupported) {
					return v, false, false
				}
				r.f.done = true
				return future.Fail[PooledBuf](n.opError("read", err)), true, true
			}
			a.mu.Unlock()
			cx.Waiting(ioWaitKinds[backend.KindRecv], uint64(n.fd)) // for a task dump, as ioFuture.wait
			return v, false, true
		}
		// An abandoned receive, armed or done: this read takes it over.
		a.setOwned(true)
		r.f.armed = true
	}
	if a.state == armArmed {
		if wk := cx.Waker(); !a.wk.WillWake(wk) {
			a.wk = wk
		}
		a.mu.Unlock()
		cx.Waiting(ioWaitKinds[backend.KindRecv], uint64(n.fd))
		return v, false, true
	}
	res := a.result()
	a.setResult(armResult{})
	a.state, a.wk = armIdle, waker.Waker{}
	a.setOwned(false)
	a.mu.Unlock()
	r.f.armed = false
	switch {
	case errors.Is(res.err, backend.ErrCanceled) && !n.isClosed():
		// The receive a cancelled read left was cancelled before any
		// data came: arm again.
		goto again
	case errors.Is(res.err, backend.ErrNoBuffers):
		// The pool is empty: arm again once (the backend grew the pool if
		// it could), then read into a buffer of this read's own, through
		// the slot (see noBuffers).
		if r.noBuffers(size) {
			goto again
		}
		return v, false, false
	case res.err != nil:
		r.f.done = true
		return future.Fail[PooledBuf](n.opError("read", res.err)), true, true
	case !res.buf:
		r.f.done = true
		return future.Result[PooledBuf]{Err: io.EOF}, true, true
	}
	r.f.done = true
	return future.Ok(pooledBuf(ring.Backend().Buffer(poolGroup, res.id)[:res.n], ring, res.id)), true, true
}

// cancelArmed gives up r's armed receive: the backend is asked to end it,
// and its result, data or not, is left for the next read.
func (r *ReadPooledFuture) cancelArmed() {
	n := r.n
	a := &n.arm
	if !r.f.armed {
		return
	}
	a.mu.Lock()
	a.wk = waker.Waker{}
	a.setOwned(false)
	armed := a.state == armArmed
	a.mu.Unlock()
	r.f.armed = false
	if armed {
		if armer := n.ring.armer(); armer != nil && n.use() {
			_ = armer.CancelRecv(n.fd)
			n.done()
		}
	}
}
