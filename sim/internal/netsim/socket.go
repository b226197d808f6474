package netsim

import (
	"net/netip"
	"strconv"

	"github.com/blitz-go/blitz/backend"
)

// Default socket buffer sizes, for OptSendBuffer and OptRecvBuffer.
const (
	defaultSendBuffer = 256 << 10
	defaultRecvBuffer = 256 << 10
	// defaultBacklog is a listener's backlog when Listen is given <= 0.
	defaultBacklog = 4096
)

// sockState is where a socket is in its life.
type sockState uint8

const (
	sockNew sockState = iota
	sockListening
	sockConnecting
	sockConnected
)

// socket is a descriptor of the simulated network: a TCP listener or
// connection, or a UDP socket. Every field is guarded by World.mu (the
// model runs only with it held); none is read or written without it.
type socket struct {
	// b is the backend (incarnation) whose descriptor fd the socket is,
	// in b.fds from Socket (or an accept) to its close; fam and typ are
	// fixed at creation.
	b   *simBackend
	fd  backend.FD
	fam backend.Family
	typ backend.SockType
	// local is the bound address, valid once bound is set (then the
	// socket is b.h.ports[portKey{typ, local.Port()}] until its close);
	// peer is the connected peer of a stream socket (with ep) or a
	// datagram socket (with state sockConnected).
	local, peer netip.AddrPort
	bound       bool
	state       sockState
	// closed is set by close; dead when the host's incarnation died
	// (dropSockets): the end is gone without a word to its peer.
	closed, dead bool
	// opts holds the values set with SetOption; option reads them with
	// their defaults. OptSendBuffer and OptRecvBuffer are copied to ep.
	opts map[backend.Option]int
	// err is the pending error OptError reads and clears (a failed
	// connect).
	err error

	// ep is a stream socket's connection end (ep.sock is this socket)
	// from its connect or accept to its close.
	ep *endpoint
	// backlog holds a listener's connections not yet accepted, oldest
	// first, up to backlogMax (each with listener set to this socket).
	backlog    []*endpoint
	backlogMax int
	// dq holds a datagram socket's received datagrams, oldest first;
	// dqBytes is their total size, bounded by OptRecvBuffer.
	dq      []datagram
	dqBytes int

	// reads (accept, recv, recvfrom), writes (send, sendto) and polls are
	// the ops waiting on the socket, in submission order; each such
	// pending's sock is this socket (finish takes it out, unqueue).
	reads, writes, polls []*pending
}

// option returns the value of o, or its default.
func (s *socket) option(o backend.Option) int {
	if v, ok := s.opts[o]; ok {
		return v
	}
	switch o {
	case backend.OptSendBuffer:
		return defaultSendBuffer
	case backend.OptRecvBuffer:
		return defaultRecvBuffer
	case backend.OptLinger:
		return -1
	case backend.OptMulticastLoop, backend.OptMulticastTTL:
		return 1
	}
	return 0
}

// unqueue removes p from the socket's queues.
func (s *socket) unqueue(p *pending) {
	if unqueue(&s.reads, p) || unqueue(&s.writes, p) {
		return
	}
	unqueue(&s.polls, p)
}

// unqueue removes p from q, reporting whether it was there.
func unqueue(q *[]*pending, p *pending) bool {
	for i, x := range *q {
		if x == p {
			n := copy((*q)[i:], (*q)[i+1:])
			(*q)[i+n] = nil
			*q = (*q)[:i+n]
			return true
		}
	}
	return false
}

// appendName appends the socket's description for traces.
func (s *socket) appendName(b []byte) []byte {
	if s.typ == backend.Datagram {
		b = append(b, "udp fd="...)
	} else {
		b = append(b, "tcp fd="...)
	}
	b = strconv.AppendInt(b, int64(s.fd), 10)
	b = append(b, ' ')
	return s.local.AppendTo(b)
}

// sock returns the open socket fd, or an error for op.
func (b *simBackend) sock(fd backend.FD, op string) (*socket, error) {
	if b.dead {
		return nil, backend.ErrClosed
	}
	s, ok := b.fds[fd].(*socket)
	if !ok {
		if b.fds[fd] != nil {
			return nil, oserr(op, backend.ErrInvalid) // ENOTSOCK
		}
		return nil, oserr(op, backend.ErrClosed)
	}
	return s, nil
}

// Socket makes a socket. FamilyUnix is not simulated (ErrUnsupported).
func (b *simBackend) Socket(family backend.Family, typ backend.SockType) (fd backend.FD, err error) {
	switch {
	case family == backend.FamilyUnix:
		return backend.InvalidFD, backend.NewError("socket", backend.ErrUnsupported, nil)
	case family != backend.FamilyInet4 && family != backend.FamilyInet6,
		typ != backend.Stream && typ != backend.Datagram:
		return backend.InvalidFD, oserr("socket", backend.ErrInvalid)
	}
	b.w.locked(func() {
		if b.closed {
			fd, err = backend.InvalidFD, backend.ErrClosed
			return
		}
		s := &socket{b: b, fam: family, typ: typ, opts: make(map[backend.Option]int)}
		s.fd = b.newFD(s)
		fd = s.fd
	})
	return fd, err
}

// unspecified returns the unspecified address of the socket's family.
func (s *socket) unspecified() netip.Addr {
	if s.fam == backend.FamilyInet6 {
		return netip.IPv6Unspecified()
	}
	return netip.IPv4Unspecified()
}

// Bind binds fd to the host's address, the unspecified address or a
// loopback address, with port 0 picking an ephemeral port.
func (b *simBackend) Bind(fd backend.FD, a backend.Addr) (err error) {
	b.w.locked(func() {
		s, e := b.sock(fd, "bind")
		if e != nil {
			err = e
			return
		}
		err = b.bind(s, a)
	})
	return err
}

// bind binds s to a.
func (b *simBackend) bind(s *socket, a backend.Addr) error {
	if a.Family != backend.FamilyInet4 && a.Family != backend.FamilyInet6 {
		return oserr("bind", backend.ErrInvalid)
	}
	if s.bound {
		return oserr("bind", backend.ErrInvalid)
	}
	ip := a.IP.Addr().Unmap()
	if !ip.IsUnspecified() && !ip.IsLoopback() && ip != b.h.addr {
		return oserr("bind", backend.ErrAddrNotAvailable)
	}
	port := a.IP.Port()
	if port == 0 {
		if port = b.h.ephemeral(s.typ); port == 0 {
			return oserr("bind", backend.ErrAddrInUse)
		}
	} else if b.h.ports[portKey{s.typ, port}] != nil {
		return oserr("bind", backend.ErrAddrInUse)
	}
	b.h.ports[portKey{s.typ, port}] = s
	s.local, s.bound = netip.AddrPortFrom(ip, port), true
	return nil
}

// autobind binds s to an ephemeral port of the unspecified address if it
// is not bound.
func (b *simBackend) autobind(s *socket) error {
	if s.bound {
		return nil
	}
	return b.bind(s, backend.AddrPort(netip.AddrPortFrom(s.unspecified(), 0)))
}

// Listen makes the stream socket fd a listener (binding it to an
// ephemeral port if it is not bound).
func (b *simBackend) Listen(fd backend.FD, backlog int) (err error) {
	b.w.locked(func() {
		s, e := b.sock(fd, "listen")
		switch {
		case e != nil:
			err = e
		case s.typ != backend.Stream || s.state != sockNew && s.state != sockListening:
			err = oserr("listen", backend.ErrInvalid)
		default:
			if err = b.autobind(s); err != nil {
				return
			}
			if backlog <= 0 {
				backlog = defaultBacklog
			}
			s.state, s.backlogMax = sockListening, backlog
			if w := b.w; w.tracing() {
				w.emitDetail(b.h, "listen", s.appendName(w.detail()))
			}
		}
	})
	return err
}

// LocalAddr returns fd's bound address (the unspecified address and port
// 0 when unbound).
func (b *simBackend) LocalAddr(fd backend.FD) (a backend.Addr, err error) {
	b.w.locked(func() {
		s, e := b.sock(fd, "getsockname")
		if e != nil {
			err = e
			return
		}
		if s.bound {
			a = s.addr(s.local)
		} else {
			a = s.addr(netip.AddrPortFrom(s.unspecified(), 0))
		}
	})
	return a, err
}

// PeerAddr returns fd's peer, ErrNotConnected if it has none.
func (b *simBackend) PeerAddr(fd backend.FD) (a backend.Addr, err error) {
	b.w.locked(func() {
		s, e := b.sock(fd, "getpeername")
		switch {
		case e != nil:
			err = e
		case s.state != sockConnected:
			err = oserr("getpeername", backend.ErrNotConnected)
		default:
			a = s.addr(s.peer)
		}
	})
	return a, err
}

// addr returns ap as an Addr of the socket's family (IPv4 addresses of an
// IPv6 socket are IPv4-mapped, as the kernel reports them).
func (s *socket) addr(ap netip.AddrPort) backend.Addr {
	if s.fam == backend.FamilyInet6 && ap.Addr().Is4() {
		return backend.Addr{Family: backend.FamilyInet6, IP: netip.AddrPortFrom(netip.AddrFrom16(ap.Addr().As16()), ap.Port())}
	}
	return backend.AddrPort(ap)
}

// SetOption keeps the value of opt; OptError is read only. Send and
// receive buffer sizes take effect (see the package doc); the others are
// only kept.
func (b *simBackend) SetOption(fd backend.FD, opt backend.Option, value int) (err error) {
	b.w.locked(func() {
		s, e := b.sock(fd, "setsockopt")
		switch {
		case e != nil:
			err = e
		case opt == backend.OptError || opt < backend.OptNoDelay || opt > backend.OptError:
			err = oserr("setsockopt", backend.ErrInvalid)
		default:
			s.opts[opt] = value
			if s.ep != nil {
				s.ep.sndbuf, s.ep.rcvbuf = s.option(backend.OptSendBuffer), s.option(backend.OptRecvBuffer)
				b.w.service(s)
			}
		}
	})
	return err
}

// Option returns the value of opt; OptError returns and clears the
// pending error.
func (b *simBackend) Option(fd backend.FD, opt backend.Option) (v int, err error) {
	b.w.locked(func() {
		s, e := b.sock(fd, "getsockopt")
		switch {
		case e != nil:
			err = e
		case opt == backend.OptError:
			v, s.err = errnoOf(s.err), nil
		case opt < backend.OptNoDelay || opt > backend.OptError:
			err = oserr("getsockopt", backend.ErrInvalid)
		default:
			v = s.option(opt)
		}
	})
	return v, err
}

// Shutdown half-closes a connected stream socket: the write half sends a
// FIN after the data in flight, the read half makes reads return 0.
func (b *simBackend) Shutdown(fd backend.FD, how backend.ShutdownHow) (err error) {
	b.w.locked(func() {
		s, e := b.sock(fd, "shutdown")
		switch {
		case e != nil:
			err = e
		case how < backend.ShutdownRead || how > backend.ShutdownBoth:
			err = oserr("shutdown", backend.ErrInvalid)
		case s.typ != backend.Stream || s.ep == nil || s.state != sockConnected:
			err = oserr("shutdown", backend.ErrNotConnected)
		default:
			if how != backend.ShutdownWrite {
				s.ep.rShut = true
			}
			if how != backend.ShutdownRead {
				b.w.sendFin(s.ep)
			}
			b.w.service(s)
		}
	})
	return err
}

// JoinGroup is not simulated: multicast is ErrUnsupported.
func (b *simBackend) JoinGroup(backend.FD, netip.Addr, int) error {
	return backend.NewError("join group", backend.ErrUnsupported, nil)
}

// startSocketOp starts op p on socket s.
func (b *simBackend) startSocketOp(p *pending, s *socket) {
	op := p.op
	switch op.Kind {
	case backend.KindAccept:
		if s.state != sockListening {
			b.post(b.finish(p, 0, oserr("accept", backend.ErrInvalid)))
			return
		}
		b.queue(p, s, &s.reads)
	case backend.KindConnect:
		b.connect(p, s)
	case backend.KindRecv, backend.KindRecvFrom, backend.KindRead, backend.KindReadv:
		if op.Flags&backend.SelectBuffer != 0 && b.groups[op.BufferGroup] == nil {
			b.post(b.finish(p, 0, oserr("recv", backend.ErrNoBuffers)))
			return
		}
		b.queue(p, s, &s.reads)
	case backend.KindSend, backend.KindWrite, backend.KindWritev:
		if s.typ == backend.Datagram {
			b.sendDatagram(p, s, s.peer, s.state == sockConnected)
			return
		}
		b.queue(p, s, &s.writes)
	case backend.KindSendTo:
		if s.typ == backend.Datagram {
			b.sendDatagram(p, s, normAP(op.Addr.IP), true)
			return
		}
		b.queue(p, s, &s.writes)
	case backend.KindPoll:
		b.queue(p, s, &s.polls)
	default: // fsync, ftruncate, statx of a socket
		b.post(b.finish(p, 0, oserr(op.Kind.String(), backend.ErrInvalid)))
	}
}

// queue puts p in one of s's queues and serves the socket.
func (b *simBackend) queue(p *pending, s *socket, q *[]*pending) {
	p.sock = s
	*q = append(*q, p)
	b.w.service(s)
}

// service completes what the ops waiting on s can do now, in order.
func (w *World) service(s *socket) {
	if s == nil || s.b.closed {
		return
	}
	b := s.b
	for len(s.reads) > 0 && b.serveRead(s, s.reads[0]) {
	}
	for len(s.writes) > 0 && b.serveWrite(s, s.writes[0]) {
	}
	for i := 0; i < len(s.polls); {
		p := s.polls[i]
		if ev := s.readiness() & (p.op.Events | backend.EventErr | backend.EventHup); ev != 0 {
			b.post(b.finish(p, int(ev), nil))
			continue
		}
		i++
	}
}

// serveRead serves the first read-side op of s, reporting whether it did
// (the op completed, or a Multishot accept produced a connection).
func (b *simBackend) serveRead(s *socket, p *pending) bool {
	switch {
	case p.op.Kind == backend.KindAccept:
		return b.serveAccept(s, p)
	case s.typ == backend.Datagram:
		return b.serveDatagramRead(s, p)
	}
	return b.serveStreamRead(s, p)
}

// serveWrite serves the first write-side op of a stream socket s.
func (b *simBackend) serveWrite(s *socket, p *pending) bool {
	return b.serveStreamWrite(s, p)
}

// readiness returns s's ready events, as poll(2) would.
func (s *socket) readiness() backend.Events {
	var ev backend.Events
	switch {
	case s.typ == backend.Datagram:
		ev = backend.EventOut
		if len(s.dq) > 0 {
			ev |= backend.EventIn
		}
	case s.state == sockListening:
		if len(s.backlog) > 0 {
			ev |= backend.EventIn
		}
	case s.ep != nil && s.state == sockConnected:
		ep := s.ep
		if ep.rq.len() > 0 || ep.finRcvd || ep.rShut || ep.err != nil {
			ev |= backend.EventIn
		}
		if ep.room() > 0 || ep.err != nil || ep.broken || ep.wShut {
			ev |= backend.EventOut
		}
		if ep.err != nil {
			ev |= backend.EventErr
		}
		if ep.broken || ep.finRcvd && ep.wShut {
			ev |= backend.EventHup
		}
	case s.err != nil:
		ev |= backend.EventErr | backend.EventOut
	}
	return ev
}

// normAP returns ap with its address unmapped.
func normAP(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// opBufs returns the buffers of a data op, within MaxRW and MaxIOV. For
// a one-buffer op it is w.iov, valid until the next call.
func (w *World) opBufs(op *backend.Op) [][]byte {
	if op.Kind == backend.KindReadv || op.Kind == backend.KindWritev {
		return backend.LimitVec(op.Bufs)
	}
	w.iov[0] = backend.LimitRW(op.Buf)
	return w.iov[:]
}

// gather appends up to limit bytes of bufs to out and returns it.
func gather(out []byte, bufs [][]byte, limit int) []byte {
	limit += len(out)
	for _, b := range bufs {
		if len(out)+len(b) > limit {
			return append(out, b[:limit-len(out)]...)
		}
		out = append(out, b...)
	}
	return out
}

// scatter copies data into bufs and returns how much fitted.
func scatter(bufs [][]byte, data []byte) int {
	n := 0
	for _, b := range bufs {
		n += copy(b, data[n:])
		if n == len(data) {
			break
		}
	}
	return n
}

// bufsLen returns the total length of bufs.
func bufsLen(bufs [][]byte) int {
	n := 0
	for _, b := range bufs {
		n += len(b)
	}
	return n
}

// bufGroup is a registered buffer group. Its buffers, and its
// bookkeeping of them, are made when first taken, so that a runtime
// registering 1,024 buffers of 4 KiB (the default) costs the simulation
// only those its reads use. Guarded by World.mu.
type bufGroup struct {
	// bufs are the buffers made so far, by id: ids 0 to len(bufs)-1 (a
	// buffer is taken first with the lowest id never taken).
	bufs [][]byte
	// count and size are the group's buffer count and size.
	count, size int
	// free are the ids of the buffers given back, the most recently given
	// back last (taken first, before a buffer never taken, so that few are
	// ever made); held marks, by id, those the caller holds.
	free []uint16
	held []bool
}

// RegisterBufferGroup makes group id with count buffers of size bytes.
func (b *simBackend) RegisterBufferGroup(group uint16, count, size int) (err error) {
	if count < 1 || count > 32768 || count&(count-1) != 0 || size < 1 || size > 1<<20 {
		return backend.NewError("register buffers", backend.ErrInvalid, nil)
	}
	b.w.locked(func() {
		switch {
		case b.closed:
			err = backend.ErrClosed
		case b.groups[group] != nil:
			err = backend.NewError("register buffers", backend.ErrExists, nil)
		default:
			b.groups[group] = &bufGroup{count: count, size: size}
		}
	})
	return err
}

// Buffer returns buffer id of group, nil if there is none.
func (b *simBackend) Buffer(group, id uint16) (buf []byte) {
	b.w.locked(func() {
		if g := b.groups[group]; g != nil && int(id) < len(g.bufs) {
			buf = g.bufs[id]
		}
	})
	return buf
}

// ReleaseBuffer gives buffer id back to group.
func (b *simBackend) ReleaseBuffer(group, id uint16) (err error) {
	b.w.locked(func() {
		g := b.groups[group]
		if g == nil || int(id) >= len(g.held) || !g.held[id] {
			err = backend.NewError("release buffer", backend.ErrInvalid, nil)
			return
		}
		g.held[id] = false
		g.free = append(g.free, id)
	})
	return err
}

// take takes a free buffer of group g, false if none is free: the one
// given back last, else the one of the lowest id never taken.
func (g *bufGroup) take() (uint16, bool) {
	var id uint16
	switch {
	case len(g.free) > 0:
		id = g.free[len(g.free)-1]
		g.free = g.free[:len(g.free)-1]
	case len(g.bufs) < g.count:
		id = uint16(len(g.bufs))
		g.bufs = append(g.bufs, make([]byte, g.size))
		g.held = append(g.held, false)
	default:
		return 0, false
	}
	g.held[id] = true
	return id, true
}
