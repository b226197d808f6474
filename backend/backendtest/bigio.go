package backendtest

import (
	"bytes"
	"math"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

var bigIOTests = []test{
	{name: "BigSend", fn: testBigSend},
	{name: "BigRecv", fn: testBigRecv},
	{name: "BigDatagram", fn: testBigDatagram},
	{name: "BigFileRead", fn: testBigFileRead},
	{name: "BigFileWrite", fn: testBigFileWrite},
	{name: "ManyIovecs", fn: testManyIovecs},
}

// The sizes of the big buffers: beyond 32 bits, so that a backend that
// passes a length as 32 bits gives itself away. fourGiB is cut to 0 (a
// recv or read of it then reports the end of the stream), fourGiB+16 to 16.
const (
	fourGiB   = uint64(1) << 32
	truncated = 16
)

// bigBuf maps n bytes of anonymous memory and never touches them, so that
// they cost address space, not memory: the kernel reads zero pages from a
// read-only mapping, and a recv or read writes only the pages its data
// lands on. The mapping is removed at the end of the test; call bigBuf
// before newHarness, so that the harness's cleanup (which closes the
// backend and drains every op) runs first. Where n does not fit the
// address space, or the system refuses the mapping, the test is skipped.
func bigBuf(t *testing.T, n uint64, writable bool) []byte {
	t.Helper()
	if n > math.MaxInt {
		t.Skipf("a %d-byte buffer does not fit this address space", n)
	}
	b, err := mapBig(int(n), writable)
	if err != nil {
		t.Skipf("cannot map a %d-byte buffer here: %v", n, err)
	}
	t.Cleanup(func() {
		if err := unmapBig(b); err != nil {
			t.Errorf("unmapping the big buffer: %v", err)
		}
	})
	return b
}

// checkBigN fails the test unless a transfer from or into a buffer of more
// than 4 GiB succeeded with 0 < N <= MaxRW, and not with the count a length
// cut to 32 bits would give.
func checkBigN(t *testing.T, what string, n int, err error) {
	t.Helper()
	switch {
	case err != nil:
		t.Errorf("%s: %v", what, err)
	case n == truncated:
		t.Errorf("%s: N = %d, the count of its length cut to 32 bits", what, n)
	case n <= 0 || n > backend.MaxRW:
		t.Errorf("%s: N = %d, want 0 < N <= MaxRW (%d)", what, n, backend.MaxRW)
	}
}

// drainConn reads and drops everything conn receives until it is closed,
// which a cleanup does (and waits for) at the end of the test: the peer of
// a send that may wait until its whole buffer is taken (IOCP's).
func drainConn(t *testing.T, conn net.Conn) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1<<20)
		for {
			if _, err := conn.Read(buf); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		conn.Close()
		<-done
	})
}

// testBigSend: a send from a buffer of 4 GiB + 16 bytes sends some of it,
// at most MaxRW bytes, and not the 16 of a length cut to 32 bits; so does
// TrySend.
func testBigSend(t *testing.T, nb NewFunc) {
	buf := bigBuf(t, fourGiB+truncated, false)
	h := newHarness(t, nb)
	fd, conn := h.netPeer()
	drainConn(t, conn)
	start := time.Now()
	c := h.run(&backend.Op{Kind: backend.KindSend, FD: fd, Buf: buf})
	checkBigN(t, "send of 4 GiB + 16 bytes", c.N, c.Err)
	t.Logf("send of 4 GiB + 16 bytes: N = %d in %v", c.N, time.Since(start))
	n, err := h.b.TrySend(fd, buf)
	if errorsIs(err, backend.ErrUnsupported) || errorsIs(err, backend.ErrWouldBlock) {
		return
	}
	checkBigN(t, "TrySend of 4 GiB + 16 bytes", n, err)
}

// testBigRecv: a recv into a buffer of 4 GiB receives the data waiting (a
// length cut to 32 bits would be 0, and the recv would report the end of
// the stream); so does TryRecv.
func testBigRecv(t *testing.T, nb NewFunc) {
	buf := bigBuf(t, fourGiB, true)
	h := newHarness(t, nb)
	fd, conn := h.netPeer()
	netWrite(h, conn, []byte("hello"))
	c := h.run(&backend.Op{Kind: backend.KindRecv, FD: fd, Buf: buf})
	if c.Err != nil || c.N != 5 || string(buf[:5]) != "hello" {
		t.Fatalf("recv into 4 GiB: N %d, Err %v, %q; want 5 bytes, hello", c.N, c.Err, buf[:max(0, min(c.N, 5))])
	}
	// Pending first, then the data.
	recv := &backend.Op{Kind: backend.KindRecv, FD: fd, Buf: buf}
	h.mustSubmit(recv)
	h.settle(20 * time.Millisecond)
	netWrite(h, conn, []byte("later"))
	if c := h.wait(recv); c.Err != nil || c.N != 5 || string(buf[:5]) != "later" {
		t.Fatalf("pending recv into 4 GiB: N %d, Err %v; want 5 bytes", c.N, c.Err)
	}
	netWrite(h, conn, []byte("again"))
	deadline := time.Now().Add(opLimit)
	for {
		n, err := h.b.TryRecv(fd, buf)
		switch {
		case errorsIs(err, backend.ErrUnsupported):
			return
		case errorsIs(err, backend.ErrWouldBlock) && time.Now().Before(deadline):
			time.Sleep(time.Millisecond)
			continue
		case err != nil || n != 5 || string(buf[:5]) != "again":
			t.Fatalf("TryRecv into 4 GiB: %d, %v; want 5 bytes", n, err)
		}
		return
	}
}

// testBigDatagram: a datagram of 4 GiB + 16 bytes cannot be sent (it is
// not cut to 16 bytes either: the next datagram the peer receives is the
// one sent after it), and a recvfrom into a 4 GiB buffer receives a
// datagram whole.
func testBigDatagram(t *testing.T, nb NewFunc) {
	sbuf := bigBuf(t, fourGiB+truncated, false)
	rbuf := bigBuf(t, fourGiB, true)
	h := newHarness(t, nb)
	a, aa := h.udpSocket(loopback4)
	b, ba := h.udpSocket(loopback4)
	c := h.run(&backend.Op{Kind: backend.KindSendTo, FD: a, Buf: sbuf, Addr: ba})
	wantErr(t, "sendto of a 4 GiB + 16-byte datagram", c.Err, backend.ErrMessageSize)
	if c.N != 0 {
		t.Errorf("sendto of a 4 GiB + 16-byte datagram: N = %d", c.N)
	}
	h.runOK(&backend.Op{Kind: backend.KindSendTo, FD: a, Buf: []byte("small"), Addr: ba})
	c = h.run(&backend.Op{Kind: backend.KindRecvFrom, FD: b, Buf: rbuf})
	if c.Err != nil || c.N != 5 || string(rbuf[:5]) != "small" || !sameAddr(c.Addr, aa) {
		t.Fatalf("recvfrom into 4 GiB: N %d, Err %v, from %v; want the 5-byte datagram from %v", c.N, c.Err, c.Addr, aa)
	}
}

// testBigFileRead: a read, a readv and a read at the current position into
// a buffer of 4 GiB read the whole 5-byte file (a length cut to 32 bits
// would be 0: the end of the file).
func testBigFileRead(t *testing.T, nb NewFunc) {
	buf := bigBuf(t, fourGiB, true)
	h := newHarness(t, nb)
	path := filepath.Join(tempDir(t), "r")
	if err := os.WriteFile(path, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	fd := h.openFile(path, backend.OpenRead)
	for _, op := range []*backend.Op{
		{Kind: backend.KindRead, FD: fd, Buf: buf, Offset: 0},
		{Kind: backend.KindReadv, FD: fd, Bufs: [][]byte{buf}, Offset: 0},
		{Kind: backend.KindRead, FD: fd, Buf: buf, Offset: -1},
	} {
		clear(buf[:5])
		c := h.run(op)
		if c.Err != nil || c.N != 5 || string(buf[:5]) != "hello" {
			t.Errorf("%s at %d into 4 GiB: N %d, Err %v; want the 5 bytes of the file", op.Kind, op.Offset, c.N, c.Err)
		}
	}
}

// testBigFileWrite: a write and a writev of 4 GiB + 16 bytes to the null
// device (which takes everything it is given, at no cost) write at most
// MaxRW bytes, and not the 16 of a length cut to 32 bits; nor does a
// writev whose buffers add up to more than MaxRW.
func testBigFileWrite(t *testing.T, nb NewFunc) {
	buf := bigBuf(t, fourGiB+truncated, false)
	h := newHarness(t, nb)
	fd, err := h.b.OpenFile(os.DevNull, backend.OpenWrite, 0)
	if err != nil {
		t.Skipf("no null device to write to: OpenFile(%s): %v", os.DevNull, err)
	}
	h.track(fd)
	small := []byte("0123456789")
	for _, tc := range []struct {
		what string
		op   *backend.Op
	}{
		{"write of 4 GiB + 16 bytes", &backend.Op{Kind: backend.KindWrite, FD: fd, Buf: buf, Offset: -1}},
		{"writev of 4 GiB + 16 bytes", &backend.Op{Kind: backend.KindWritev, FD: fd, Bufs: [][]byte{buf}, Offset: -1}},
		{"writev of 10 bytes and 4 GiB + 16", &backend.Op{Kind: backend.KindWritev, FD: fd, Bufs: [][]byte{small, buf}, Offset: -1}},
		{"writev of 2 x 1 GiB", &backend.Op{Kind: backend.KindWritev, FD: fd, Bufs: [][]byte{buf[:backend.MaxRW], buf[:backend.MaxRW]}, Offset: -1}},
	} {
		start := time.Now()
		c := h.run(tc.op)
		checkBigN(t, tc.what, c.N, c.Err)
		t.Logf("%s: N = %d in %v", tc.what, c.N, time.Since(start))
	}
}

// testManyIovecs: a writev and a readv of more buffers than MaxIOV succeed,
// moving some of them in order (a backend may stop at MaxIOV buffers: a
// short count), rather than failing as a system call given too many
// iovecs would.
func testManyIovecs(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	const count = backend.MaxIOV + 500
	data := pattern(count, 3)
	bufs := make([][]byte, count)
	for i := range bufs {
		bufs[i] = data[i : i+1]
	}
	path := filepath.Join(tempDir(t), "v")
	fd := h.openFile(path, backend.OpenRead|backend.OpenWrite|backend.OpenCreate|backend.OpenTruncate)
	c := h.run(&backend.Op{Kind: backend.KindWritev, FD: fd, Bufs: bufs, Offset: 0})
	if c.Err != nil || c.N < 1 || c.N > count {
		t.Fatalf("writev of %d one-byte buffers: N %d, Err %v", count, c.N, c.Err)
	}
	for off := c.N; off < count; {
		c := h.runOK(&backend.Op{Kind: backend.KindWrite, FD: fd, Buf: data[off:], Offset: int64(off)})
		off += c.N
	}
	got := make([]byte, count)
	for i := range bufs {
		bufs[i] = got[i : i+1]
	}
	c = h.run(&backend.Op{Kind: backend.KindReadv, FD: fd, Bufs: bufs, Offset: 0})
	if c.Err != nil || c.N < 1 || c.N > count {
		t.Fatalf("readv into %d one-byte buffers: N %d, Err %v", count, c.N, c.Err)
	}
	if !bytes.Equal(got[:c.N], data[:c.N]) {
		t.Fatalf("readv into %d one-byte buffers: the %d bytes read differ from the file's", count, c.N)
	}
}
