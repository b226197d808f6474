//go:build linux

package uring

import (
	"errors"
	"math"
	"net/netip"
	"time"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
	"golang.org/x/sys/unix"
)

var (
	errInFlight  = errors.New("op already in flight")
	errNoGroup   = errors.New("buffer group not registered")
	errNoCurPos  = errors.New("offset -1 needs IORING_FEAT_RW_CUR_POS")
	errFDTooHigh = errors.New("descriptor out of range")
)

// maxListedFD bounds the per-descriptor lists (a larger descriptor is
// rejected by the kernel anyway: RLIMIT_NOFILE is far below it).
const maxListedFD = 1 << 24

// uintptrOf is the address of *p, for an SQE field. p must be kept
// reachable by a record, the Backend or an op until the kernel is done.
func uintptrOf[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

// bufAddr is the address of b's first byte, 0 for an empty b.
func bufAddr(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(&b[0])))
}

// rwLen is the SQE length of a recv, send, read or write of b: at most
// backend.MaxRW, so that the 32-bit field never cuts a longer buffer's
// length modulo 4 GiB (a 4 GiB recv would ask for 0 bytes and read as the
// end of the stream); the caller continues after the short count.
func rwLen(b []byte) uint32 { return uint32(min(len(b), backend.MaxRW)) }

// submitLocked records op in a slab slot and queues its SQEs. Nothing is
// queued when it fails. Called with mu held.
func (b *Backend) submitLocked(op *backend.Op) error {
	if err := b.check(op); err != nil {
		return err
	}
	if err := b.reserve(2); err != nil {
		return err
	}
	slot, r := b.slab.alloc(op)
	b.seq++
	r.seq = b.seq
	if err := b.encode(op, r); err != nil {
		b.slab.release(slot)
		return err
	}
	op.Internal.Token = token(tagOp, r.gen, slot)
	op.Internal.State |= stateInFlight
	switch op.Kind {
	case backend.KindClose:
		b.submitClose(slot, r)
		return nil
	case backend.KindCancel:
		b.noteCancel(r, op.Target)
	}
	if usesFD(op) && op.FD < maxListedFD {
		r.fd = int32(op.FD)
		b.fdLink(slot, r)
	}
	if op.Timeout > 0 && op.Kind != backend.KindTimeout {
		// A duration too long for the clock means never: no linked
		// timeout at all (its deadline would wrap into the past, and an
		// op re-armed by an emulation would time out at once).
		if d := b.now(); int64(op.Timeout) <= math.MaxInt64-d {
			r.flags |= recLinked
			r.deadline = d + int64(op.Timeout)
		}
	}
	if op.Kind == backend.KindAccept && op.Flags&backend.Multishot != 0 && !b.nativeMultishot {
		r.flags |= recEmuAccept
	}
	if op.Kind == backend.KindRecv && op.Flags&backend.SelectBuffer != 0 && b.bufMode == bufEmulate {
		r.flags |= recEmuSelect
	}
	if r.flags&recInFDList != 0 {
		r.dir = direction(op)
		if r.dir != dirNone && b.busyDir(slot, r) {
			b.queue(slot, r)
			return nil
		}
	}
	b.arm(slot, r)
	return nil
}

// direction is the op's direction for the per-descriptor ordering:
// stream receives and sends, and reads and writes at the current position.
func direction(op *backend.Op) uint8 {
	switch op.Kind {
	case backend.KindRecv, backend.KindRecvFrom:
		return dirIn
	case backend.KindSend:
		return dirOut
	case backend.KindRead, backend.KindReadv:
		if op.Offset == -1 {
			return dirIn
		}
	case backend.KindWrite, backend.KindWritev:
		if op.Offset == -1 {
			return dirOut
		}
	}
	return dirNone
}

// busyDir reports whether another op of r's direction is in flight on r's
// descriptor.
func (b *Backend) busyDir(slot int32, r *record) bool {
	for s := b.fdHeads.get(int(r.fd)) - 1; s >= 0; {
		o := b.slab.get(s)
		if s != slot && o.dir == r.dir {
			return true
		}
		s = o.fdNext
	}
	return false
}

// queue keeps the op in user space until the ops before it in its
// direction have completed. Its deadline runs meanwhile: a TIMEOUT (not
// linked) finishes it with ErrTimeout if it is still queued then.
func (b *Backend) queue(slot int32, r *record) {
	r.flags |= recQueued
	if r.flags&recLinked == 0 {
		return
	}
	setTimespec(&r.ts, time.Duration(r.deadline-b.now()))
	t := b.push(token(tagQTimer, r.gen, slot))
	t.Opcode, t.FD, t.Addr, t.Len = opTimeout, -1, uint64(uintptrOf(&r.ts)), 1
	r.flags |= recQTimer
	r.pend++
}

// dequeue arms the oldest op queued on fd in direction dir, if any.
func (b *Backend) dequeue(fd int32, dir uint8) {
	best, bestSlot := (*record)(nil), int32(-1)
	for s := b.fdHeads.get(int(fd)) - 1; s >= 0; {
		o := b.slab.get(s)
		if o.dir == dir && o.flags&recQueued != 0 && (best == nil || o.seq < best.seq) {
			best, bestSlot = o, s
		}
		s = o.fdNext
	}
	if best == nil {
		return
	}
	best.flags &^= recQueued
	b.stopQTimer(bestSlot, best)
	b.reserve(2)
	b.rearm(bestSlot, best)
}

// stopQTimer removes a queued op's timeout; its CQE still counts.
func (b *Backend) stopQTimer(slot int32, r *record) {
	if r.flags&recQTimer == 0 {
		return
	}
	r.flags &^= recQTimer
	s := b.pushInternal(token(tagCancel, 0, 0))
	s.Opcode, s.FD, s.Addr = opTimeoutRemove, -1, token(tagQTimer, r.gen, slot)
}

// dropQueued finishes a queued op with ErrCanceled without arming it: a
// NOP's CQE (an aux of the op) carries it through the normal path.
func (b *Backend) dropQueued(slot int32, r *record) {
	r.flags &^= recQueued
	r.flags |= recDropped | recCanceled
	r.res = -int32(unix.ECANCELED)
	b.stopQTimer(slot, r)
	n := b.push(token(tagAux, r.gen, slot))
	n.Opcode = opNop
	r.pend++
}

// check refuses what CheckOp cannot know: a group not registered, offset
// -1 on an old kernel, a file-system kind the kernel lacks.
func (b *Backend) check(op *backend.Op) error {
	if err := backend.CheckCaps(op, b.caps); err != nil {
		return err
	}
	switch op.Kind {
	case backend.KindRecv:
		if op.Flags&backend.SelectBuffer != 0 && b.group(op.BufferGroup) == nil {
			return backend.NewError("recv", backend.ErrInvalid, errNoGroup)
		}
	case backend.KindRead, backend.KindWrite, backend.KindReadv, backend.KindWritev:
		if op.Offset == -1 && !b.curPos {
			return backend.NewError(op.Kind.String(), backend.ErrUnsupported, errNoCurPos)
		}
	}
	if usesFD(op) && op.FD >= 1<<31 {
		return backend.NewError(op.Kind.String(), backend.ErrInvalid, errFDTooHigh)
	}
	return nil
}

// usesFD reports whether op works on Op.FD: not a nop, cancel, timeout or
// openat, nor a statx of a path.
func usesFD(op *backend.Op) bool {
	switch op.Kind {
	case backend.KindNop, backend.KindCancel, backend.KindTimeout, backend.KindOpenAt:
		return false
	case backend.KindStatx:
		return op.File.Path == ""
	}
	return true
}

// encode fills the record's kernel-visible memory that does not change
// when an emulation re-arms: the destination address of connect and
// sendto, the iovecs, the timespec of a Timeout op.
func (b *Backend) encode(op *backend.Op, r *record) error {
	switch op.Kind {
	case backend.KindConnect, backend.KindSendTo:
		a := op.Addr
		if a.Family == backend.FamilyInet4 && isInet6Socket(op.FD) {
			a = backend.Addr{Family: backend.FamilyInet6, IP: mapped(a)}
		}
		n, err := unixio.EncodeRaw(a, &r.x().addr)
		if err != nil {
			return err
		}
		r.x().addrLen = n
	case backend.KindReadv, backend.KindWritev:
		bufs := backend.LimitVec(op.Bufs) // the iovec count and the total within the kernel's limits
		if cap(r.x().iov) < len(bufs) {
			r.x().iov = make([]unix.Iovec, len(bufs))
		}
		r.x().iov = r.x().iov[:len(bufs)]
		for i, buf := range bufs {
			r.x().iov[i] = unix.Iovec{}
			if len(buf) > 0 {
				r.x().iov[i].Base = &buf[0]
				r.x().iov[i].SetLen(len(buf))
			}
		}
	case backend.KindTimeout:
		setTimespec(&r.ts, op.Timeout)
	case backend.KindOpenAt, backend.KindStatx:
		r.x().path = append(append(r.x().path[:0], op.File.Path...), 0)
		if op.Kind == backend.KindStatx && r.x().stx == nil {
			r.x().stx = new(unix.Statx_t)
		}
	}
	return nil
}

// arm queues the op's request, and its linked timeout when it has one:
// at Submit, and again when an emulation re-arms. Room for two SQEs must
// have been reserved. Called with mu held.
func (b *Backend) arm(slot int32, r *record) {
	op := r.op
	s := b.push(token(tagOp, r.gen, slot))
	s.FD = int32(op.FD)
	r.pend++
	switch op.Kind {
	case backend.KindNop:
		s.Opcode = opNop
	case backend.KindAccept:
		b.prepAccept(s, r)
	case backend.KindConnect:
		s.Opcode, s.Addr, s.Off = opConnect, uint64(uintptrOf(&r.x().addr)), uint64(r.x().addrLen)
	case backend.KindRecv:
		b.prepRecv(s, r)
	case backend.KindSend:
		s.Opcode, s.Addr, s.Len, s.OpFlags = opSend, bufAddr(op.Buf), rwLen(op.Buf), unixio.SendFlags
	case backend.KindRecvFrom:
		r.x().addrLen = unix.SizeofSockaddrAny
		b.prepMsg(s, r, opRecvmsg, 0)
		b.hintPollFirst(s, op)
	case backend.KindSendTo:
		b.prepMsg(s, r, opSendmsg, unixio.SendFlags)
	case backend.KindRead, backend.KindWrite:
		s.Opcode = opRead
		if op.Kind == backend.KindWrite {
			s.Opcode = opWrite
		}
		s.Addr, s.Len, s.Off = bufAddr(op.Buf), rwLen(op.Buf), uint64(op.Offset)
	case backend.KindReadv, backend.KindWritev:
		s.Opcode = opReadv
		if op.Kind == backend.KindWritev {
			s.Opcode = opWritev
		}
		s.Addr, s.Len, s.Off = uint64(uintptrOf(&r.x().iov[0])), uint32(len(r.x().iov)), uint64(op.Offset)
	case backend.KindCancel:
		s.Opcode, s.FD, s.Addr = opAsyncCancel, -1, op.Target.Internal.Token
	case backend.KindTimeout:
		s.Opcode, s.FD, s.Addr, s.Len = opTimeout, -1, uint64(uintptrOf(&r.ts)), 1
	case backend.KindPoll:
		s.Opcode, s.OpFlags = opPollAdd, pollMask(op.Events)
	case backend.KindOpenAt, backend.KindFsync, backend.KindStatx, backend.KindFtruncate:
		prepFile(s, r)
	}
	if !socketOp(op.Kind) {
		b.r.mayBlock = true
	}
	if r.flags&recLinked != 0 {
		s.Flags |= sqeIOLink
		b.pushLinkTimeout(slot, r)
	}
}

// prepFile fills the file-system ops. The kernel reads the path (r.x().path,
// NUL-terminated by encode) and writes the statx buffer (r.x().stx) while the
// request runs; both live in the record until its last CQE.
func prepFile(s *sqe, r *record) {
	op := r.op
	switch op.Kind {
	case backend.KindOpenAt:
		mode, _ := unixio.OpenMode(op.File.OpenFlags) // CheckOp made sure it converts
		s.Opcode, s.FD, s.Addr = opOpenat, unix.AT_FDCWD, uint64(uintptrOf(&r.x().path[0]))
		s.Len, s.OpFlags = op.File.Perm, uint32(mode)
	case backend.KindFsync:
		s.Opcode = opFsync
		if op.Flags&backend.DataSync != 0 {
			s.OpFlags = fsyncDataSync
		}
	case backend.KindStatx:
		s.Opcode, s.Addr, s.Off = opStatx, uint64(uintptrOf(&r.x().path[0])), uint64(uintptrOf(r.x().stx))
		s.Len = unix.STATX_BASIC_STATS | unix.STATX_BTIME
		if op.File.Path == "" {
			s.OpFlags = unix.AT_EMPTY_PATH
		} else {
			s.FD = unix.AT_FDCWD
		}
	case backend.KindFtruncate:
		s.Opcode, s.Off = opFtruncate, uint64(op.Offset)
	}
}

// pushLinkTimeout queues the IORING_OP_LINK_TIMEOUT after the op's SQE,
// expiring at the op's deadline.
func (b *Backend) pushLinkTimeout(slot int32, r *record) {
	setTimespec(&r.ts, time.Duration(r.deadline-b.now()))
	t := b.push(token(tagAux, r.gen, slot))
	t.Opcode, t.FD, t.Addr, t.Len = opLinkTimeout, -1, uint64(uintptrOf(&r.ts)), 1
	r.pend++
}

// prepAccept fills an accept: single shot with the peer address written
// into the record, or native multishot without it (the kernel would
// overwrite one address for every connection; the peer is read with
// getpeername instead).
func (b *Backend) prepAccept(s *sqe, r *record) {
	s.Opcode, s.OpFlags = opAccept, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC
	if r.op.Flags&backend.Multishot != 0 && b.nativeMultishot {
		s.Ioprio = acceptMultishot
		return
	}
	r.x().addrLen = unix.SizeofSockaddrAny
	s.Addr, s.Off = uint64(uintptrOf(&r.x().addr)), uint64(uintptrOf(&r.x().addrLen))
}

// prepRecv fills a recv: into Buf, into a kernel-selected group buffer, or
// (emulated selection) a poll for input.
func (b *Backend) prepRecv(s *sqe, r *record) {
	op := r.op
	switch {
	case op.Flags&backend.SelectBuffer == 0:
		s.Opcode, s.Addr, s.Len = opRecv, bufAddr(op.Buf), rwLen(op.Buf)
		b.hintPollFirst(s, op)
	case r.flags&recEmuSelect != 0:
		s.Opcode, s.OpFlags = opPollAdd, pollMask(backend.EventIn)
	default:
		s.Opcode, s.Flags, s.BufIndex = opRecv, sqeBufferSelect, op.BufferGroup
		b.hintPollFirst(s, op)
	}
}

// hintPollFirst passes the PollFirst hint of a recv or recvmsg to the
// kernel (5.19 and later): the request arms its poll at once instead of
// making a first attempt that would find no data.
func (b *Backend) hintPollFirst(s *sqe, op *backend.Op) {
	if op.Flags&backend.PollFirst != 0 && b.pollFirst {
		s.Ioprio |= pollFirst
	}
}

// prepMsg fills a recvmsg or sendmsg of one iovec over Buf, with the
// address in the record.
func (b *Backend) prepMsg(s *sqe, r *record, opcode uint8, flags uint32) {
	buf := backend.LimitRW(r.op.Buf) // a longer datagram fails with EMSGSIZE
	r.x().iov1 = unix.Iovec{}
	if len(buf) > 0 {
		r.x().iov1.Base = &buf[0]
		r.x().iov1.SetLen(len(buf))
	}
	r.x().msg = unix.Msghdr{Name: (*byte)(unsafe.Pointer(&r.x().addr)), Namelen: r.x().addrLen, Iov: &r.x().iov1}
	r.x().msg.SetIovlen(1)
	s.Opcode, s.Addr, s.Len, s.OpFlags = opcode, uint64(uintptrOf(&r.x().msg)), 1, flags
}

// pollMask converts Events to the poll32_events of POLL_ADD (halfwords
// swapped on big-endian machines, as the kernel expects).
func pollMask(e backend.Events) uint32 {
	var m uint32
	if e&backend.EventIn != 0 {
		m |= unix.POLLIN | unix.POLLRDHUP
	}
	if e&backend.EventOut != 0 {
		m |= unix.POLLOUT
	}
	if isBigEndian {
		m = m<<16 | m>>16
	}
	return m
}

// noteCancel marks the target of a cancel, when it is in flight: an
// emulation will not re-arm it, and a kernel ENOENT then means we stopped
// it in user space.
func (b *Backend) noteCancel(r *record, target *backend.Op) {
	if target.Internal.State&stateInFlight == 0 {
		return
	}
	_, gen, slot := splitToken(target.Internal.Token)
	t := b.slab.lookup(gen, slot)
	if t == nil || t.op != target {
		return
	}
	t.flags |= recCanceled
	if t.flags&(recEmuAccept|recEmuSelect|recQueued) != 0 {
		r.flags |= recUserSpaceHit
	}
	if t.flags&recQueued != 0 {
		b.dropQueued(slot, t)
	}
}

// fdLink puts the record at the head of its descriptor's list.
func (b *Backend) fdLink(slot int32, r *record) {
	fd := int(r.fd)
	head := b.fdHeads.get(fd) - 1
	r.fdPrev, r.fdNext = -1, head
	if head >= 0 {
		b.slab.get(head).fdPrev = slot
	}
	b.fdHeads.set(fd, slot+1)
	r.flags |= recInFDList
}

// fdUnlink takes the record out of its descriptor's list.
func (b *Backend) fdUnlink(slot int32, r *record) {
	if r.flags&recInFDList == 0 {
		return
	}
	r.flags &^= recInFDList
	if r.fdPrev >= 0 {
		b.slab.get(r.fdPrev).fdNext = r.fdNext
	} else {
		b.fdHeads.set(int(r.fd), r.fdNext+1)
	}
	if r.fdNext >= 0 {
		b.slab.get(r.fdNext).fdPrev = r.fdPrev
	}
	r.fdPrev, r.fdNext = -1, -1
}

// olderOnFD counts the ops on fd submitted before seq, and marks them
// cancelled (so emulations stop); with cancel set it also queues an
// internal cancel for each (the DisableCancelFD close).
func (b *Backend) olderOnFD(fd int32, seq uint64, cancel bool) int32 {
	if fd < 0 {
		return 0
	}
	var n int32
	for slot := b.fdHeads.get(int(fd)) - 1; slot >= 0; {
		o := b.slab.get(slot)
		if o.seq < seq {
			n++
			if o.flags&recQueued != 0 {
				b.dropQueued(slot, o)
			} else if o.flags&(recCanceled|recDropped) == 0 && cancel {
				c := b.pushInternal(token(tagCancel, 0, 0))
				c.Opcode, c.FD, c.Addr = opAsyncCancel, -1, token(tagOp, o.gen, slot)
			}
			o.flags |= recCanceled
		}
		slot = o.fdNext
	}
	return n
}

// submitClose queues a KindClose. With IORING_ASYNC_CANCEL_FD: a cancel of
// every request on the descriptor, hard-linked (it runs whatever the
// cancel's result) to the CLOSE; the close's completion is then held back
// until the older ops on the descriptor have completed. Without: the
// older ops are cancelled one by one and the CLOSE is queued when the last
// of them has completed.
func (b *Backend) submitClose(slot int32, r *record) {
	r.fd = int32(r.op.FD)
	if r.op.FD >= maxListedFD {
		r.fd = -1
	}
	// A receive armed on fd is cancelled by its token (without
	// CANCEL_FD, or beside it): the kernel would otherwise keep it, and the
	// socket, past the close.
	if b.cancelArmed(r.fd) {
		_ = b.reserve(2) // the linked pair below must not be split by a flush
	}
	if b.nativeCancelFD {
		b.olderOnFD(r.fd, r.seq, false)
		c := b.push(token(tagAux, r.gen, slot))
		c.Opcode, c.FD, c.OpFlags, c.Flags = opAsyncCancel, int32(r.op.FD), cancelFD|cancelAll, sqeIOHardlink
		r.pend++
		b.pushCloseSQE(slot, r)
		return
	}
	n := b.olderOnFD(r.fd, r.seq, true)
	if n == 0 {
		b.pushCloseSQE(slot, r)
		return
	}
	r.pend++ // the CLOSE, queued when the older ops are done
	r.wait = n
	r.flags |= recParked | recCloseLater
	b.parked = append(b.parked, slot)
}

// pushCloseSQE queues the CLOSE itself.
func (b *Backend) pushCloseSQE(slot int32, r *record) {
	b.r.mayBlock = true // a socket with SO_LINGER waits in its close
	s := b.push(token(tagOp, r.gen, slot))
	s.Opcode, s.FD = opClose, int32(r.op.FD)
	if r.flags&recCloseLater == 0 {
		r.pend++
	}
}

// isInet6Socket reports whether fd is an AF_INET6 socket (an IPv4
// destination is then given IPv4-mapped).
func isInet6Socket(fd backend.FD) bool {
	d, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_DOMAIN)
	return err == nil && d == unix.AF_INET6
}

// mapped returns a's IPv4 address IPv4-mapped, with its port.
func mapped(a backend.Addr) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom16(a.IP.Addr().As16()), a.IP.Port())
}

// socketOp reports whether an op of kind k cannot sleep on the thread that
// submits it: the socket ops, which the kernel tries without waiting and
// otherwise parks on the socket, and the ring's own (a cancel, a timeout, a
// poll). A read or write may be on a regular file, which it may not be.
func socketOp(k backend.Kind) bool {
	switch k {
	case backend.KindNop, backend.KindAccept, backend.KindConnect, backend.KindRecv, backend.KindSend,
		backend.KindRecvFrom, backend.KindSendTo, backend.KindCancel, backend.KindTimeout, backend.KindPoll:
		return true
	}
	return false
}
