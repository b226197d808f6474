//go:build linux

package uring

import (
	"errors"
	"syscall"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
	"golang.org/x/sys/unix"
)

// Armed receives (backend.RecvArmer): a RECV with IOSQE_BUFFER_SELECT whose
// user_data is tagArm and a slot of b.arms, the 24-byte record of the
// armed receive (no slab record, no Op). The kernel picks the buffer from
// the group's ring when data arrives. Served where the kernel selects
// buffers (a buffer ring or PROVIDE_BUFFERS); with the emulated selection
// ArmRecv returns ErrUnsupported and the caller submits a SelectBuffer
// recv op instead.

var (
	errArmed  = errors.New("a receive is already armed on the descriptor")
	errArmKey = errors.New("key wider than backend.ArmKeyBits")
	errArmEmu = errors.New("the kernel does not select buffers")
	errArmFD  = errors.New("descriptor beyond the per-descriptor lists")
)

var _ backend.RecvArmer = (*Backend)(nil)

// armRec is an armed receive. Guarded by the backend's mu, as is the
// table around it.
type armRec struct {
	key   uint64
	fd    int32
	gen   uint32 // never 0 while armed; 0 marks a free slot
	group uint16
}

// armTable holds the armed receives: recs by slot, free slots, and by
// descriptor the slot+1 of the receive armed on it (0: none), so that a
// close or CancelRecv finds it.
type armTable struct {
	recs  []armRec
	free  []int32
	byFD  []int32
	live  int
	nextG uint32
}

// ArmRecv arms a receive on fd into a buffer of group (see
// backend.RecvArmer).
func (b *Backend) ArmRecv(fd backend.FD, group uint16, key uint64) error {
	if key>>backend.ArmKeyBits != 0 {
		return backend.NewError("arm recv", backend.ErrInvalid, errArmKey)
	}
	if fd >= maxListedFD {
		return backend.NewError("arm recv", backend.ErrUnsupported, errArmFD)
	}
	g := b.group(group)
	if g == nil {
		return backend.NewError("arm recv", backend.ErrInvalid, errNoBuffer)
	}
	if g.mode == bufEmulate {
		return backend.NewError("arm recv", backend.ErrUnsupported, errArmEmu)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing {
		return backend.ErrClosed
	}
	t := &b.arms
	if int(fd) < len(t.byFD) && t.byFD[fd] != 0 {
		return backend.NewError("arm recv", backend.ErrInvalid, errArmed)
	}
	if err := b.reserve(1); err != nil {
		return err
	}
	slot := t.alloc()
	rec := &t.recs[slot]
	rec.key, rec.fd, rec.group = key, int32(fd), group
	t.setFD(int(fd), slot+1)
	s := b.push(token(tagArm, rec.gen, slot))
	s.Opcode, s.FD, s.Flags, s.BufIndex = opRecv, int32(fd), sqeBufferSelect, group
	if b.pollFirst {
		s.Ioprio |= pollFirst
	}
	b.r.publish()
	if b.pushesAtOnce() {
		return b.r.submit()
	}
	return nil
}

// CancelRecv asks the kernel to cancel fd's armed receive (see
// backend.RecvArmer).
func (b *Backend) CancelRecv(fd backend.FD) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing || fd >= maxListedFD || !b.cancelArmed(int32(fd)) {
		return backend.ErrNotFound
	}
	b.r.publish()
	if b.pushesAtOnce() {
		return b.r.submit()
	}
	return nil
}

// cancelArmed queues the cancel of the receive armed on fd, if any, and
// forgets it as fd's (a new descriptor with the number may arm its own;
// the old one's CQE still finds its record). Called with mu held.
func (b *Backend) cancelArmed(fd int32) bool {
	t := &b.arms
	if fd < 0 || int(fd) >= len(t.byFD) || t.byFD[fd] == 0 {
		return false
	}
	slot := t.byFD[fd] - 1
	t.byFD[fd] = 0
	s := b.pushInternal(token(tagCancel, 0, 0))
	s.Opcode, s.FD, s.Addr = opAsyncCancel, -1, token(tagArm, t.recs[slot].gen, slot)
	return true
}

// armCQE delivers the completion of an armed receive and frees its
// record. Called with cqMu and mu held.
func (b *Backend) armCQE(gen uint32, slot int32, c cqe) {
	t := &b.arms
	if slot < 0 || int(slot) >= len(t.recs) || t.recs[slot].gen != gen {
		return // cannot happen: the record lives until its CQE
	}
	rec := t.recs[slot]
	if int(rec.fd) < len(t.byFD) && t.byFD[rec.fd] == slot+1 {
		t.byFD[rec.fd] = 0
	}
	t.release(slot)
	out := Completion{UserData: rec.key, FD: backend.InvalidFD}
	hasBuf := c.Flags&cqeFBuffer != 0
	bid := uint16(c.Flags >> 16)
	switch {
	case c.Res < 0:
		if hasBuf {
			b.putBack(rec.group, bid)
		}
		errno := syscall.Errno(-c.Res)
		switch {
		case errno == unix.ENOBUFS:
			out.Err = backend.NewError("recv", backend.ErrNoBuffers, errno)
		case errno == unix.ECANCELED || interrupted(errno): // a cancel of a request running in io-wq
			out.Err = backend.ErrCanceled
		default:
			out.Err = unixio.ErrnoError("recv", errno)
		}
	case c.Res == 0:
		if hasBuf {
			b.putBack(rec.group, bid) // end of stream carries no buffer
		}
	default:
		out.N = int(c.Res)
		if hasBuf {
			b.handOut(rec.group, bid)
			out.Flags |= backend.HasBuffer
			out.BufferID = bid
		}
	}
	b.emit(out)
}

// alloc takes a free slot, its generation moved on.
func (t *armTable) alloc() int32 {
	var slot int32
	if n := len(t.free); n > 0 {
		slot = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		t.recs = append(t.recs, armRec{})
		slot = int32(len(t.recs) - 1)
	}
	t.nextG = (t.nextG + 1) & genMask
	if t.nextG == 0 {
		t.nextG = 1
	}
	t.recs[slot].gen = t.nextG
	t.live++
	return slot
}

func (t *armTable) release(slot int32) {
	t.recs[slot] = armRec{}
	t.free = append(t.free, slot)
	t.live--
}

// setFD records v (slot+1) as the receive armed on fd.
func (t *armTable) setFD(fd int, v int32) {
	if fd >= len(t.byFD) {
		n := max(fd+1, 2*len(t.byFD), 64)
		byFD := make([]int32, n)
		copy(byFD, t.byFD)
		t.byFD = byFD
	}
	t.byFD[fd] = v
}
