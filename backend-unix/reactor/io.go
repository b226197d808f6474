//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package reactor

import (
	"errors"
	"net/netip"
	"syscall"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
	"golang.org/x/sys/unix"
)

var (
	errInFlight = errors.New("op already in flight")
	errBadFD    = errors.New("descriptor out of range")
	errNoGroup  = errors.New("buffer group not registered")
	errNoRoom   = errors.New("empty completion slice")
)

// tokConnecting, in a connect op's Internal.Token (guarded by the fdState's
// mutex): connect(2) returned EINPROGRESS; on writability read SO_ERROR.
const tokConnecting = 1

// start runs op at once when nothing of its side waits before it, and
// otherwise, or on EAGAIN, queues it, registering the descriptor and arming
// the op's linked timeout. fs.mu is held.
func (r *Reactor) start(fs *fdState, op *backend.Op) {
	fd := int(op.FD)
	if r.closed.Load() {
		r.finish(op, backend.Completion{Err: backend.ErrCanceled})
		return
	}
	if q := fs.queue(op); q == nil || q.empty() || op.Kind == backend.KindPoll {
		if c, again := r.perform(fs, fd, op); !again {
			r.finish(op, c)
			return
		}
	}
	if !fs.registered {
		if err := r.poller.Register(fd); err != nil {
			r.finish(op, backend.Completion{Err: unixio.Error(op.Kind.String(), err)})
			return
		}
		fs.registered = true
	}
	fs.queues().queue(op).push(op)
	if op.Timeout > 0 {
		r.mu.Lock()
		r.armLocked(op)
		r.mu.Unlock()
	}
}

// run performs q's ops in order until one would block. q is one of
// fs.qs's; fs.mu is held.
func (r *Reactor) run(fs *fdState, fd int, q *opQueue) {
	for op := q.head; op != nil; op = q.head {
		c, again := r.perform(fs, fd, op)
		if again {
			return
		}
		q.remove(op)
		r.finish(op, c)
	}
}

// runPolls completes the polls whose events are ready. fs.qs is not nil;
// fs.mu is held.
func (r *Reactor) runPolls(fs *fdState, fd int) {
	ready, err := pollNow(fd, backend.EventIn|backend.EventOut)
	pq := &fs.qs.pq
	for op := pq.head; op != nil; {
		next := op.Internal.Next
		if m := ready & (op.Events | backend.EventErr | backend.EventHup); m != 0 || err != nil {
			pq.remove(op)
			r.finish(op, backend.Completion{N: int(m), Err: unixio.Error("poll", err)})
		}
		op = next
	}
}

// perform makes op's system call once. again reports EAGAIN (the op must
// wait); otherwise c is the op's final completion. A Multishot accept
// posts its More completions itself. No call moves more than
// backend.MaxRW bytes or hands the kernel more than backend.MaxIOV
// buffers: a longer op completes short, as on every backend.
func (r *Reactor) perform(fs *fdState, fd int, op *backend.Op) (c backend.Completion, again bool) {
	switch op.Kind {
	case backend.KindRecv:
		if op.Flags&backend.SelectBuffer != 0 {
			return r.recvSelect(fd, op)
		}
		n, err := read(fd, backend.LimitRW(op.Buf))
		return result(op, n, err)
	case backend.KindSend:
		n, err := send(fd, backend.LimitRW(op.Buf))
		return result(op, n, err)
	case backend.KindRecvFrom:
		return recvFrom(fd, op)
	case backend.KindSendTo:
		return sendTo(fd, op)
	case backend.KindAccept:
		return r.accept(fd, op)
	case backend.KindConnect:
		return connect(fd, op)
	case backend.KindPoll:
		ready, err := pollNow(fd, op.Events)
		ready &= op.Events | backend.EventErr | backend.EventHup
		if ready == 0 && err == nil {
			return c, true
		}
		return backend.Completion{N: int(ready), Err: unixio.Error("poll", err)}, false
	}
	return fileIO(fs, fd, op)
}

// result makes the completion of a system call's result.
func result(op *backend.Op, n int, err error) (backend.Completion, bool) {
	switch {
	case err == nil:
		return backend.Completion{N: n}, false
	case unixio.IsAgain(err):
		return backend.Completion{}, true
	}
	return backend.Completion{Err: unixio.Error(op.Kind.String(), err)}, false
}

// read is a receive on the non-blocking socket or pipe fd (unixio.Read:
// a raw system call on Linux); send is its send.
func read(fd int, b []byte) (int, error) {
	for {
		n, err := unixio.Read(fd, b)
		if err != unix.EINTR {
			return max(n, 0), err
		}
	}
}

func send(fd int, b []byte) (int, error) {
	for {
		n, err := unixio.Send(fd, b)
		if err != unix.EINTR {
			return max(n, 0), err
		}
	}
}

func recvFrom(fd int, op *backend.Op) (backend.Completion, bool) {
	for {
		n, sa, err := unix.Recvfrom(fd, backend.LimitRW(op.Buf), 0)
		if err == unix.EINTR {
			continue
		}
		c, again := result(op, max(n, 0), err)
		if err == nil && sa != nil {
			c.Addr = unixio.FromSockaddr(sa)
		}
		return c, again
	}
}

func sendTo(fd int, op *backend.Op) (backend.Completion, bool) {
	sa, err := sockaddrFor(fd, op.Addr)
	if err != nil {
		return backend.Completion{Err: err}, false
	}
	for {
		n, err := unix.SendmsgN(fd, backend.LimitRW(op.Buf), nil, sa, unixio.SendFlags) // longer: EMSGSIZE
		if err != unix.EINTR {
			return result(op, max(n, 0), err)
		}
	}
}

// recvSelect receives into a buffer of the op's group, taken only now. An
// empty group gives ErrNoBuffers when data is waiting; end of stream and
// errors give the buffer back.
func (r *Reactor) recvSelect(fd int, op *backend.Op) (backend.Completion, bool) {
	g := r.groups.get(op.BufferGroup)
	id, ok := g.Take()
	if !ok {
		return peekNoBuffer(fd, op)
	}
	n, err := read(fd, g.Buffer(id))
	if err != nil || n == 0 {
		g.Put(id)
		return result(op, n, err)
	}
	return backend.Completion{N: n, Flags: backend.HasBuffer, BufferID: id}, false
}

// peekNoBuffer looks, without taking it, whether data waits on fd: if so
// the recv fails with ErrNoBuffers; at end of stream it completes with 0.
func peekNoBuffer(fd int, op *backend.Op) (backend.Completion, bool) {
	var b [1]byte
	for {
		n, _, err := unix.Recvfrom(fd, b[:], unix.MSG_PEEK)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return result(op, 0, err)
		case n == 0:
			return backend.Completion{}, false
		}
		return backend.Completion{Err: backend.NewError("recv", backend.ErrNoBuffers, unix.ENOBUFS)}, false
	}
}

// accept takes connections: one for a plain accept; for a Multishot one,
// every connection waiting, each posted with More, until EAGAIN (the op
// then waits) or an error (its final completion).
func (r *Reactor) accept(fd int, op *backend.Op) (backend.Completion, bool) {
	for {
		nfd, addr, err := acceptConn(fd)
		if err != nil {
			return result(op, 0, err)
		}
		r.forget(nfd)
		c := backend.Completion{FD: backend.FD(nfd), Addr: addr}
		if op.Flags&backend.Multishot == 0 {
			return c, false
		}
		r.post(op, c)
	}
}

// connect starts a connection, or, once connect(2) said EINPROGRESS and the
// socket became writable, reads its outcome from SO_ERROR.
func connect(fd int, op *backend.Op) (backend.Completion, bool) {
	if op.Internal.Token&tokConnecting != 0 {
		v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
		if err == nil && v != 0 {
			err = syscall.Errno(v)
		}
		if err == nil {
			if _, perr := unix.Getpeername(fd); perr == unix.ENOTCONN {
				return backend.Completion{}, true // not yet: a spurious wake
			}
		}
		return result(op, 0, err)
	}
	sa, err := sockaddrFor(fd, op.Addr)
	if err != nil {
		return backend.Completion{Err: err}, false
	}
	err = unix.Connect(fd, sa)
	switch err {
	case unix.EINPROGRESS, unix.EINTR, unix.EALREADY:
		op.Internal.Token |= tokConnecting
		return backend.Completion{}, true
	}
	return result(op, 0, err)
}

// sockaddrFor converts a for socket fd, mapping an IPv4 address when fd is
// an IPv6 socket.
func sockaddrFor(fd int, a backend.Addr) (unix.Sockaddr, error) {
	if a.Family == backend.FamilyInet4 {
		if sa, err := unix.Getsockname(fd); err == nil {
			if _, ok := sa.(*unix.SockaddrInet6); ok {
				ip := netip.AddrFrom16(a.IP.Addr().As16())
				a = backend.Addr{Family: backend.FamilyInet6, IP: netip.AddrPortFrom(ip, a.IP.Port())}
			}
		}
	}
	return unixio.Sockaddr(a)
}

// pollNow returns fd's readiness for events now (plus errors and hang-up).
func pollNow(fd int, events backend.Events) (backend.Events, error) {
	fds := [1]unix.PollFd{{Fd: int32(fd)}}
	if events&backend.EventIn != 0 {
		fds[0].Events |= unix.POLLIN
	}
	if events&backend.EventOut != 0 {
		fds[0].Events |= unix.POLLOUT
	}
	for {
		n, err := unix.Poll(fds[:], 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return 0, err
		}
		break
	}
	re := fds[0].Revents
	if re&unix.POLLNVAL != 0 {
		return 0, unix.EBADF
	}
	return unixio.PollEvents(int(re)), nil
}

// fileIO performs read, write, readv and writev: at Offset, or at the
// current position for -1. Regular files and block devices never block;
// other descriptors are made non-blocking on first use.
func fileIO(fs *fdState, fd int, op *backend.Op) (backend.Completion, bool) {
	if !fs.probed {
		probe(fs, fd)
	}
	var n int
	var err error
	buf := backend.LimitRW(op.Buf)
	var bufs [][]byte
	if op.Kind == backend.KindReadv || op.Kind == backend.KindWritev {
		bufs = backend.LimitVec(op.Bufs)
	}
	for {
		switch op.Kind {
		case backend.KindRead:
			if op.Offset < 0 {
				n, err = unix.Read(fd, buf)
			} else {
				n, err = unix.Pread(fd, buf, op.Offset)
			}
		case backend.KindWrite:
			if op.Offset < 0 {
				n, err = unix.Write(fd, buf)
			} else {
				n, err = unix.Pwrite(fd, buf, op.Offset)
			}
		case backend.KindReadv:
			n, err = readv(fd, bufs, op.Offset)
		case backend.KindWritev:
			n, err = writev(fd, bufs, op.Offset)
		default:
			return backend.Completion{Err: backend.NewError(op.Kind.String(), backend.ErrInvalid, nil)}, false
		}
		if err != unix.EINTR {
			return result(op, max(n, 0), err)
		}
	}
}

// probe classifies fd for read and write ops. fs.mu is held.
func probe(fs *fdState, fd int) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return // the op itself reports the error
	}
	fs.probed = true
	switch uint32(st.Mode) & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFBLK:
		fs.isFile = true
		return
	}
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil && fl&unix.O_NONBLOCK == 0 {
		_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl|unix.O_NONBLOCK)
	}
}
