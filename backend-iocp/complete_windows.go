//go:build windows

package iocp

import (
	"container/heap"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/windows"
)

// processLocked consumes dequeued packets and reports whether a Wake was
// among them.
func (b *Backend) processLocked(entries []overlappedEntry) (woke bool) {
	for i := range entries {
		e := &entries[i]
		switch e.Key {
		case keyWake:
			b.wakePending.Store(false)
			woke = true
		case keyKick:
			b.kicked = false
		case keyIO:
			r := b.recordOf(e.Overlapped)
			if r == nil {
				continue
			}
			r.inKernel = false
			b.inflight--
			b.onPacketLocked(r, int(e.Bytes), b.packetErrno(r, e.Internal))
		}
		e.Overlapped = nil
	}
	return woke
}

// packetErrno is the Windows error of a finished operation, from the
// NTSTATUS the port reported: for sockets, Winsock's own code
// (WSAGetOverlappedResult), else the status converted to a Win32 code.
func (b *Backend) packetErrno(r *record, status uintptr) windows.Errno {
	if r.op.Kind == backend.KindNop || int32(status) >= 0 {
		return 0
	}
	if r.fd != nil && r.fd.socket {
		var n, flags uint32
		err := windows.WSAGetOverlappedResult(r.h, &r.ov, &n, false, &flags)
		if errno, ok := err.(windows.Errno); ok && errno != 0 {
			return errno
		}
	}
	return windows.NTStatus(status).Errno()
}

// onPacketLocked finishes (or continues) r's op after its kernel part ended
// with n bytes and errno; it also serves ops that failed at once in Submit.
func (b *Backend) onPacketLocked(r *record, n int, errno windows.Errno) {
	op := r.op
	switch op.Kind {
	case backend.KindNop:
		b.finishLocked(r, 0, nil)
	case backend.KindAccept:
		b.onAcceptLocked(r, errno)
	case backend.KindConnect:
		if errno == 0 {
			errno = updateContext(r.h, windows.SO_UPDATE_CONNECT_CONTEXT, nil)
		}
		b.finishLocked(r, 0, b.errLocked(r, errno))
	case backend.KindRecv:
		if op.Flags&backend.SelectBuffer != 0 {
			b.onSelectLocked(r, errno)
			return
		}
		b.finishLocked(r, n, b.errLocked(r, errno))
	case backend.KindRecvFrom:
		if errno == windows.WSAEMSGSIZE || errno == windows.ERROR_MORE_DATA {
			errno, n = 0, len(op.Buf) // truncated datagram: the contract's N
		}
		if errno == 0 {
			c := b.completion(r, n, nil)
			c.Addr = decodeRaw(&r.sa)
			b.finishWithLocked(r, c)
			return
		}
		b.finishLocked(r, n, b.errLocked(r, errno))
	case backend.KindRead, backend.KindWrite, backend.KindReadv, backend.KindWritev:
		b.onFileLocked(r, n, errno)
	case backend.KindPoll:
		b.onPollLocked(r, errno)
	default: // KindSend, KindSendTo
		b.finishLocked(r, n, b.errLocked(r, errno))
	}
}

// errLocked converts errno for r's op: a cancellation caused by the op's
// linked timeout is ErrTimeout.
func (b *Backend) errLocked(r *record, errno windows.Errno) error {
	err := errnoError(r.op.Kind.String(), errno)
	if err == backend.ErrCanceled && r.timedOut {
		return backend.ErrTimeout
	}
	return err
}

// completion is the base completion of r's op.
func (b *Backend) completion(r *record, n int, err error) backend.Completion {
	return backend.Completion{Op: r.op, UserData: r.op.UserData, N: n, Err: err}
}

// finishLocked produces r's final completion.
func (b *Backend) finishLocked(r *record, n int, err error) {
	b.finishWithLocked(r, b.completion(r, n, err))
}

// finishWithLocked queues c as r's final completion, stops r's timer,
// releases r and, when r was the last op of a descriptor a KindClose waits
// for, closes it.
func (b *Backend) finishWithLocked(r *record, c backend.Completion) {
	b.disarmLocked(r)
	b.pushLocked(c)
	fd := r.fd
	if r.op.Kind != backend.KindClose && fd != nil {
		fd.pending--
	}
	b.releaseLocked(r)
	if fd != nil && fd.pending == 0 && fd.closeRec != nil {
		cr := fd.closeRec
		fd.closeRec = nil
		b.finishLocked(cr, 0, b.closeFDLocked(cr.h, fd))
	}
}

// onAcceptLocked finishes an AcceptEx: the new socket inherits the
// listener's properties (SO_UPDATE_ACCEPT_CONTEXT), joins the backend's
// descriptors, and a Multishot accept posts the next AcceptEx.
func (b *Backend) onAcceptLocked(r *record, errno windows.Errno) {
	s := r.acceptSock
	r.acceptSock = windows.InvalidHandle
	if errno == 0 {
		ls := r.h
		errno = updateContext(s, windows.SO_UPDATE_ACCEPT_CONTEXT, unsafe.Pointer(&ls))
	}
	if errno != 0 {
		b.dropSocketLocked(s)
		b.finishLocked(r, 0, b.errLocked(r, errno))
		return
	}
	c := b.completion(r, 0, nil)
	c.FD = backend.FD(s)
	c.Addr = b.acceptPeer(r, s)
	if r.op.Flags&backend.Multishot == 0 || r.canceled || b.closed || r.fd.closeRec != nil {
		b.finishWithLocked(r, c)
		return
	}
	c.Flags |= backend.More
	b.pushLocked(c)
	b.startAcceptLocked(r)
}

// acceptPeer reads the peer address AcceptEx wrote, or asks getpeername.
func (b *Backend) acceptPeer(r *record, s windows.Handle) backend.Addr {
	var local, remote *windows.RawSockaddrAny
	var llen, rlen int32
	windows.GetAcceptExSockaddrs(&r.acceptBuf[0], 0, acceptAddrLen, acceptAddrLen, &local, &llen, &remote, &rlen)
	if remote != nil && rlen > 0 {
		// remote points into r.acceptBuf; copy it out before decoding.
		var rsa windows.RawSockaddrAny
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&rsa)), unsafe.Sizeof(rsa)),
			unsafe.Slice((*byte)(unsafe.Pointer(remote)), min(uintptr(rlen), unsafe.Sizeof(rsa))))
		if a := decodeRaw(&rsa); !a.IsZero() {
			return a
		}
	}
	if sa, err := windows.Getpeername(s); err == nil {
		return fromSockaddr(sa)
	}
	return backend.Addr{}
}

// updateContext applies SO_UPDATE_ACCEPT_CONTEXT or
// SO_UPDATE_CONNECT_CONTEXT to s, so that getpeername, shutdown and the
// options work on it.
func updateContext(s windows.Handle, opt int32, listener unsafe.Pointer) windows.Errno {
	var err error
	if listener != nil {
		err = windows.Setsockopt(s, windows.SOL_SOCKET, opt, (*byte)(listener), int32(unsafe.Sizeof(windows.Handle(0))))
	} else {
		err = windows.Setsockopt(s, windows.SOL_SOCKET, opt, nil, 0)
	}
	if errno, ok := err.(windows.Errno); ok {
		return errno
	}
	return 0
}

// onSelectLocked continues a SelectBuffer recv whose zero-byte WSARecv
// ended: data (or the end of stream) is there, so a non-blocking recv into
// a group buffer takes it now.
func (b *Backend) onSelectLocked(r *record, errno windows.Errno) {
	if errno == windows.WSAEMSGSIZE || errno == windows.ERROR_MORE_DATA {
		errno = 0 // a datagram waits (the zero-byte read peeked at it)
	}
	if errno == 0 && r.canceled {
		errno = windows.ERROR_OPERATION_ABORTED // nothing was consumed
	}
	if errno != 0 {
		b.finishLocked(r, 0, b.errLocked(r, errno))
		return
	}
	g := r.op.BufferGroup
	id, buf, ok := b.takeBuffer(g)
	if !ok {
		b.finishLocked(r, 0, backend.NewError("recv", backend.ErrNoBuffers, nil))
		return
	}
	r.wsa = windows.WSABuf{Len: uint32(len(buf)), Buf: &buf[0]}
	var n uint32
	r.flags = 0
	err := windows.WSARecv(r.h, &r.wsa, 1, &n, &r.flags, nil, nil)
	r.wsa = windows.WSABuf{}
	if err == windows.WSAEMSGSIZE {
		err, n = nil, uint32(len(buf)) // a truncated datagram
	}
	switch {
	case err == windows.WSAEWOULDBLOCK:
		// Another recv took the data first: wait again.
		b.putBuffer(g, id)
		b.startRecvLocked(r)
	case err != nil:
		b.putBuffer(g, id)
		b.finishLocked(r, 0, b.errLocked(r, toErrno(err)))
	case n == 0:
		b.putBuffer(g, id)
		b.finishLocked(r, 0, nil)
	default:
		c := b.completion(r, int(n), nil)
		c.Flags |= backend.HasBuffer
		c.BufferID = id
		b.finishWithLocked(r, c)
	}
}

// onPollLocked finishes a poll: its zero-byte recv ended, so the socket is
// readable (an error pending counts: the next recv reports it).
func (b *Backend) onPollLocked(r *record, errno windows.Errno) {
	switch {
	case errno == 0 || errno == windows.WSAEMSGSIZE || errno == windows.ERROR_MORE_DATA:
		b.finishLocked(r, int(backend.EventIn), nil)
	case sentinel(errno) == backend.ErrCanceled:
		b.finishLocked(r, 0, b.errLocked(r, errno))
	case sentinel(errno) == backend.ErrConnReset:
		b.finishLocked(r, int(backend.EventIn|backend.EventErr|backend.EventHup), nil)
	default:
		b.finishLocked(r, int(backend.EventIn|backend.EventErr), nil)
	}
}

// onFileLocked finishes a read or write, or moves a readv/writev to its
// next buffer after a full one.
func (b *Backend) onFileLocked(r *record, n int, errno windows.Errno) {
	op := r.op
	read := op.Kind == backend.KindRead || op.Kind == backend.KindReadv
	if read && (errno == windows.ERROR_HANDLE_EOF || errno == windows.ERROR_BROKEN_PIPE) {
		errno, n = 0, 0 // end of file, or of a pipe whose writer closed
	}
	if errno != 0 {
		if r.done > 0 {
			// A readv/writev that moved bytes reports them; the next call
			// meets the error again.
			b.finishLocked(r, r.done, nil)
			return
		}
		b.finishLocked(r, 0, b.errLocked(r, errno))
		return
	}
	b.advanceLocked(r, n)
	if op.Kind == backend.KindReadv || op.Kind == backend.KindWritev {
		r.done += n
		if n == len(op.Bufs[r.vec]) && r.vec+1 < len(op.Bufs) && r.done < backend.MaxRW && !r.canceled && !b.closed {
			r.vec++
			for r.vec < len(op.Bufs) && len(op.Bufs[r.vec]) == 0 {
				r.vec++
			}
			if r.vec < len(op.Bufs) {
				b.startFileLocked(r)
				return
			}
		}
		b.finishLocked(r, r.done, nil)
		return
	}
	b.finishLocked(r, n, nil)
}

// advanceLocked moves the descriptor's current position past n bytes of an
// Offset -1 op.
func (b *Backend) advanceLocked(r *record, n int) {
	if r.op.Offset == -1 && r.fd != nil {
		r.fd.pos += int64(n)
	}
}

// cancelLocked asks r's op to stop: CancelIoEx on its OVERLAPPED for kernel
// ops (the packet then arrives with ERROR_OPERATION_ABORTED, or with the
// result if it won); a timeout op completes here with ErrCanceled. It
// reports whether the request reached the op.
func (b *Backend) cancelLocked(r *record) bool {
	r.canceled = true
	switch {
	case r.op.Kind == backend.KindTimeout:
		b.finishLocked(r, 0, backend.ErrCanceled)
		return true
	case r.inKernel && r.op.Kind != backend.KindNop:
		err := windows.CancelIoEx(r.h, &r.ov)
		return err == nil
	}
	// A nop's packet or a close waiting for its descriptor: it completes
	// with its own result.
	return true
}

// expireLocked fires the timers due at now: a timeout op completes with
// ErrTimeout, an op with a linked timeout is cancelled and will complete
// with ErrTimeout.
func (b *Backend) expireLocked(now int64) {
	for len(b.timers) > 0 && b.timers[0].deadline <= now {
		r := heap.Pop(&b.timers).(*record)
		if r.op.Kind == backend.KindTimeout {
			b.finishLocked(r, 0, backend.ErrTimeout)
			continue
		}
		r.timedOut = true
		b.cancelLocked(r)
	}
}

// toErrno extracts the code of an error a Windows call returned.
func toErrno(err error) windows.Errno {
	if errno, ok := err.(windows.Errno); ok {
		return errno
	}
	return windows.ERROR_GEN_FAILURE
}
