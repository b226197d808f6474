//go:build windows

package iocp

import (
	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/windows"
)

// Submit starts op at once (there is no user-space batching, so a Wait
// blocked in the port sees its completion as soon as the kernel posts it).
// Every started operation completes through the port, synchronous successes
// included (FILE_SKIP_COMPLETION_PORT_ON_SUCCESS is not set); one that fails
// at once completes through the ready queue.
func (b *Backend) Submit(op *backend.Op) error {
	if err := backend.CheckOp(op); err != nil {
		return err
	}
	// The file-system kinds (KindOpenAt, KindStatx, ...) are not served
	// here (b.caps lacks CapFileOps): refused before anything is kept.
	if err := backend.CheckCaps(op, b.caps); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return backend.ErrClosed
	}
	if op.Internal.State&stateInFlight != 0 {
		return backend.NewError("submit "+op.Kind.String(), backend.ErrInvalid, errInFlight)
	}
	if err := b.checkLocked(op); err != nil {
		return err
	}
	op.Internal.State |= stateInFlight
	b.startLocked(op)
	if b.sleeping && (len(b.ready) > b.head ||
		len(b.timers) > 0 && (b.sleepUntil < 0 || b.timers[0].deadline < b.sleepUntil)) {
		b.kickLocked()
	}
	return nil
}

// checkLocked refuses what this backend cannot serve: a poll for EventOut
// (IOCP has no writability notification; CapPoll is off), and a poll on a
// listening socket or a file (the zero-byte read needs a connected or
// datagram socket).
func (b *Backend) checkLocked(op *backend.Op) error {
	if op.Kind != backend.KindPoll {
		return nil
	}
	if op.Events&backend.EventOut != 0 {
		return backend.NewError("poll", backend.ErrUnsupported, errPollOut)
	}
	if fd := b.fds[windows.Handle(op.FD)]; fd != nil && (!fd.socket || fd.listening) {
		return backend.NewError("poll", backend.ErrUnsupported, errPollKind)
	}
	return nil
}

// startLocked starts op.
func (b *Backend) startLocked(op *backend.Op) {
	if op.Kind == backend.KindCancel {
		b.startCancelLocked(op)
		return
	}
	r := b.allocLocked(op)
	switch op.Kind {
	case backend.KindNop:
		r.inKernel = true
		b.inflight++
		if err := windows.PostQueuedCompletionStatus(b.port, 0, keyIO, &r.ov); err != nil {
			r.inKernel = false
			b.inflight--
			b.finishLocked(r, 0, sysError("nop", err))
		}
		return
	case backend.KindTimeout:
		if op.Timeout == 0 {
			b.finishLocked(r, 0, backend.ErrTimeout)
			return
		}
		b.armLocked(r, deadlineAfter(b.now(), op.Timeout))
		return
	case backend.KindClose:
		b.startCloseLocked(r)
		return
	}
	r.h = windows.Handle(op.FD)
	r.fd = b.fds[r.h]
	if r.fd == nil {
		b.finishLocked(r, 0, backend.NewError(op.Kind.String(), backend.ErrClosed, windows.ERROR_INVALID_HANDLE))
		return
	}
	r.fd.pending++
	if op.Timeout > 0 {
		b.armLocked(r, deadlineAfter(b.now(), op.Timeout))
	}
	switch op.Kind {
	case backend.KindAccept:
		b.startAcceptLocked(r)
	case backend.KindConnect:
		b.startConnectLocked(r)
	case backend.KindRecv, backend.KindPoll:
		b.startRecvLocked(r)
	case backend.KindSend:
		r.ov = windows.Overlapped{}
		r.wsa = windows.WSABuf{Len: rwLen(op.Buf), Buf: &op.Buf[0]}
		b.issuedLocked(r, windows.WSASend(r.h, &r.wsa, 1, nil, 0, &r.ov, nil))
	case backend.KindRecvFrom:
		r.ov = windows.Overlapped{}
		r.wsa = windows.WSABuf{Len: rwLen(op.Buf), Buf: bufPtr(op.Buf)}
		r.flags = 0
		r.saLen = int32(len(r.sa.Pad)) + int32(len(r.sa.Addr.Data)) + 2
		b.issuedLocked(r, windows.WSARecvFrom(r.h, &r.wsa, 1, nil, &r.flags, &r.sa, &r.saLen, &r.ov, nil))
	case backend.KindSendTo:
		b.startSendToLocked(r)
	default: // read, write, readv, writev
		b.startFileLocked(r)
	}
}

// issuedLocked accounts for a call that started r's kernel part: pending or
// done at once, its packet will come through the port; any other error
// means no packet, and the op finishes now with it.
func (b *Backend) issuedLocked(r *record, err error) {
	if err == nil || err == windows.ERROR_IO_PENDING {
		r.inKernel = true
		b.inflight++
		return
	}
	b.onPacketLocked(r, 0, toErrno(err))
}

// startAcceptLocked posts an AcceptEx into a fresh socket of the
// listener's family.
func (b *Backend) startAcceptLocked(r *record) {
	s, err := b.newSocketLocked(r.fd.family, backend.Stream)
	if err != nil {
		b.finishLocked(r, 0, err)
		return
	}
	r.acceptSock = s
	r.ov = windows.Overlapped{}
	b.issuedLocked(r, windows.AcceptEx(r.h, s, &r.acceptBuf[0], 0, acceptAddrLen, acceptAddrLen, &r.n, &r.ov))
}

// startConnectLocked posts a ConnectEx, binding the socket to the wildcard
// address first if it is unbound (ConnectEx requires a bound socket). A
// Unix-domain socket connects synchronously, as Go's net package does on
// Windows (it uses ConnectEx for TCP only): a local connect completes
// against the listener's backlog without waiting for the peer.
func (b *Backend) startConnectLocked(r *record) {
	fd := r.fd
	if fd.family == backend.FamilyUnix {
		b.finishLocked(r, 0, connectUnix(r.h, r.op.Addr))
		return
	}
	if err := loadConnectEx(r.h); err != nil {
		b.finishLocked(r, 0, sysError("connect", err))
		return
	}
	if _, err := windows.Getsockname(r.h); err != nil {
		sa, _ := toSockaddr(wildcard(fd.family), fd.family)
		if err := windows.Bind(r.h, sa); err != nil {
			b.finishLocked(r, 0, sysError("connect", err))
			return
		}
	}
	n, err := encodeRaw(r.op.Addr, fd.family, &r.sa)
	if err != nil {
		b.finishLocked(r, 0, err)
		return
	}
	r.ov = windows.Overlapped{}
	b.issuedLocked(r, connectEx(r.h, &r.sa, n, &r.ov))
}

// connectUnix connects an AF_UNIX socket, in blocking mode for the call.
func connectUnix(s windows.Handle, a backend.Addr) error {
	sa, err := toSockaddr(a, backend.FamilyUnix)
	if err != nil {
		return err
	}
	if err := setNonblock(s, false); err != nil {
		return sysError("connect", err)
	}
	err = windows.Connect(s, sa)
	if nerr := setNonblock(s, true); err == nil && nerr != nil {
		err = nerr
	}
	return sysError("connect", err)
}

// startRecvLocked posts the WSARecv of a recv, or the zero-byte WSARecv of
// a SelectBuffer recv or a poll (it completes when data or the end of
// stream arrives and holds no buffer meanwhile; on a datagram socket it
// peeks, so that it leaves the datagram in place).
func (b *Backend) startRecvLocked(r *record) {
	op := r.op
	r.ov = windows.Overlapped{}
	r.flags = 0
	if op.Kind == backend.KindPoll || op.Flags&backend.SelectBuffer != 0 {
		r.wsa = windows.WSABuf{Len: 0, Buf: &zeroRead[0]}
		if r.fd.typ == backend.Datagram {
			r.flags = windows.MSG_PEEK
		}
	} else {
		r.wsa = windows.WSABuf{Len: rwLen(op.Buf), Buf: &op.Buf[0]}
	}
	b.issuedLocked(r, windows.WSARecv(r.h, &r.wsa, 1, nil, &r.flags, &r.ov, nil))
}

// startSendToLocked posts a WSASendTo; the destination lives in r.sa. A
// datagram longer than backend.MaxRW, which no socket takes and which the
// 32-bit WSABuf length cannot describe, fails here with WSAEMSGSIZE, as a
// shorter one too long for its socket fails in the kernel (not there:
// Wine reports that as a warning status whose packet would still come).
func (b *Backend) startSendToLocked(r *record) {
	if len(r.op.Buf) > backend.MaxRW {
		b.finishLocked(r, 0, errnoError("sendto", windows.WSAEMSGSIZE))
		return
	}
	n, err := encodeRaw(r.op.Addr, r.fd.family, &r.sa)
	if err != nil {
		b.finishLocked(r, 0, err)
		return
	}
	r.ov = windows.Overlapped{}
	r.wsa = windows.WSABuf{Len: uint32(len(r.op.Buf)), Buf: bufPtr(r.op.Buf)}
	b.issuedLocked(r, windows.WSASendTo(r.h, &r.wsa, 1, nil, 0, &r.sa, n, &r.ov, nil))
}

// startFileLocked posts the ReadFile or WriteFile of a read or write, or of
// the current buffer of a readv or writev (which moves one buffer at a time:
// Windows' scatter/gather file calls need page-aligned, unbuffered I/O).
// The offset goes in the OVERLAPPED; Offset -1 uses the position this
// backend keeps for the descriptor (pipes ignore it), and a write to a file
// opened with OpenAppend goes to its end.
func (b *Backend) startFileLocked(r *record) {
	op := r.op
	buf := backend.LimitRW(op.Buf)
	if op.Kind == backend.KindReadv || op.Kind == backend.KindWritev {
		for r.vec < len(op.Bufs) && len(op.Bufs[r.vec]) == 0 {
			r.vec++
		}
		if r.vec == len(op.Bufs) {
			b.finishLocked(r, r.done, nil)
			return
		}
		buf = op.Bufs[r.vec]
		buf = buf[:min(len(buf), backend.MaxRW-r.done)] // onFileLocked stops at MaxRW
	}
	off := op.Offset + int64(r.done)
	if op.Offset == -1 {
		off = r.fd.pos
	}
	write := op.Kind == backend.KindWrite || op.Kind == backend.KindWritev
	r.ov = windows.Overlapped{Offset: uint32(off), OffsetHigh: uint32(off >> 32)}
	if write && r.fd.appendOnly {
		r.ov.Offset, r.ov.OffsetHigh = 0xFFFFFFFF, 0xFFFFFFFF
	}
	if write {
		b.issuedLocked(r, windows.WriteFile(r.h, buf, &r.n, &r.ov))
	} else {
		b.issuedLocked(r, windows.ReadFile(r.h, buf, &r.n, &r.ov))
	}
}

// startCloseLocked closes the op's descriptor: at once if no op of this
// backend is in flight on it, else after CancelIoEx stopped them all and
// their completions came (finishWithLocked closes it then).
func (b *Backend) startCloseLocked(r *record) {
	r.h = windows.Handle(r.op.FD)
	fd := b.fds[r.h]
	r.fd = fd
	switch {
	case fd == nil:
		b.finishLocked(r, 0, backend.NewError("close", backend.ErrClosed, windows.ERROR_INVALID_HANDLE))
	case fd.pending == 0:
		b.finishLocked(r, 0, b.closeFDLocked(r.h, fd))
	case fd.closeRec != nil:
		b.finishLocked(r, 0, backend.NewError("close", backend.ErrClosed, errClosing))
	default:
		fd.closeRec = r
		for _, o := range b.recs {
			if o.active && o.fd == fd && o != r {
				o.canceled = true
			}
		}
		windows.CancelIoEx(r.h, nil)
	}
}

// startCancelLocked serves a KindCancel: it completes at once, nil when the
// request reached the target, ErrNotFound when the target is not in flight
// (or its I/O already finished: CancelIoEx says ERROR_NOT_FOUND).
func (b *Backend) startCancelLocked(op *backend.Op) {
	var err error
	if t := b.lookupLocked(op.Target); t == nil || !b.cancelLocked(t) {
		err = backend.NewError("cancel", backend.ErrNotFound, nil)
	}
	b.pushLocked(backend.Completion{Op: op, UserData: op.UserData, Err: err})
}

// rwLen is the WSABuf length of a recv or send of p: at most
// backend.MaxRW, so that the 32-bit field never cuts a longer buffer's
// length modulo 4 GiB (a 4 GiB recv would ask for 0 bytes and read as the
// end of the stream); the caller continues after the short count.
// ReadFile and WriteFile get buffers cut the same way (startFileLocked).
func rwLen(p []byte) uint32 { return uint32(min(len(p), backend.MaxRW)) }

// zeroRead is the (never written) buffer of every zero-byte WSARecv: a
// valid address, as some providers want one even for zero bytes.
var zeroRead [1]byte

// bufPtr is &p[0], or nil for an empty p (an empty datagram).
func bufPtr(p []byte) *byte {
	if len(p) == 0 {
		return nil
	}
	return &p[0]
}
