package backendtest

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

var acceptTests = []test{
	{name: "AcceptMultishot", fn: testAcceptMultishot},
	{name: "AcceptMultishotAlreadyQueued", fn: testAcceptMultishotQueued},
}

var datagramTests = []test{
	{name: "UDPSendToRecvFrom", fn: testUDP},
	{name: "UDPNetPeer", fn: testUDPNetPeer},
	{name: "UDPTruncate", fn: testUDPTruncate},
}

var unixTests = []test{
	{name: "UnixStream", fn: testUnixStream},
	{name: "UnixDatagram", fn: testUnixDatagram},
}

// testAcceptMultishot: a Multishot accept completes once per connection with
// More, and after a cancel finally without More.
func testAcceptMultishot(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	ln, la := h.listen(loopback4)
	acc := &backend.Op{Kind: backend.KindAccept, Flags: backend.Multishot, FD: ln, UserData: 9}
	h.mustSubmit(acc)
	const n = 5
	for i := range n {
		conn, err := net.DialTimeout("tcp", la.IP.String(), opLimit)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		defer conn.Close()
		r := h.next(acc)
		if r.c.Err != nil || !r.c.More() || r.c.FD == backend.InvalidFD {
			t.Fatalf("connection %d: Err %v, More %v, FD %v", i, r.c.Err, r.c.More(), r.c.FD)
		}
		if want := conn.LocalAddr().(*net.TCPAddr).AddrPort(); !sameAddr(r.c.Addr, backend.AddrPort(want)) {
			t.Errorf("connection %d: Addr %v, want %v", i, r.c.Addr, want)
		}
		h.send(r.c.FD, []byte{byte(i)})
		if got := netRead(h, conn, 1); got[0] != byte(i) {
			t.Errorf("connection %d: net peer read %d", i, got[0])
		}
	}
	cancel := &backend.Op{Kind: backend.KindCancel, Target: acc}
	if c := h.run(cancel); c.Err != nil {
		t.Errorf("cancel of a multishot accept: %v", c.Err)
	}
	r := h.next(acc)
	if r.c.More() {
		t.Fatalf("completion after cancel has More")
	}
	wantErr(t, "cancelled multishot accept", r.c.Err, backend.ErrCanceled)
	h.settle(20 * time.Millisecond)
}

// testAcceptMultishotQueued: connections already waiting in the backlog when
// the Multishot accept is submitted are all delivered.
func testAcceptMultishotQueued(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	ln, la := h.listen(loopback4)
	const n = 8
	for i := range n {
		conn, err := net.DialTimeout("tcp", la.IP.String(), opLimit)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		defer conn.Close()
	}
	acc := &backend.Op{Kind: backend.KindAccept, Flags: backend.Multishot, FD: ln}
	h.mustSubmit(acc)
	for i := range n {
		if r := h.next(acc); r.c.Err != nil || !r.c.More() {
			t.Fatalf("connection %d: Err %v, More %v", i, r.c.Err, r.c.More())
		}
	}
	h.mustSubmit(&backend.Op{Kind: backend.KindCancel, Target: acc})
	r := h.next(acc)
	wantErr(t, "cancelled multishot accept", r.c.Err, backend.ErrCanceled)
}

// udpSocket makes a datagram socket bound to a.
func (h *harness) udpSocket(a backend.Addr) (backend.FD, backend.Addr) {
	h.tb.Helper()
	fd := h.socket(a.Family, backend.Datagram)
	h.bind(fd, a)
	return fd, h.localAddr(fd)
}

// testUDP: SendTo and RecvFrom between two backend sockets, with the source
// address, pending and already there.
func testUDP(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	a, aa := h.udpSocket(loopback4)
	b, ba := h.udpSocket(loopback4)
	buf := make([]byte, 64)
	recv := &backend.Op{Kind: backend.KindRecvFrom, FD: b, Buf: buf}
	h.mustSubmit(recv)
	h.settle(10 * time.Millisecond)
	c := h.runOK(&backend.Op{Kind: backend.KindSendTo, FD: a, Buf: []byte("datagram"), Addr: ba})
	if c.N != 8 {
		t.Fatalf("sendto N %d", c.N)
	}
	c = h.wait(recv)
	if c.Err != nil || string(buf[:c.N]) != "datagram" || !sameAddr(c.Addr, aa) {
		t.Fatalf("recvfrom: N %d, Err %v, Addr %v (want %v)", c.N, c.Err, c.Addr, aa)
	}
	// Reply to the source address, received when it is already there.
	h.runOK(&backend.Op{Kind: backend.KindSendTo, FD: b, Buf: []byte("reply"), Addr: c.Addr})
	time.Sleep(10 * time.Millisecond)
	c = h.runOK(&backend.Op{Kind: backend.KindRecvFrom, FD: a, Buf: buf})
	if string(buf[:c.N]) != "reply" || !sameAddr(c.Addr, ba) {
		t.Fatalf("recvfrom: %q from %v (want %v)", buf[:c.N], c.Addr, ba)
	}
}

// testUDPNetPeer: datagrams to and from a net.UDPConn.
func testUDPNetPeer(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	fd, fa := h.udpSocket(loopback4)
	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		// Wine lacks the SIO_UDP_CONNRESET ioctl Go's net package uses.
		t.Skipf("no net.UDPConn peer here: %v", err)
	}
	defer pc.Close()
	pa := backend.AddrPort(pc.LocalAddr().(*net.UDPAddr).AddrPort())
	h.runOK(&backend.Op{Kind: backend.KindSendTo, FD: fd, Buf: []byte("to net"), Addr: pa})
	buf := make([]byte, 64)
	pc.SetReadDeadline(time.Now().Add(opLimit))
	n, from, err := pc.ReadFromUDPAddrPort(buf)
	if err != nil || string(buf[:n]) != "to net" || !sameAddr(backend.AddrPort(from), fa) {
		t.Fatalf("net peer: %q from %v, %v", buf[:n], from, err)
	}
	if _, err := pc.WriteToUDPAddrPort([]byte("from net"), fa.IP); err != nil {
		t.Fatalf("net peer write: %v", err)
	}
	c := h.runOK(&backend.Op{Kind: backend.KindRecvFrom, FD: fd, Buf: buf})
	if string(buf[:c.N]) != "from net" || !sameAddr(c.Addr, pa) {
		t.Fatalf("recvfrom: %q from %v (want %v)", buf[:c.N], c.Addr, pa)
	}
}

// testUDPTruncate: a datagram larger than the buffer is truncated to it
// (N = len(Buf)), and the rest of it is discarded.
func testUDPTruncate(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	a, _ := h.udpSocket(loopback4)
	b, ba := h.udpSocket(loopback4)
	h.runOK(&backend.Op{Kind: backend.KindSendTo, FD: a, Buf: []byte("0123456789"), Addr: ba})
	h.runOK(&backend.Op{Kind: backend.KindSendTo, FD: a, Buf: []byte("next"), Addr: ba})
	buf := make([]byte, 4)
	c := h.run(&backend.Op{Kind: backend.KindRecvFrom, FD: b, Buf: buf})
	if c.Err != nil || c.N != 4 || string(buf) != "0123" {
		t.Fatalf("truncated recvfrom: N %d, Err %v, %q", c.N, c.Err, buf)
	}
	c = h.runOK(&backend.Op{Kind: backend.KindRecvFrom, FD: b, Buf: buf})
	if string(buf[:c.N]) != "next" {
		t.Fatalf("datagram after a truncated one: %q", buf[:c.N])
	}
}

// tempDir makes a temporary directory removed at the end of the test. Not
// t.TempDir: its paths can exceed sun_path's 104 bytes on macOS, and its
// removal fails the test under Wine, whose files lack the deletion mode Go
// uses (a removal error is only logged here).
func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "bt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Logf("removing %s: %v", dir, err)
		}
	})
	return dir
}

// testUnixStream: accept, connect and data over a Unix stream socket.
func testUnixStream(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	requireCaps(t, h, backend.CapUnixSockets, "Unix sockets")
	path := filepath.Join(tempDir(t), "s")
	client, server := h.pairAt(backend.UnixAddr(path))
	if a := h.peerAddr(client); a.Family != backend.FamilyUnix || a.Path != path {
		t.Errorf("client PeerAddr %v, want unix:%s", a, path)
	}
	h.send(client, []byte("unix"))
	h.expectRecv(server, []byte("unix"))
	h.send(server, pattern(100000, 5))
	h.expectRecv(client, pattern(100000, 5))
	h.closeFD(server)
	if c := h.run(&backend.Op{Kind: backend.KindRecv, FD: client, Buf: make([]byte, 4)}); c.Err != nil || c.N != 0 {
		t.Errorf("recv after the peer closed: N %d, Err %v", c.N, c.Err)
	}
}

// testUnixDatagram: SendTo and RecvFrom between bound Unix datagram sockets,
// with the source path.
func testUnixDatagram(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	requireCaps(t, h, backend.CapUnixSockets, "Unix sockets")
	dir := tempDir(t)
	a, aa := h.udpSocket(backend.UnixAddr(filepath.Join(dir, "a")))
	b, ba := h.udpSocket(backend.UnixAddr(filepath.Join(dir, "b")))
	buf := make([]byte, 64)
	recv := &backend.Op{Kind: backend.KindRecvFrom, FD: b, Buf: buf}
	h.mustSubmit(recv)
	h.runOK(&backend.Op{Kind: backend.KindSendTo, FD: a, Buf: []byte("gram"), Addr: ba})
	c := h.wait(recv)
	if c.Err != nil || string(buf[:c.N]) != "gram" || !sameAddr(c.Addr, aa) {
		t.Fatalf("recvfrom: %q, %v, from %v (want %v)", buf[:max(0, c.N)], c.Err, c.Addr, aa)
	}
}
