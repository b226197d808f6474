package blitz

import (
	"net"

	"github.com/blitz-go/blitz/backend"
)

// UnixListener is a listening Unix stream socket of a runtime.
type UnixListener struct {
	listener
}

// ListenUnix binds a Unix stream listener to path on h's runtime (on Linux
// a path starting with '@' is in the abstract namespace). The socket file is
// not removed by Close; remove it yourself.
func ListenUnix(h Handle, path string) (*UnixListener, error) {
	d, fd, err := bindUnix(h, path, backend.Stream, "unix")
	if err != nil {
		return nil, err
	}
	if err := d.Backend().Listen(fd, 0); err != nil {
		_ = d.Backend().CloseFD(fd)
		return nil, &net.OpError{Op: "listen", Net: "unix", Addr: &net.UnixAddr{Name: path, Net: "unix"}, Err: err}
	}
	return &UnixListener{listener{n: newNetFD(d, fd, kindUnix, addrsNow, backend.Addr{})}}, nil
}

// bindUnix makes a Unix socket of typ bound to path ("" leaves it unbound),
// and returns it with its home ring.
func bindUnix(h Handle, path string, typ backend.SockType, network string) (*ioRing, backend.FD, error) {
	d, err := ringFor(h)
	if err != nil {
		return nil, backend.InvalidFD, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	a := backend.UnixAddr(path)
	fd, err := d.Backend().Socket(backend.FamilyUnix, typ)
	if err != nil {
		return nil, backend.InvalidFD, &net.OpError{Op: "listen", Net: network, Addr: netAddr(network, a), Err: err}
	}
	if path != "" {
		if err := d.Backend().Bind(fd, a); err != nil {
			_ = d.Backend().CloseFD(fd)
			return nil, backend.InvalidFD, &net.OpError{Op: "listen", Net: network, Addr: netAddr(network, a), Err: err}
		}
	}
	return d, fd, nil
}

// Accept returns a future of the next connection (see AcceptFuture).
func (l *UnixListener) Accept() *AcceptFuture[*UnixStream] {
	return &AcceptFuture[*UnixStream]{l: &l.listener, wrap: acceptUnix}
}

func wrapUnix(n *netFD) *UnixStream { return &UnixStream{conn{n: n}} }

// acceptUnix makes the UnixStream of an accepted socket, allocated with
// its socket record (see acceptedRecord).
func acceptUnix(r *ioRing, fd backend.FD, kind netKind, peer backend.Addr) *UnixStream {
	return acceptStream(r, fd, kind, peer, func(s *UnixStream, n *netFD) { s.n = n })
}

// UnixStream is a Unix stream connection of a runtime (Read, Write,
// WriteAll, CloseRead, CloseWrite, Split, timeouts, Close).
type UnixStream struct {
	conn
}

// DialUnix returns a future that connects to the Unix stream socket at path.
func DialUnix(h Handle, path string) *ConnectFuture[*UnixStream] {
	return &ConnectFuture[*UnixStream]{h: h, net: "unix", addr: backend.UnixAddr(path), typ: backend.Stream, wrap: wrapUnix}
}

// UnixDatagram is a Unix datagram socket of a runtime: SendTo and RecvFrom
// by path.
type UnixDatagram struct {
	n *netFD
}

// BindUnixDatagram binds a Unix datagram socket to path ("" for an unbound
// socket that only sends).
func BindUnixDatagram(h Handle, path string) (*UnixDatagram, error) {
	d, fd, err := bindUnix(h, path, backend.Datagram, "unixgram")
	if err != nil {
		return nil, err
	}
	return &UnixDatagram{n: newNetFD(d, fd, kindUnixgram, addrsNow, backend.Addr{})}, nil
}

// LocalAddr returns the socket's address.
func (u *UnixDatagram) LocalAddr() net.Addr { return netAddr("unixgram", u.n.addresses().local) }

// Close closes the socket.
func (u *UnixDatagram) Close() error { return u.n.close() }

// SendTo returns a future that sends buf as one datagram to the socket at
// path.
func (u *UnixDatagram) SendTo(buf []byte, path string) *SendToFuture {
	return &SendToFuture{n: u.n, buf: buf, addr: backend.UnixAddr(path)}
}

// RecvFrom returns a future that receives one datagram into buf; the
// sender's path is in Datagram.FromPath.
func (u *UnixDatagram) RecvFrom(buf []byte) *RecvFromFuture { return &RecvFromFuture{n: u.n, buf: buf} }
