package netsim

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// maxDatagram is the largest UDP payload (IPv4's).
const maxDatagram = 65507

// datagram is a received datagram and its source, in its socket's dq
// (guarded by World.mu).
type datagram struct {
	from netip.AddrPort
	data []byte
}

// sendDatagram sends the op's buffer as one datagram to dst (ok false:
// the socket has no destination). The op completes at once with the
// length; the network may lose, duplicate or reorder it.
func (b *simBackend) sendDatagram(p *pending, s *socket, dst netip.AddrPort, ok bool) {
	kind := p.op.Kind.String()
	bufs := b.w.opBufs(p.op)
	switch {
	case !ok:
		b.post(b.finish(p, 0, oserr(kind, backend.ErrNotConnected)))
		return
	case bufsLen(bufs) > maxDatagram:
		b.post(b.finish(p, 0, oserr(kind, backend.ErrMessageSize)))
		return
	}
	if err := b.autobind(s); err != nil {
		b.post(b.finish(p, 0, err))
		return
	}
	data := gather(nil, bufs, maxDatagram)
	src := netip.AddrPortFrom(b.sourceAddr(s, dst.Addr()), s.local.Port())
	b.w.sendDgram(b.h, src, dst, data)
	b.post(b.finish(p, len(data), nil))
}

// emitDgram traces an event of host h about the datagram g: "udp
// src->dst nB" and suffix, built only when tracing.
func (w *World) emitDgram(h *Host, kind string, g *segment, suffix string) {
	if !w.tracing() {
		return
	}
	d := append(w.detail(), "udp "...)
	d = g.src.AppendTo(d)
	d = append(d, "->"...)
	d = g.dst.AppendTo(d)
	d = append(d, ' ')
	d = strconv.AppendInt(d, int64(len(g.data)), 10)
	d = append(d, 'B')
	d = append(d, suffix...)
	w.emitDetail(h, kind, d)
}

// sendDgram puts a datagram on the wire from host h, subject to the
// link's faults. The datagram is a segment of no kind (its data stays
// with the receiving socket, so it is not reused).
func (w *World) sendDgram(h *Host, src, dst netip.AddrPort, data []byte) {
	g := &segment{src: src, dst: dst, data: data}
	dh := w.route(h, dst.Addr())
	switch {
	case dh == nil || w.blocked(h, dh):
		w.emitDgram(h, "drop", g, " unreachable")
		return
	case w.chance(w.loss):
		w.emitDgram(h, "drop", g, " lost")
		return
	}
	copies := 1
	if w.chance(w.dup) {
		copies = 2
		w.emitDgram(h, "dup", g, "")
	}
	for range copies {
		at := w.arrival(h, dh, len(data))
		if w.chance(w.reorder) {
			w.emitDgram(h, "reorder", g, "")
		} else {
			k := dir{h.name, dh.name}
			if last := w.lastDgram[k]; !at.After(last) {
				at = last.Add(time.Nanosecond)
			}
			w.lastDgram[k] = at
		}
		e := w.newEvent(evDatagram)
		e.h, e.seg = dh, g
		w.schedule(dh, at, e)
	}
}

// deliverDgram is a datagram's arrival at host h: queued at the socket
// bound to its port, dropped if there is none, the socket is connected to
// another peer, or its receive buffer is full.
func (w *World) deliverDgram(h *Host, g *segment) {
	src, dst, data := g.src, g.dst, g.data
	s := h.ports[portKey{backend.Datagram, dst.Port()}]
	switch {
	case h.down || s == nil:
		w.emitDgram(h, "drop", g, " no socket")
		return
	case !s.local.Addr().IsUnspecified() && s.local.Addr() != dst.Addr(),
		s.state == sockConnected && s.peer != src:
		w.emitDgram(h, "drop", g, " filtered")
		return
	case s.dqBytes+len(data) > s.option(backend.OptRecvBuffer):
		w.emitDgram(h, "drop", g, " buffer full")
		return
	}
	w.emitDgram(h, "deliver", g, "")
	s.dq = append(s.dq, datagram{from: src, data: data})
	s.dqBytes += len(data)
	w.service(s)
}

// serveDatagramRead gives the oldest datagram to a recv or recvfrom (cut
// to the buffer).
func (b *simBackend) serveDatagramRead(s *socket, p *pending) bool {
	if len(s.dq) == 0 {
		return false
	}
	g := s.dq[0]
	s.dq[0] = datagram{}
	s.dq = s.dq[1:]
	s.dqBytes -= len(g.data)
	var c backend.Completion
	if p.op.Flags&backend.SelectBuffer != 0 {
		grp := b.groups[p.op.BufferGroup]
		id, ok := grp.take()
		if !ok {
			b.post(b.finish(p, 0, oserr("recv", backend.ErrNoBuffers)))
			return true
		}
		c = b.finish(p, copy(grp.bufs[id], g.data), nil)
		c.Flags, c.BufferID = backend.HasBuffer, id
	} else {
		c = b.finish(p, scatter(b.w.opBufs(p.op), g.data), nil)
	}
	c.Addr = s.addr(g.from)
	b.post(c)
	return true
}
