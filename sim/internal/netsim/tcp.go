package netsim

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// epState is where a TCP connection end is.
type epState uint8

const (
	// epSynSent: connecting, the SYN sent, no answer yet.
	epSynSent epState = iota + 1
	// epEstablished: connected (a server end from the SYN's arrival).
	epEstablished
	// epGone: forgotten by its host (closed, reset, timed out, crashed).
	epGone
)

// endpoint is one end of a TCP connection, in its host's conns from the
// SYN to its close. Every field is guarded by World.mu (the model runs
// only with it held); none is read or written without it.
type endpoint struct {
	// id orders endpoints deterministically (creation order). Set once,
	// by newEndpoint.
	id uint64
	// host is where the end is, peerHost where the other is; local and
	// remote are its addresses, as host.conns keys it (connKey{local,
	// remote}). Set once, by newEndpoint.
	host, peerHost *Host
	local, remote  netip.AddrPort
	// state moves epSynSent -> epEstablished -> epGone (forget); a
	// server end starts established.
	state epState
	// sock is the socket that owns the end (its sock.ep is this end),
	// nil while it waits in the backlog of listener and after close;
	// listener is set only while it waits there (serveAccept moves it
	// to sock).
	sock, listener *socket
	// connect is the connect op waiting for the SYN's answer while
	// state is epSynSent (that op's pending.ep is this end); cleared
	// when the answer or a reset arrives.
	connect *pending
	// peer is the other end (peer.peer is this one once the SYN was
	// accepted), for the flow control only: its unread data (peer.rq
	// beyond peer.rcvbuf) limits what this end may send.
	peer *endpoint
	// rq is the data received and not yet read, written by deliverSeg,
	// read by the socket's reads.
	rq byteQueue
	// finRcvd: the peer's FIN arrived (end of stream after rq); rShut:
	// the read half is shut; wShut: the FIN was sent; broken: a reset or
	// a timeout ended the connection and was reported.
	finRcvd, rShut, wShut, broken bool
	// err is the error to report next (ECONNRESET, ETIMEDOUT), once:
	// set with broken by takeErr.
	err error
	// inflight counts the bytes sent and not yet arrived: sendData adds,
	// deliverSeg subtracts; with sndbuf it bounds room.
	inflight int
	// sndbuf and rcvbuf are the socket's buffer sizes (its
	// OptSendBuffer and OptRecvBuffer, copied when set).
	sndbuf, rcvbuf int
	// lastArrive is the arrival of the last segment sent, so that the
	// next arrives after it (TCP is ordered).
	lastArrive time.Time
	// held are the segments a partition or a down peer holds back, in
	// order, since heldSince; the end is in World.holding while it has
	// some.
	held      []*segment
	heldSince time.Time
}

// segKind is what a segment carries.
type segKind uint8

const (
	segSyn segKind = iota + 1
	segSynAck
	segData
	segFin
	segRst
)

var segNames = [...]string{segSyn: "syn", segSynAck: "synack", segData: "data", segFin: "fin", segRst: "rst"}

// segment is a TCP segment (or a datagram, for udp.go) on its way: from
// is the sending end (nil for a reset sent where no end exists, and for a
// datagram). A TCP segment other than a SYN goes back to the world's free
// list once delivered, its data's array kept for the next (newSeg).
// Guarded by World.mu.
type segment struct {
	kind     segKind
	src, dst netip.AddrPort
	data     []byte
	from     *endpoint
}

// maxPooledData bounds the data array a free segment keeps.
const maxPooledData = 64 << 10

// newSeg returns a segment of kind from src to dst, sent by from, with
// empty data (whose array may be reused), from the free list or new.
func (w *World) newSeg(kind segKind, src, dst netip.AddrPort, from *endpoint) *segment {
	var g *segment
	if n := len(w.freeSegs); n > 0 {
		g = w.freeSegs[n-1]
		w.freeSegs[n-1] = nil
		w.freeSegs = w.freeSegs[:n-1]
	} else {
		g = new(segment)
	}
	g.kind, g.src, g.dst, g.data, g.from = kind, src, dst, g.data[:0], from
	return g
}

// freeSeg puts g, delivered, on the free list.
func (w *World) freeSeg(g *segment) {
	data := g.data[:0]
	if cap(data) > maxPooledData {
		data = nil
	}
	*g = segment{data: data}
	w.freeSegs = append(w.freeSegs, g)
}

// emitSeg traces an event of host h about the TCP segment g. It is made
// for every segment sent and delivered, so it is built with appends
// rather than fmt, and only when tracing.
func (w *World) emitSeg(h *Host, kind string, g *segment) {
	if !w.tracing() {
		return
	}
	b := append(w.detail(), "tcp "...)
	b = g.src.AppendTo(b)
	b = append(b, "->"...)
	b = g.dst.AppendTo(b)
	b = append(b, ' ')
	b = append(b, segNames[g.kind]...)
	if g.kind == segData {
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(len(g.data)), 10)
		b = append(b, 'B')
	}
	w.emitDetail(h, kind, b)
}

// emitConn traces an event of host h about the connection from local to
// remote: "tcp local->remote" and suffix.
func (w *World) emitConn(h *Host, kind string, local, remote netip.AddrPort, suffix string) {
	if !w.tracing() {
		return
	}
	b := append(w.detail(), "tcp "...)
	b = local.AppendTo(b)
	b = append(b, "->"...)
	b = remote.AppendTo(b)
	b = append(b, suffix...)
	w.emitDetail(h, kind, b)
}

// room returns how many bytes the end may send now: its send buffer less
// what is in flight, less what overflows the peer's receive buffer.
func (ep *endpoint) room() int {
	r := ep.sndbuf - ep.inflight
	if p := ep.peer; p != nil {
		if over := p.rq.len() - p.rcvbuf; over > 0 {
			r -= over
		}
	}
	return max(r, 0)
}

// takeErr returns the pending error and marks the connection broken:
// later reads see end of stream, later writes EPIPE.
func (ep *endpoint) takeErr() error {
	err := ep.err
	ep.err, ep.broken = nil, true
	return err
}

// newEndpoint makes a connection end of h and registers it.
func (w *World) newEndpoint(h, peer *Host, local, remote netip.AddrPort, s *socket) *endpoint {
	w.seq++
	ep := &endpoint{id: w.seq, host: h, peerHost: peer, local: local, remote: remote, sock: s,
		sndbuf: defaultSendBuffer, rcvbuf: defaultRecvBuffer}
	if s != nil {
		ep.sndbuf, ep.rcvbuf = s.option(backend.OptSendBuffer), s.option(backend.OptRecvBuffer)
	}
	h.conns[connKey{local, remote}] = ep
	return ep
}

// forget removes ep from its host: segments for it now draw a reset. Its
// held segments are still sent (a FIN after close) unless dropped by the
// caller.
func (w *World) forget(ep *endpoint) {
	k := connKey{ep.local, ep.remote}
	if ep.host.conns[k] == ep {
		delete(ep.host.conns, k)
	}
	ep.state = epGone
	ep.rq.reset()
	if ep.peer != nil && ep.peer.sock != nil {
		w.service(ep.peer.sock) // its window opened
	}
}

// sourceAddr returns the address s sends from to dst.
func (b *simBackend) sourceAddr(s *socket, dst netip.Addr) netip.Addr {
	if s.bound && !s.local.Addr().IsUnspecified() {
		return s.local.Addr()
	}
	if dst.IsLoopback() || dst.IsUnspecified() {
		if dst.Is6() {
			return netip.IPv6Loopback()
		}
		return netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	return b.h.addr
}

// connect starts a connect op: a datagram socket just takes its peer; a
// stream socket sends a SYN and the op completes when the answer arrives,
// with ECONNREFUSED on a reset, or with ETIMEDOUT after the connect
// timeout.
func (b *simBackend) connect(p *pending, s *socket) {
	w := b.w
	dst := normAP(p.op.Addr.IP)
	if dst.Addr().IsUnspecified() {
		dst = netip.AddrPortFrom(b.sourceAddr(s, dst.Addr()), dst.Port())
	}
	if err := b.autobind(s); err != nil {
		b.post(b.finish(p, 0, err))
		return
	}
	if s.typ == backend.Datagram {
		s.peer, s.state = dst, sockConnected
		b.post(b.finish(p, 0, nil))
		return
	}
	if s.state != sockNew {
		b.post(b.finish(p, 0, oserr("connect", backend.ErrInvalid))) // EISCONN, EALREADY
		return
	}
	local := netip.AddrPortFrom(b.sourceAddr(s, dst.Addr()), s.local.Port())
	dh := w.route(b.h, dst.Addr())
	if dh == nil {
		e := w.newEvent(evUnreachable)
		e.b, e.p = b, p
		p.ev = w.schedule(b.h, w.clock.Add(w.latency(b.h, b.h)), e).ref()
		return
	}
	if b.h.conns[connKey{local, dst}] != nil {
		b.post(b.finish(p, 0, oserr("connect", backend.ErrAddrNotAvailable)))
		return
	}
	ep := w.newEndpoint(b.h, dh, local, dst, s)
	ep.state, ep.connect = epSynSent, p
	s.ep, s.local, s.peer, s.state, p.ep = ep, local, dst, sockConnecting, ep
	e := w.newEvent(evConnectTimeout)
	e.b, e.p, e.s = b, p, s
	p.ev = w.schedule(b.h, w.clock.Add(w.connectTimeout), e).ref()
	w.sendSyn(b, p, ep, &segment{kind: segSyn, src: local, dst: dst, from: ep}, synRTO)
}

// synRTO is the first SYN retransmission timeout, Linux's: a SYN that gets
// no answer is sent again after 1 s, then 2 s, 4 s, ... until the connect
// times out (SetConnectTimeout).
const synRTO = time.Second

// sendSyn sends syn for the connect p of ep, or loses it when the way is
// cut, and sends it again after rto while the connect waits for its
// answer. A duplicate that reaches the listener after the first is
// ignored there (acceptSyn).
func (w *World) sendSyn(b *simBackend, p *pending, ep *endpoint, syn *segment, rto time.Duration) {
	if w.blocked(b.h, ep.peerHost) {
		w.emitSeg(b.h, "lost", syn)
	} else {
		w.emitSeg(b.h, "connect", syn)
		w.sendSeg(ep, syn)
	}
	e := w.newEvent(evSynRetry)
	e.b, e.p, e.ep, e.seg, e.rto = b, p, ep, syn, 2*rto
	w.schedule(b.h, w.clock.Add(rto), e)
}

// sendSeg puts seg on the wire from ep, arriving after the segments ep
// sent before.
func (w *World) sendSeg(ep *endpoint, seg *segment) {
	at := w.arrival(ep.host, ep.peerHost, len(seg.data))
	if !at.After(ep.lastArrive) {
		at = ep.lastArrive.Add(time.Nanosecond)
	}
	ep.lastArrive = at
	e := w.newEvent(evSegment)
	e.h, e.seg = ep.peerHost, seg
	w.schedule(ep.peerHost, at, e)
}

// transmit sends seg from ep, or holds it while the way is blocked (and
// behind segments already held).
func (w *World) transmit(ep *endpoint, seg *segment) {
	if len(ep.held) == 0 && !w.blocked(ep.host, ep.peerHost) {
		w.sendSeg(ep, seg)
		return
	}
	if len(ep.held) == 0 {
		ep.heldSince = w.clock
		w.holding = append(w.holding, ep)
		if w.tcpTimeout > 0 {
			e := w.newEvent(evHoldTimeout)
			e.ep, e.since = ep, ep.heldSince
			w.schedule(ep.host, ep.heldSince.Add(w.tcpTimeout), e)
		}
	}
	w.emitSeg(ep.host, "hold", seg)
	ep.held = append(ep.held, seg)
}

// timeOut gives up a connection whose segments were held too long.
func (w *World) timeOut(ep *endpoint) {
	w.emitConn(ep.host, "timeout", ep.local, ep.remote, "")
	ep.held, ep.inflight = nil, 0
	ep.err = oserr("tcp", backend.ErrTimedOut)
	w.forget(ep)
	w.serviceEnd(ep)
}

// flushHeld sends the held segments whose way is open again.
func (w *World) flushHeld() {
	eps := w.holding
	w.holding = nil
	for _, ep := range eps {
		switch {
		case len(ep.held) == 0:
		case w.blocked(ep.host, ep.peerHost):
			w.holding = append(w.holding, ep)
		default:
			segs := ep.held
			ep.held = nil
			for _, g := range segs {
				w.sendSeg(ep, g)
			}
		}
	}
}

// sendData sends up to limit bytes of bufs from ep (the caller checked
// room, limit) and returns how many it sent.
func (w *World) sendData(ep *endpoint, bufs [][]byte, limit int) int {
	seg := w.newSeg(segData, ep.local, ep.remote, ep)
	seg.data = gather(seg.data, bufs, limit)
	n := len(seg.data)
	ep.inflight += n
	w.transmit(ep, seg)
	return n
}

// sendFin shuts ep's write half: a FIN follows its data.
func (w *World) sendFin(ep *endpoint) {
	if ep.wShut || ep.state != epEstablished {
		return
	}
	ep.wShut = true
	w.transmit(ep, w.newSeg(segFin, ep.local, ep.remote, ep))
}

// sendRst sends a reset from src on host h to dst, unordered, lost if the
// way is blocked.
func (w *World) sendRst(h *Host, src, dst netip.AddrPort) {
	dh := w.route(h, dst.Addr())
	if dh == nil || w.blocked(h, dh) {
		return
	}
	seg := w.newSeg(segRst, src, dst, nil)
	w.emitSeg(h, "send", seg)
	e := w.newEvent(evSegment)
	e.h, e.seg = dh, seg
	w.schedule(dh, w.arrival(h, dh, 0), e)
}

// deliverSeg is seg's arrival at host h.
func (w *World) deliverSeg(h *Host, seg *segment) {
	if from := seg.from; from != nil && seg.kind == segData {
		from.inflight -= len(seg.data)
		if from.sock != nil {
			defer w.service(from.sock)
		}
	}
	if h.down {
		w.emitSeg(h, "drop", seg)
		return
	}
	if seg.kind == segSyn {
		w.acceptSyn(h, seg)
		return
	}
	ep := h.conns[connKey{seg.dst, seg.src}]
	if ep == nil {
		w.emitSeg(h, "stray", seg)
		if seg.kind != segRst {
			w.sendRst(h, seg.dst, seg.src)
		}
		return
	}
	w.emitSeg(h, "deliver", seg)
	switch seg.kind {
	case segSynAck:
		if ep.state == epSynSent {
			ep.state = epEstablished
			s := ep.sock
			s.state = sockConnected
			if p := ep.connect; p != nil {
				ep.connect = nil
				s.b.post(s.b.finish(p, 0, nil))
			}
		}
	case segData:
		if !ep.rShut {
			ep.rq.write(seg.data)
		}
	case segFin:
		ep.finRcvd = true
	case segRst:
		w.applyRst(ep)
		return
	}
	w.serviceEnd(ep)
}

// acceptSyn answers a SYN: a connection in the backlog of the listener of
// its port and a SYN-ACK, or a reset when none listens or the backlog is
// full.
func (w *World) acceptSyn(h *Host, seg *segment) {
	k := connKey{seg.dst, seg.src}
	if h.conns[k] != nil {
		return // a duplicate
	}
	l := h.ports[portKey{backend.Stream, seg.dst.Port()}]
	if l == nil || l.state != sockListening || len(l.backlog) >= l.backlogMax ||
		!l.local.Addr().IsUnspecified() && l.local.Addr() != seg.dst.Addr() {
		w.emitSeg(h, "refuse", seg)
		w.sendRst(h, seg.dst, seg.src)
		return
	}
	w.emitSeg(h, "syn", seg)
	ep := w.newEndpoint(h, seg.from.host, seg.dst, seg.src, l)
	ep.state, ep.listener, ep.sock = epEstablished, l, nil
	ep.peer, seg.from.peer = seg.from, ep
	l.backlog = append(l.backlog, ep)
	w.transmit(ep, w.newSeg(segSynAck, ep.local, ep.remote, ep))
	w.service(l)
}

// applyRst is a reset's arrival at ep: a connect is refused, a
// connection fails with ECONNRESET (its unread data is discarded).
func (w *World) applyRst(ep *endpoint) {
	if ep.state == epSynSent {
		s, p := ep.sock, ep.connect
		ep.connect = nil
		w.forget(ep)
		s.state, s.ep = sockNew, nil
		s.err = oserr("connect", backend.ErrConnRefused)
		if p != nil {
			s.b.post(s.b.finish(p, 0, s.err))
		}
		return
	}
	ep.err = oserr("recv", backend.ErrConnReset)
	ep.held, ep.inflight = nil, 0
	w.forget(ep)
	w.serviceEnd(ep)
}

// resetBoth resets ep and its peer at once (World.ResetConnections).
func (w *World) resetBoth(ep *endpoint) {
	w.emitConn(ep.host, "reset", ep.local, ep.remote, "")
	if p := ep.peer; p != nil && p.state != epGone {
		w.applyRst(p)
	}
	w.applyRst(ep)
}

// serviceEnd serves the socket that ep belongs to, or its listener.
func (w *World) serviceEnd(ep *endpoint) {
	if ep.sock != nil {
		w.service(ep.sock)
	} else if ep.listener != nil {
		w.service(ep.listener)
	}
}

// closeSocket closes s as close(2): a connection sends its FIN after its
// data, or a reset when data was left unread (or SO_LINGER is 0); a
// listener resets the connections of its backlog; the port is freed.
func (w *World) closeSocket(s *socket) {
	s.closed = true
	if s.bound && s.b.h.ports[portKey{s.typ, s.local.Port()}] == s {
		delete(s.b.h.ports, portKey{s.typ, s.local.Port()})
	}
	for _, ep := range s.backlog {
		w.sendRst(ep.host, ep.local, ep.remote)
		w.forget(ep)
	}
	s.backlog = nil
	ep := s.ep
	if ep == nil || s.dead {
		return
	}
	ep.sock = nil
	switch {
	case ep.state != epEstablished:
	case ep.rq.len() > 0 || s.option(backend.OptLinger) == 0:
		w.emitConn(ep.host, "close", ep.local, ep.remote, " reset")
		w.sendRst(ep.host, ep.local, ep.remote)
		ep.held = nil
	default:
		w.sendFin(ep)
	}
	w.forget(ep)
}

// serveAccept gives the listener's oldest connection to an accept.
func (b *simBackend) serveAccept(l *socket, p *pending) bool {
	if len(l.backlog) == 0 {
		return false
	}
	ep := l.backlog[0]
	l.backlog = l.backlog[1:]
	s := &socket{b: b, fam: l.fam, typ: backend.Stream, opts: make(map[backend.Option]int),
		local: ep.local, peer: ep.remote, bound: true, state: sockConnected, ep: ep}
	s.fd = b.newFD(s)
	ep.sock, ep.listener = s, nil
	var c backend.Completion
	if p.op.Flags&backend.Multishot != 0 {
		c = backend.Completion{Op: p.op, UserData: p.op.UserData, Flags: backend.More}
	} else {
		c = b.finish(p, 0, nil)
	}
	c.FD, c.Addr = s.fd, s.addr(ep.remote)
	b.post(c)
	if w := b.w; w.tracing() {
		d := append(w.detail(), "tcp fd="...)
		d = strconv.AppendInt(d, int64(s.fd), 10)
		d = append(d, ' ')
		d = ep.local.AppendTo(d)
		d = append(d, "<-"...)
		d = ep.remote.AppendTo(d)
		w.emitDetail(b.h, "accept", d)
	}
	return true
}

// streamReady is the check a read or write op p of the stream socket s
// opens with. It returns the socket's connection end when the op can go
// on (ok and done false); ok false when it must wait (s is connecting);
// done true when it completed here (no connection, or an error pending).
func (b *simBackend) streamReady(s *socket, p *pending) (ep *endpoint, ok, done bool) {
	ep = s.ep
	switch {
	case s.state == sockConnecting:
		return nil, false, false
	case ep == nil:
		b.post(b.finish(p, 0, oserr(p.op.Kind.String(), backend.ErrNotConnected)))
		return nil, true, true
	case ep.err != nil:
		b.post(b.finish(p, 0, ep.takeErr()))
		return nil, true, true
	}
	return ep, true, false
}

// serveStreamRead serves a recv (or read) of a stream socket.
func (b *simBackend) serveStreamRead(s *socket, p *pending) bool {
	op := p.op
	ep, ok, done := b.streamReady(s, p)
	if !ok || done {
		return done
	}
	if ep.rq.len() == 0 && !ep.finRcvd && !ep.rShut && !ep.broken {
		return false
	}
	var c backend.Completion
	switch {
	case ep.rq.len() == 0:
		c = b.finish(p, 0, nil) // end of stream
	case op.Flags&backend.SelectBuffer != 0:
		g := b.groups[op.BufferGroup]
		id, ok := g.take()
		if !ok {
			b.post(b.finish(p, 0, oserr("recv", backend.ErrNoBuffers)))
			return true
		}
		c = b.finish(p, ep.rq.read(g.bufs[id]), nil)
		c.Flags, c.BufferID = backend.HasBuffer, id
	default:
		c = b.finish(p, ep.rq.readv(b.w.opBufs(op)), nil)
	}
	if c.N > 0 {
		b.w.consumed(ep)
	}
	if op.Kind == backend.KindRecvFrom {
		c.Addr = s.addr(ep.remote)
	}
	b.post(c)
	return true
}

// consumed opens the window of ep's peer after a read.
func (w *World) consumed(ep *endpoint) {
	if p := ep.peer; p != nil && p.sock != nil {
		w.service(p.sock)
	}
}

// serveStreamWrite serves a send (or write) of a stream socket.
func (b *simBackend) serveStreamWrite(s *socket, p *pending) bool {
	op := p.op
	ep, ok, done := b.streamReady(s, p)
	if !ok || done {
		return done
	}
	if ep.wShut || ep.broken {
		b.post(b.finish(p, 0, oserr(op.Kind.String(), backend.ErrBrokenPipe)))
		return true
	}
	bufs := b.w.opBufs(op)
	if bufsLen(bufs) == 0 {
		b.post(b.finish(p, 0, nil))
		return true
	}
	room := ep.room()
	if room == 0 {
		return false
	}
	n := b.w.sendData(ep, bufs, room)
	b.post(b.finish(p, n, nil))
	return true
}

// trySend is TrySend with the world locked.
func (b *simBackend) trySend(fd backend.FD, buf []byte) (int, error) {
	s, err := b.sock(fd, "send")
	if err != nil {
		return 0, err
	}
	ep := s.ep
	switch {
	case s.typ != backend.Stream:
		return 0, backend.NewError("send", backend.ErrUnsupported, nil)
	case s.state == sockConnecting:
		return 0, backend.ErrWouldBlock
	case ep == nil:
		return 0, oserr("send", backend.ErrNotConnected)
	case ep.err != nil:
		return 0, ep.takeErr()
	case ep.wShut || ep.broken:
		return 0, oserr("send", backend.ErrBrokenPipe)
	case len(s.writes) > 0 || ep.room() == 0:
		return 0, backend.ErrWouldBlock
	}
	w := b.w
	w.iov[0] = buf
	return w.sendData(ep, w.iov[:], ep.room()), nil
}

// tryRecv is TryRecv with the world locked.
func (b *simBackend) tryRecv(fd backend.FD, buf []byte) (int, error) {
	s, err := b.sock(fd, "recv")
	if err != nil {
		return 0, err
	}
	ep := s.ep
	switch {
	case s.typ != backend.Stream:
		return 0, backend.NewError("recv", backend.ErrUnsupported, nil)
	case s.state == sockConnecting || len(s.reads) > 0:
		return 0, backend.ErrWouldBlock
	case ep == nil:
		return 0, oserr("recv", backend.ErrNotConnected)
	case ep.err != nil:
		return 0, ep.takeErr()
	case ep.rq.len() > 0:
		n := ep.rq.read(buf)
		b.w.consumed(ep)
		return n, nil
	case ep.finRcvd || ep.rShut || ep.broken:
		return 0, nil
	}
	return 0, backend.ErrWouldBlock
}

// byteQueue is a FIFO of bytes.
type byteQueue struct {
	buf []byte
	off int
}

func (q *byteQueue) len() int { return len(q.buf) - q.off }

func (q *byteQueue) write(p []byte) {
	if q.off > 0 && q.off >= len(q.buf)/2 {
		q.buf = append(q.buf[:0], q.buf[q.off:]...)
		q.off = 0
	}
	q.buf = append(q.buf, p...)
}

func (q *byteQueue) read(p []byte) int {
	n := copy(p, q.buf[q.off:])
	q.off += n
	if q.off == len(q.buf) {
		q.buf, q.off = q.buf[:0], 0 // keep the array for the next write
	}
	return n
}

func (q *byteQueue) readv(bufs [][]byte) int {
	n := 0
	for _, b := range bufs {
		if q.len() == 0 {
			break
		}
		n += q.read(b)
	}
	return n
}

// reset empties q and lets its array go.
func (q *byteQueue) reset() { q.buf, q.off = nil, 0 }
