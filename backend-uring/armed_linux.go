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
// user_data is tagArm and a slot of b.arms, the 16-byte record of the
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

// armRec is an armed receive, 16 bytes: its key, and its descriptor
// (below maxListedFD, 24 bits), generation (24 bits, never 0 while armed;
// 0 marks a free slot, whose key then holds the slot+1 of the next free
// one) and group packed in one word. Guarded by the backend's mu, as is
// the table around it.
type armRec struct {
	key uint64
	x   uint64 // fd<<40 | gen<<16 | group
}

func packArm(fd int32, gen uint32, group uint16) uint64 {
	return uint64(fd)<<40 | uint64(gen&genMask)<<16 | uint64(group)
}

func (r *armRec) fd() int32     { return int32(r.x >> 40) }
func (r *armRec) gen() uint32   { return uint32(r.x>>16) & genMask }
func (r *armRec) group() uint16 { return uint16(r.x) }

// armTable holds the armed receives: recs by slot (paged, n slots made),
// the free slots linked through their records (freeHead: slot+1 of the
// first, 0 if none), and by descriptor the slot+1 of the receive armed on
// it (0: none), so that a close or CancelRecv finds it.
type armTable struct {
	recs     []*[pageSize]armRec
	n        int32
	freeHead int32
	byFD     fdIndex
	live     int
	nextG    uint32
}

// rec returns slot's record (slot < t.n).
func (t *armTable) rec(slot int32) *armRec {
	return &t.recs[slot>>pageBits][slot&(pageSize-1)]
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
	if t.byFD.get(int(fd)) != 0 {
		return backend.NewError("arm recv", backend.ErrInvalid, errArmed)
	}
	if err := b.reserve(1); err != nil {
		return err
	}
	slot, gen := t.alloc()
	rec := t.rec(slot)
	rec.key, rec.x = key, packArm(int32(fd), gen, group)
	t.byFD.set(int(fd), slot+1)
	s := b.push(token(tagArm, gen, slot))
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
	slot := t.byFD.get(int(fd)) - 1
	if slot < 0 {
		return false
	}
	t.byFD.set(int(fd), 0)
	s := b.pushInternal(token(tagCancel, 0, 0))
	s.Opcode, s.FD, s.Addr = opAsyncCancel, -1, token(tagArm, t.rec(slot).gen(), slot)
	return true
}

// armCQE delivers the completion of an armed receive and frees its
// record. Called with cqMu and mu held.
func (b *Backend) armCQE(gen uint32, slot int32, c cqe) {
	t := &b.arms
	if slot < 0 || slot >= t.n || t.rec(slot).gen() != gen {
		return // cannot happen: the record lives until its CQE
	}
	rec := *t.rec(slot)
	if t.byFD.get(int(rec.fd())) == slot+1 {
		t.byFD.set(int(rec.fd()), 0)
	}
	t.release(slot)
	out := Completion{UserData: rec.key, FD: backend.InvalidFD}
	hasBuf := c.Flags&cqeFBuffer != 0
	bid := uint16(c.Flags >> 16)
	switch {
	case c.Res < 0:
		if hasBuf {
			b.putBack(rec.group(), bid)
		}
		errno := syscall.Errno(-c.Res)
		switch {
		case errno == unix.ENOBUFS:
			b.starved(rec.group())
			out.Err = backend.NewError("recv", backend.ErrNoBuffers, errno)
		case errno == unix.ECANCELED || interrupted(errno): // a cancel of a request running in io-wq
			out.Err = backend.ErrCanceled
		default:
			out.Err = unixio.ErrnoError("recv", errno)
		}
	case c.Res == 0:
		if hasBuf {
			b.putBack(rec.group(), bid) // end of stream carries no buffer
		}
	default:
		out.N = int(c.Res)
		if hasBuf {
			b.handOut(rec.group(), bid)
			out.Flags |= backend.HasBuffer
			out.BufferID = bid
		}
	}
	b.emit(out)
}

// alloc takes a free slot and gives it the next generation (returned).
// The caller fills in the record (its x with that generation).
func (t *armTable) alloc() (int32, uint32) {
	var slot int32
	if t.freeHead != 0 {
		slot = t.freeHead - 1
		t.freeHead = int32(t.rec(slot).key)
	} else {
		slot = t.n
		if int(slot>>pageBits) == len(t.recs) {
			t.recs = append(t.recs, new([pageSize]armRec))
		}
		t.n++
	}
	t.nextG = (t.nextG + 1) & genMask
	if t.nextG == 0 {
		t.nextG = 1
	}
	*t.rec(slot) = armRec{x: packArm(0, t.nextG, 0)}
	t.live++
	return slot, t.nextG
}

// release frees slot: its generation 0, its key the link to the next free.
func (t *armTable) release(slot int32) {
	*t.rec(slot) = armRec{key: uint64(t.freeHead)}
	t.freeHead = slot + 1
	t.live--
}

// each calls f with every armed record and its slot.
func (t *armTable) each(f func(slot int32, r *armRec)) {
	for slot := int32(0); slot < t.n; slot++ {
		if r := t.rec(slot); r.gen() != 0 {
			f(slot, r)
		}
	}
}
