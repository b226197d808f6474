package blitz

import (
	"net"
	"net/netip"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// TCPListener is a listening TCP socket of a runtime. Accept returns a
// future of the next connection. Close it when done.
type TCPListener struct {
	listener
}

// ListenTCP binds a TCP listener to address ("127.0.0.1:8080", "[::1]:0",
// "localhost:8080" for 127.0.0.1, ":8080" for every interface, dual-stack;
// a port of 0 or none, or an empty address, lets the system pick one) on
// h's runtime, with SO_REUSEADDR and the system's maximum backlog. Other
// host names are refused: resolve them first (Resolve). Any goroutine or
// task may call it; it does not block.
func ListenTCP(h Handle, address string) (*TCPListener, error) {
	ap, err := resolveAddr(address)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: "tcp", Err: err}
	}
	return ListenTCPAddr(h, ap)
}

// ListenTCPAddr is ListenTCP with a parsed address.
func ListenTCPAddr(h Handle, addr netip.AddrPort) (*TCPListener, error) {
	d, err := ringFor(h)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: "tcp", Err: err}
	}
	a := backend.AddrPort(addr)
	fd, err := d.Backend().Socket(a.Family, backend.Stream)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: "tcp", Addr: netAddr("tcp", a), Err: err}
	}
	fail := func(err error) (*TCPListener, error) {
		_ = d.Backend().CloseFD(fd)
		return nil, &net.OpError{Op: "listen", Net: "tcp", Addr: netAddr("tcp", a), Err: err}
	}
	if err := d.Backend().SetOption(fd, backend.OptReuseAddr, 1); err != nil {
		return fail(err)
	}
	if a.Family == backend.FamilyInet6 && addr.Addr().IsUnspecified() {
		_ = d.Backend().SetOption(fd, backend.OptV6Only, 0) // dual-stack where allowed
	}
	if err := d.Backend().Bind(fd, a); err != nil {
		return fail(err)
	}
	if err := d.Backend().Listen(fd, 0); err != nil {
		return fail(err)
	}
	return &TCPListener{listener{n: newNetFD(d, fd, kindTCP, addrsNow, backend.Addr{})}}, nil
}

// AddrPort returns the listener's local address as a netip.AddrPort.
func (l *TCPListener) AddrPort() netip.AddrPort { return l.n.addresses().local.IP }

// Accept returns a future of the next connection (see AcceptFuture).
func (l *TCPListener) Accept() *AcceptFuture[*TCPStream] {
	return &AcceptFuture[*TCPStream]{l: &l.listener, wrap: acceptTCP}
}

// acceptTCP makes the TCPStream of an accepted socket, allocated with its
// socket record (see acceptedRecord); Nagle's algorithm is off, as wrapTCP
// says.
func acceptTCP(r *ioRing, fd backend.FD, kind netKind, peer backend.Addr) *TCPStream {
	return acceptStream(r, fd, kind, peer, func(s *TCPStream, n *netFD) {
		s.n = n
		_ = n.ring.Backend().SetOption(n.fd, backend.OptNoDelay, 1)
	})
}

// wrapTCP makes the TCPStream of a connected socket, with Nagle's algorithm
// off, as Go's net package does by default (SetNoDelay(false) turns it on).
func wrapTCP(n *netFD) *TCPStream {
	_ = n.ring.Backend().SetOption(n.fd, backend.OptNoDelay, 1)
	return &TCPStream{conn{n: n}}
}

// TCPStream is a TCP connection of a runtime (see conn's methods: Read,
// Write, WriteAll, CloseRead, CloseWrite, Split, timeouts, Close). Close it
// when done.
type TCPStream struct {
	conn
}

// DialTCP returns a future that connects to address ("10.0.0.1:80",
// "[::1]:8080", "example.com:https") on h's runtime. A host name is looked
// up first (see Resolve), and its addresses are tried in turn until one
// connects. A positive timeout bounds each connect attempt (the error is
// then a timeout: errors.Is ErrTimeout and os.ErrDeadlineExceeded).
func DialTCP(h Handle, address string, timeout time.Duration) *ConnectFuture[*TCPStream] {
	host, port, err := splitHostPort(address)
	if err != nil {
		return DialTCPAddr(h, netip.AddrPort{}, timeout).withErr(err)
	}
	if ip, perr := netip.ParseAddr(host); perr == nil || host == "" {
		if host == "" {
			ip = netip.IPv6Loopback()
		}
		return DialTCPAddr(h, netip.AddrPortFrom(ip, port), timeout)
	}
	c := DialTCPAddr(h, netip.AddrPort{}, timeout)
	c.resolve, c.port = Resolve(host), port
	c.addr = backend.Addr{Path: host} // for the error message only
	return c
}

// DialTCPAddr is DialTCP with a parsed address.
func DialTCPAddr(h Handle, addr netip.AddrPort, timeout time.Duration) *ConnectFuture[*TCPStream] {
	return &ConnectFuture[*TCPStream]{h: h, net: "tcp", addr: backend.AddrPort(addr), typ: backend.Stream, timeout: timeout, wrap: wrapTCP}
}

// SetNoDelay turns Nagle's algorithm off (true, the default, as in Go's net
// package) or on.
func (s *TCPStream) SetNoDelay(on bool) error { return s.n.setOption(backend.OptNoDelay, b2i(on)) }

// SetKeepAlive turns keep-alive probes on with the given idle time and
// interval (rounded up to seconds), or off with 0.
func (s *TCPStream) SetKeepAlive(period time.Duration) error {
	secs := int((period + time.Second - 1) / time.Second)
	return s.n.setOption(backend.OptKeepAlive, secs)
}

// SetLinger sets SO_LINGER: a negative d turns it off (the default), 0 makes
// Close reset the connection, a positive d lets Close wait for unsent data.
func (s *TCPStream) SetLinger(d time.Duration) error {
	if d < 0 {
		return s.n.setOption(backend.OptLinger, -1)
	}
	return s.n.setOption(backend.OptLinger, int(d/time.Second))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
