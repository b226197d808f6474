package blitz

import (
	"net"
	"net/netip"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
)

// UDPSocket is a UDP socket of a runtime: SendTo and RecvFrom on any
// address; after Connect, Send to the peer, and RecvFrom receives only the
// peer's datagrams. Close it when done.
type UDPSocket struct {
	n *netFD
}

// BindUDP binds a UDP socket to address ("127.0.0.1:0", "localhost:0" for
// 127.0.0.1, ":5353" for every interface, dual-stack; a port of 0 or none
// lets the system pick one) on h's runtime. Other host names are refused,
// as ListenTCP refuses them.
func BindUDP(h Handle, address string) (*UDPSocket, error) {
	ap, err := resolveAddr(address)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: "udp", Err: err}
	}
	return BindUDPAddr(h, ap)
}

// BindUDPAddr is BindUDP with a parsed address.
func BindUDPAddr(h Handle, addr netip.AddrPort) (*UDPSocket, error) {
	d, err := ringFor(h)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: "udp", Err: err}
	}
	a := backend.AddrPort(addr)
	fd, err := d.Backend().Socket(a.Family, backend.Datagram)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: "udp", Addr: netAddr("udp", a), Err: err}
	}
	if a.Family == backend.FamilyInet6 && addr.Addr().IsUnspecified() {
		_ = d.Backend().SetOption(fd, backend.OptV6Only, 0)
	}
	if err := d.Backend().Bind(fd, a); err != nil {
		_ = d.Backend().CloseFD(fd)
		return nil, &net.OpError{Op: "listen", Net: "udp", Addr: netAddr("udp", a), Err: err}
	}
	return &UDPSocket{n: newNetFD(d, fd, kindUDP, addrsNow, backend.Addr{})}, nil
}

// LocalAddr returns the socket's address.
func (u *UDPSocket) LocalAddr() net.Addr { return netAddr("udp", u.n.addresses().local) }

// LocalAddrPort returns the socket's address as a netip.AddrPort.
func (u *UDPSocket) LocalAddrPort() netip.AddrPort { return u.n.addresses().local.IP }

// Close closes the socket; operations in flight fail with ErrClosed.
func (u *UDPSocket) Close() error { return u.n.close() }

// SetBroadcast allows sending to broadcast addresses.
func (u *UDPSocket) SetBroadcast(on bool) error { return u.n.setOption(backend.OptBroadcast, b2i(on)) }

// SetReadTimeout bounds every later receive (0: no bound).
func (u *UDPSocket) SetReadTimeout(d time.Duration) { u.n.setReadTimeout(d) }

// SetWriteTimeout bounds every later send (0: no bound).
func (u *UDPSocket) SetWriteTimeout(d time.Duration) { u.n.setWriteTimeout(d) }

// JoinMulticast joins the group on the interface ifi (nil: the system's
// choice). Received datagrams sent to the group arrive through RecvFrom.
func (u *UDPSocket) JoinMulticast(group netip.Addr, ifi *net.Interface) error {
	idx := 0
	if ifi != nil {
		idx = ifi.Index
	}
	if !u.n.use() {
		return u.n.opError("join", ErrClosed)
	}
	defer u.n.done()
	return u.n.opError("join", u.n.ring.Backend().JoinGroup(u.n.fd, group, idx))
}

// SetMulticastLoopback sets whether the socket receives its own multicast
// datagrams.
func (u *UDPSocket) SetMulticastLoopback(on bool) error {
	return u.n.setOption(backend.OptMulticastLoop, b2i(on))
}

// Connect fixes the peer: Send then sends to it, and datagrams from other
// addresses are dropped by the kernel, so RecvFrom receives the peer's
// only. It does not block (UDP has no
// handshake), so it is a plain call.
func (u *UDPSocket) Connect(addr netip.AddrPort) error {
	if !u.n.use() {
		return u.n.opError("connect", ErrClosed)
	}
	// A connect on a datagram socket completes at once in every backend;
	// run it through a blocking poll of the op.
	op := &backend.Op{Kind: backend.KindConnect, FD: u.n.fd, Addr: backend.AddrPort(addr)}
	err := syncOp(u.n.ring, op)
	u.n.done()
	if err != nil {
		return u.n.opError("connect", err)
	}
	u.n.setAddrs(u.n.addresses().local, backend.AddrPort(addr))
	return nil
}

// syncOp submits op and waits for it on the calling goroutine; for ops that
// complete at once (a datagram connect).
func syncOp(r *ioRing, op *backend.Op) error {
	var o ioOp
	o.op = *op
	var sig signalWaker
	cx := sig.context()
	if err := o.submit(cx, r.Ring); err != nil {
		return err
	}
	for {
		if c, ok := o.poll(cx); ok {
			return c.Err
		}
		sig.wait()
	}
}

// SendTo returns a future that sends buf as one datagram to addr.
func (u *UDPSocket) SendTo(buf []byte, addr netip.AddrPort) *SendToFuture {
	return &SendToFuture{n: u.n, buf: buf, addr: backend.AddrPort(addr)}
}

// Send sends buf to the connected peer.
func (u *UDPSocket) Send(buf []byte) *SendToFuture {
	return &SendToFuture{n: u.n, buf: buf, connected: true}
}

// RecvFrom returns a future that receives one datagram into buf: its
// length (truncated to len(buf)) and its source.
func (u *UDPSocket) RecvFrom(buf []byte) *RecvFromFuture { return &RecvFromFuture{n: u.n, buf: buf} }

// Datagram is a received datagram's length and source: an IP address and
// port for UDP, a path for a Unix datagram socket ("" for an unbound
// sender).
type Datagram struct {
	N        int
	From     netip.AddrPort
	FromPath string
}

// SendToFuture is the future of SendTo and Send.
type SendToFuture struct {
	_         noCopy
	n         *netFD
	buf       []byte
	addr      backend.Addr
	connected bool
	f         ioFuture
}

// Poll sends. Completing consumes a unit of the task's budget; with
// none left, Poll yields instead (see the future package, "The
// cooperative budget").
func (s *SendToFuture) Poll(cx *future.Context) (future.Result[int], bool) {
	s.f.checkPoll()
	if !cx.Proceed() {
		return future.Result[int]{}, false
	}
	v, ok := s.poll(cx)
	if ok {
		cx.Spend()
	}
	return v, ok
}

// poll is Poll past the budget check.
func (s *SendToFuture) poll(cx *future.Context) (future.Result[int], bool) {
	s.f.checkPoll()
	if !s.f.submitted {
		op := backend.Op{Kind: backend.KindSendTo, FD: s.n.fd, Buf: s.buf, Addr: s.addr, Timeout: s.n.writeTimeout()}
		if s.connected {
			op.Kind, op.Addr = backend.KindSend, backend.Addr{}
			if len(s.buf) == 0 {
				op.Kind, op.Addr = backend.KindSendTo, s.n.addresses().peer
			}
		}
		_, _, _, pending, err := s.f.start(cx, s.n, s.n.writeSlot())
		if pending {
			return future.Result[int]{}, false
		}
		if err == nil {
			err = s.f.submit(cx, s.n, op)
		}
		if err != nil {
			s.f.done = true
			return future.Fail[int](s.n.opError("write", err)), true
		}
	}
	c, ok := s.f.wait(cx)
	if !ok {
		return future.Result[int]{}, false
	}
	if c.Err != nil {
		return future.Fail[int](s.n.opError("write", c.Err)), true
	}
	return future.Ok(c.N), true
}

// Cancel abandons the send.
func (s *SendToFuture) Cancel() { s.f.cancel() }

// RecvFromFuture is the future of RecvFrom.
type RecvFromFuture struct {
	_   noCopy
	n   *netFD
	buf []byte
	f   ioFuture
}

// Poll receives. Completing consumes a unit of the task's budget; with
// none left, Poll yields instead (see the future package, "The
// cooperative budget").
func (r *RecvFromFuture) Poll(cx *future.Context) (future.Result[Datagram], bool) {
	r.f.checkPoll()
	if !cx.Proceed() {
		return future.Result[Datagram]{}, false
	}
	v, ok := r.poll(cx)
	if ok {
		cx.Spend()
	}
	return v, ok
}

// poll is Poll past the budget check.
func (r *RecvFromFuture) poll(cx *future.Context) (future.Result[Datagram], bool) {
	r.f.checkPoll()
	if !r.f.submitted {
		_, prev, has, pending, err := r.f.start(cx, r.n, &r.n.rd)
		if pending {
			return future.Result[Datagram]{}, false
		}
		if err == nil && has && prev.Err == nil && prev.Op != nil {
			// A cancelled receive's datagram: this receive takes it (cut
			// to this buffer, as the kernel cuts datagrams).
			n := copy(r.buf, prev.Op.Buf[:prev.N])
			r.f.release()
			return future.Ok(Datagram{N: n, From: prev.Addr.IP, FromPath: prev.Addr.Path}), true
		}
		if err == nil {
			err = r.f.submit(cx, r.n, backend.Op{Kind: backend.KindRecvFrom, FD: r.n.fd, Buf: r.buf, Timeout: r.n.readTimeout()})
		}
		if err != nil {
			r.f.done = true
			return future.Fail[Datagram](r.n.opError("read", err)), true
		}
	}
	c, ok := r.f.wait(cx)
	if !ok {
		return future.Result[Datagram]{}, false
	}
	if c.Err != nil {
		return future.Fail[Datagram](r.n.opError("read", c.Err)), true
	}
	return future.Ok(Datagram{N: c.N, From: c.Addr.IP, FromPath: c.Addr.Path}), true
}

// Cancel abandons the receive.
func (r *RecvFromFuture) Cancel() { r.f.cancel() }
