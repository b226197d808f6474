//go:build linux

package uring

import (
	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// user_data layout: tag<<56 | generation<<32 | slot. The tag says what the
// CQE is for; tagOp and tagAux CQEs belong to the op in slot, and the
// generation (24 bits, never 0) makes a stale token (a slot reused since)
// match nothing, in the kernel's cancel lookups as in ours.
const (
	tagOp      = 1 // the op's own request
	tagAux     = 2 // the op's linked timeout, or the fd cancel linked before a close
	tagWake    = 3 // the eventfd read that Wake completes
	tagTimer   = 4 // Wait's internal timeout (without EXT_ARG); low 32 bits: its sequence
	tagProvide = 5 // a PROVIDE_BUFFERS request
	tagCancel  = 6 // an internal ASYNC_CANCEL or TIMEOUT_REMOVE
	tagQTimer  = 7 // the timeout of an op queued behind another on its descriptor
	tagArm     = 8 // an armed receive (ArmRecv): generation and slot of b.arms

	genMask = 1<<24 - 1
)

func token(tag uint64, gen uint32, slot int32) uint64 {
	return tag<<56 | uint64(gen&genMask)<<32 | uint64(uint32(slot))
}

func splitToken(t uint64) (tag uint64, gen uint32, slot int32) {
	return t >> 56, uint32(t>>32) & genMask, int32(uint32(t))
}

// Record flags.
const (
	recTimedOut     = 1 << iota // the linked timeout fired (or the emulated deadline passed)
	recCanceled                 // a cancel reached the op; emulations must not re-arm
	recEmuAccept                // multishot accept emulated by re-arming single shots
	recEmuSelect                // SelectBuffer emulated by poll + read
	recLinked                   // the op carries a linked timeout (rec.deadline)
	recInFDList                 // linked into its descriptor's list
	recParked                   // a close waiting for older ops on its fd to complete
	recCloseLater               // a parked close whose CLOSE is not submitted yet (DisableCancelFD)
	recUserSpaceHit             // a cancel whose target is an emulation (ENOENT means we stopped it)
	recBuffer                   // bufID holds a group buffer for the completion
	recQueued                   // waiting in user space behind an op of the same direction
	recQTimer                   // a queued op's tagQTimer timeout is in the kernel
	recDropped                  // finished without ever being armed (cancelled or timed out queued)
)

// Directions: at most one op per descriptor and direction is in the
// kernel at a time, the others queue in user space in submission order.
// io_uring wakes the polls of several requests waiting on one socket in
// the reverse order of their arming, which would serve two recvs out of
// order (or interleave two sends).
const (
	dirNone = iota
	dirIn
	dirOut
)

// record is the per-op state, one slab slot. Everything the kernel reads or
// writes for the op that is not the caller's buffer lives here (timespec,
// sockaddr and its length, iovecs, msghdr), and op keeps the caller's Op and
// buffers reachable: the slab keeps the record until the op's final CQE
// (and those of its linked requests) arrived. All fields are guarded by the
// backend's mu.
type record struct {
	op    *backend.Op
	gen   uint32
	flags uint32
	seq   uint64 // submission order, for the ordering of a close after older ops
	pend  int32  // CQEs still to come before the final completion
	res   int32  // the op's final result
	bufID uint16
	dir   uint8
	fd    int32
	// fdPrev and fdNext link the record into its descriptor's list (slots, -1 ends).
	fdPrev, fdNext int32
	wait           int32 // a parked close: older ops on its fd still in flight
	deadline       int64 // recLinked: when the op times out (monotonic ns)

	// ts is the timespec of a linked timeout or a Timeout op.
	ts kernelTimespec
	// ext holds what only some kinds hand the kernel (addresses, msghdr,
	// iovecs, paths, statx): made on the slot's first such op (x) and kept
	// for the slot's later ops, so that the record of a plain recv or send,
	// which is what every idle connection has in flight, stays small.
	ext *recordExt
}

// recordExt is the part of a record that connect, accept, sendto,
// recvfrom, readv, writev and the file-system ops use.
type recordExt struct {
	addrLen uint32
	addr    unix.RawSockaddrAny
	iov1    unix.Iovec
	msg     unix.Msghdr
	iov     []unix.Iovec // readv/writev, reused across ops
	// path is the NUL-terminated copy of File.Path that an openat or statx
	// hands the kernel; stx is the buffer a statx fills, decoded into
	// File.Stat at the completion. Both are made on the slot's first file
	// op and reused.
	path []byte
	stx  *unix.Statx_t
}

// x returns the record's extension, making it on first use. Called with
// the backend's mu held.
func (r *record) x() *recordExt {
	if r.ext == nil {
		r.ext = &recordExt{addrLen: unix.SizeofSockaddrAny}
	}
	return r.ext
}

const chunkSize = 256

// slab holds the records in fixed chunks, so that a record never moves (the
// kernel holds pointers into it) and growing allocates only a new chunk.
type slab struct {
	chunks []*[chunkSize]record
	free   []int32
	used   int
}

func (s *slab) get(slot int32) *record {
	return &s.chunks[slot/chunkSize][slot%chunkSize]
}

// lookup returns the record a tagOp/tagAux token names, or nil if stale.
func (s *slab) lookup(gen uint32, slot int32) *record {
	if slot < 0 || int(slot) >= len(s.chunks)*chunkSize {
		return nil
	}
	r := s.get(slot)
	if r.op == nil || r.gen != gen {
		return nil
	}
	return r
}

// alloc takes a free slot for op.
func (s *slab) alloc(op *backend.Op) (int32, *record) {
	if len(s.free) == 0 {
		base := int32(len(s.chunks) * chunkSize)
		c := new([chunkSize]record)
		for i := range c {
			c[i].gen = 1
		}
		s.chunks = append(s.chunks, c)
		for i := int32(chunkSize - 1); i >= 0; i-- {
			s.free = append(s.free, base+i)
		}
	}
	slot := s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	r := s.get(slot)
	r.op, r.flags, r.pend, r.res, r.fd, r.fdPrev, r.fdNext, r.wait, r.dir = op, 0, 0, 0, -1, -1, -1, 0, dirNone
	s.used++
	return slot, r
}

// release frees slot: its generation moves on, so tokens naming it go stale.
func (s *slab) release(slot int32) {
	r := s.get(slot)
	r.op = nil
	if x := r.ext; x != nil {
		x.msg = unix.Msghdr{}
		x.iov1 = unix.Iovec{}
		clear(x.iov)
	}
	r.gen = (r.gen + 1) & genMask
	if r.gen == 0 {
		r.gen = 1
	}
	s.free = append(s.free, slot)
	s.used--
}
