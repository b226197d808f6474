package backendtest

import (
	"bytes"
	"net"
	"net/netip"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// loopback4 is 127.0.0.1 port 0.
var loopback4 = backend.AddrPort(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), 0))

// loopback6 is [::1] port 0.
var loopback6 = backend.AddrPort(netip.AddrPortFrom(netip.IPv6Loopback(), 0))

// socket makes a socket through the backend, closed at the end of the test.
func (h *harness) socket(f backend.Family, typ backend.SockType) backend.FD {
	h.tb.Helper()
	fd, err := h.b.Socket(f, typ)
	if err != nil {
		checkErr(h.tb, "Socket", err)
		h.tb.Fatalf("Socket(%s, %d): %v", f, typ, err)
	}
	h.track(fd)
	return fd
}

// bind binds fd to a, failing the test on error.
func (h *harness) bind(fd backend.FD, a backend.Addr) {
	h.tb.Helper()
	if err := h.b.Bind(fd, a); err != nil {
		checkErr(h.tb, "Bind", err)
		h.tb.Fatalf("Bind(%v): %v", a, err)
	}
}

// localAddr returns fd's local address, failing the test on error.
func (h *harness) localAddr(fd backend.FD) backend.Addr {
	h.tb.Helper()
	a, err := h.b.LocalAddr(fd)
	if err != nil {
		h.tb.Fatalf("LocalAddr: %v", err)
	}
	return a
}

// peerAddr returns fd's peer address, failing the test on error.
func (h *harness) peerAddr(fd backend.FD) backend.Addr {
	h.tb.Helper()
	a, err := h.b.PeerAddr(fd)
	if err != nil {
		h.tb.Fatalf("PeerAddr: %v", err)
	}
	return a
}

// listen makes a listening stream socket bound to a (port 0: any) and
// returns it with its actual address.
func (h *harness) listen(a backend.Addr) (backend.FD, backend.Addr) {
	h.tb.Helper()
	fd := h.socket(a.Family, backend.Stream)
	h.bind(fd, a)
	if err := h.b.Listen(fd, 0); err != nil {
		h.tb.Fatalf("Listen: %v", err)
	}
	return fd, h.localAddr(fd)
}

// connect makes a stream socket of a's family and connects it to a with a
// KindConnect op.
func (h *harness) connect(a backend.Addr) backend.FD {
	h.tb.Helper()
	fd := h.socket(a.Family, backend.Stream)
	h.runOK(&backend.Op{Kind: backend.KindConnect, FD: fd, Addr: a, UserData: 1})
	return fd
}

// pairAt returns a connected pair of backend sockets made through listening
// at a: the client (connected) end and the server (accepted) end.
func (h *harness) pairAt(a backend.Addr) (client, server backend.FD) {
	h.tb.Helper()
	ln, la := h.listen(a)
	acc := &backend.Op{Kind: backend.KindAccept, FD: ln, UserData: 2}
	h.mustSubmit(acc)
	con := &backend.Op{Kind: backend.KindConnect, Addr: la, UserData: 3}
	con.FD = h.socket(a.Family, backend.Stream)
	h.mustSubmit(con)
	if c := h.wait(con); c.Err != nil {
		h.tb.Fatalf("connect: %v", c.Err)
	}
	c := h.wait(acc)
	if c.Err != nil {
		h.tb.Fatalf("accept: %v", c.Err)
	}
	h.closeFD(ln)
	return con.FD, c.FD
}

// pair is pairAt on IPv4 loopback.
func (h *harness) pair() (client, server backend.FD) {
	h.tb.Helper()
	return h.pairAt(loopback4)
}

// netPeer returns a backend socket connected to a net.Conn from the standard
// library (an independent peer), closed at the end of the test.
func (h *harness) netPeer() (backend.FD, net.Conn) {
	h.tb.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		h.tb.Fatalf("net.Listen: %v", err)
	}
	defer ln.Close()
	ap := ln.Addr().(*net.TCPAddr).AddrPort()
	fd := h.connect(backend.AddrPort(ap))
	conn, err := ln.Accept()
	if err != nil {
		h.tb.Fatalf("net Accept: %v", err)
	}
	h.tb.Cleanup(func() { conn.Close() })
	return fd, conn
}

// send sends all of data on fd with send ops, looping over short sends.
func (h *harness) send(fd backend.FD, data []byte) {
	h.tb.Helper()
	for len(data) > 0 {
		c := h.runOK(&backend.Op{Kind: backend.KindSend, FD: fd, Buf: data, UserData: 10})
		if c.N <= 0 || c.N > len(data) {
			h.tb.Fatalf("send of %d bytes: N = %d", len(data), c.N)
		}
		data = data[c.N:]
	}
}

// recvFull receives exactly n bytes from fd with recv ops and returns them;
// end of stream before n bytes fails the test.
func (h *harness) recvFull(fd backend.FD, n int) []byte {
	h.tb.Helper()
	got := make([]byte, 0, n)
	buf := make([]byte, min(n, 64<<10))
	for len(got) < n {
		c := h.runOK(&backend.Op{Kind: backend.KindRecv, FD: fd, Buf: buf[:min(len(buf), n-len(got))], UserData: 11})
		if c.N == 0 {
			h.tb.Fatalf("end of stream after %d of %d bytes", len(got), n)
		}
		got = append(got, buf[:c.N]...)
	}
	return got
}

// expectRecv receives len(want) bytes on fd and compares them.
func (h *harness) expectRecv(fd backend.FD, want []byte) {
	h.tb.Helper()
	if got := h.recvFull(fd, len(want)); !bytes.Equal(got, want) {
		h.tb.Fatalf("received %q, want %q", got, want)
	}
}

// netRead reads exactly n bytes from conn with a deadline.
func netRead(h *harness, conn net.Conn, n int) []byte {
	h.tb.Helper()
	conn.SetReadDeadline(time.Now().Add(opLimit))
	buf := make([]byte, n)
	got := 0
	for got < n {
		m, err := conn.Read(buf[got:])
		got += m
		if err != nil {
			h.tb.Fatalf("net peer read after %d of %d bytes: %v", got, n, err)
		}
	}
	return buf
}

// netWrite writes data to conn with a deadline.
func netWrite(h *harness, conn net.Conn, data []byte) {
	h.tb.Helper()
	conn.SetWriteDeadline(time.Now().Add(opLimit))
	if _, err := conn.Write(data); err != nil {
		h.tb.Fatalf("net peer write: %v", err)
	}
}

// pattern returns n bytes of a recognisable, position-dependent pattern.
func pattern(n int, seed byte) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7) + byte(i>>8) + seed
	}
	return p
}

// sameAddr reports whether two IP addresses are the same endpoint,
// ignoring IPv4-mapped forms.
func sameAddr(a, b backend.Addr) bool {
	if a.Family == backend.FamilyUnix || b.Family == backend.FamilyUnix {
		return a.Family == b.Family && a.Path == b.Path
	}
	return a.IP.Addr().Unmap() == b.IP.Addr().Unmap() && a.IP.Port() == b.IP.Port()
}
