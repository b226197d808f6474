package backendtest

import (
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

var pollTests = []test{
	{name: "PollIn", fn: testPollIn},
	{name: "PollOut", fn: testPollOut},
	{name: "PollLinkedTimeout", fn: testPollTimeout},
}

var bufferTests = []test{
	{name: "BufferSelectRecv", fn: testBufferSelect},
	{name: "BufferExhaustion", fn: testBufferExhaustion},
	{name: "BufferReleaseErrors", fn: testBufferRelease},
	{name: "BufferRegisterErrors", fn: testBufferRegister},
	{name: "BufferEndOfStream", fn: testBufferEOF},
}

// testPollIn: a poll for EventIn completes when data arrives, without
// consuming it.
func testPollIn(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	requireCaps(t, h, backend.CapPoll, "CapPoll")
	fd, conn := h.netPeer()
	poll := &backend.Op{Kind: backend.KindPoll, FD: fd, Events: backend.EventIn}
	h.mustSubmit(poll)
	h.settle(30 * time.Millisecond)
	if !h.pending(poll) {
		t.Fatalf("poll for EventIn completed with no data")
	}
	netWrite(h, conn, []byte("in"))
	c := h.wait(poll)
	if c.Err != nil || backend.Events(c.N)&backend.EventIn == 0 {
		t.Fatalf("poll: N %b, Err %v; want EventIn", c.N, c.Err)
	}
	h.expectRecv(fd, []byte("in"))
}

// testPollOut: a poll for EventOut on a connected socket completes at once.
func testPollOut(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	requireCaps(t, h, backend.CapPoll, "CapPoll")
	fd, _ := h.netPeer()
	c := h.run(&backend.Op{Kind: backend.KindPoll, FD: fd, Events: backend.EventOut})
	if c.Err != nil || backend.Events(c.N)&backend.EventOut == 0 {
		t.Fatalf("poll: N %b, Err %v; want EventOut", c.N, c.Err)
	}
	if backend.Events(c.N)&backend.EventIn != 0 {
		t.Errorf("poll for EventOut reports EventIn with no data")
	}
}

// testBufferSelect: a SelectBuffer recv gets HasBuffer and the data in
// Buffer(g, id)[:N]; released buffers are used again.
func testBufferSelect(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	const g = 3
	if err := h.b.RegisterBufferGroup(g, 4, 64); err != nil {
		t.Fatalf("RegisterBufferGroup: %v", err)
	}
	fd, conn := h.netPeer()
	for i := range 12 { // three times around the group
		recv := &backend.Op{Kind: backend.KindRecv, FD: fd, Flags: backend.SelectBuffer, BufferGroup: g, UserData: uint64(i)}
		h.mustSubmit(recv)
		if i%2 == 0 {
			h.settle(5 * time.Millisecond) // pending when the data comes
		}
		want := pattern(10+i, byte(i))
		netWrite(h, conn, want)
		c := h.wait(recv)
		if c.Err != nil || c.Flags&backend.HasBuffer == 0 || c.N != len(want) {
			t.Fatalf("recv %d: N %d, Err %v, Flags %b", i, c.N, c.Err, c.Flags)
		}
		buf := h.b.Buffer(g, c.BufferID)
		if len(buf) < 64 || string(buf[:c.N]) != string(want) {
			t.Fatalf("recv %d: buffer %d holds %q (len %d), want %q", i, c.BufferID, buf[:min(c.N, len(buf))], len(buf), want)
		}
		if err := h.b.ReleaseBuffer(g, c.BufferID); err != nil {
			t.Fatalf("ReleaseBuffer: %v", err)
		}
	}
}

// testBufferExhaustion: with every buffer held, a SelectBuffer recv fails
// with ErrNoBuffers when data arrives; the data stays for the next recv
// after a release.
func testBufferExhaustion(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	const g = 1
	if err := h.b.RegisterBufferGroup(g, 1, 16); err != nil {
		t.Fatalf("RegisterBufferGroup: %v", err)
	}
	fd, conn := h.netPeer()
	netWrite(h, conn, []byte("first"))
	c := h.runOK(&backend.Op{Kind: backend.KindRecv, FD: fd, Flags: backend.SelectBuffer, BufferGroup: g})
	if c.Flags&backend.HasBuffer == 0 || string(h.b.Buffer(g, c.BufferID)[:c.N]) != "first" {
		t.Fatalf("first recv: N %d, Flags %b", c.N, c.Flags)
	}
	held := c.BufferID
	netWrite(h, conn, []byte("second"))
	c = h.run(&backend.Op{Kind: backend.KindRecv, FD: fd, Flags: backend.SelectBuffer, BufferGroup: g})
	wantErr(t, "recv from an empty group", c.Err, backend.ErrNoBuffers)
	if c.Flags&backend.HasBuffer != 0 {
		t.Errorf("ErrNoBuffers completion has HasBuffer")
	}
	if err := h.b.ReleaseBuffer(g, held); err != nil {
		t.Fatalf("ReleaseBuffer: %v", err)
	}
	c = h.runOK(&backend.Op{Kind: backend.KindRecv, FD: fd, Flags: backend.SelectBuffer, BufferGroup: g})
	if c.Flags&backend.HasBuffer == 0 || string(h.b.Buffer(g, c.BufferID)[:c.N]) != "second" {
		t.Fatalf("recv after release: N %d, Flags %b", c.N, c.Flags)
	}
	if err := h.b.ReleaseBuffer(g, c.BufferID); err != nil {
		t.Fatalf("ReleaseBuffer: %v", err)
	}
}

// testBufferRelease: releasing a buffer not held, twice, of an unknown group
// or out of range is ErrInvalid.
func testBufferRelease(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	const g = 2
	if err := h.b.RegisterBufferGroup(g, 2, 32); err != nil {
		t.Fatalf("RegisterBufferGroup: %v", err)
	}
	wantErr(t, "release of a buffer never taken", h.b.ReleaseBuffer(g, 0), backend.ErrInvalid)
	wantErr(t, "release out of range", h.b.ReleaseBuffer(g, 2), backend.ErrInvalid)
	wantErr(t, "release in an unknown group", h.b.ReleaseBuffer(g+1, 0), backend.ErrInvalid)
	fd, conn := h.netPeer()
	netWrite(h, conn, []byte("x"))
	c := h.runOK(&backend.Op{Kind: backend.KindRecv, FD: fd, Flags: backend.SelectBuffer, BufferGroup: g})
	if c.Flags&backend.HasBuffer == 0 {
		t.Fatalf("no buffer")
	}
	if err := h.b.ReleaseBuffer(g, c.BufferID); err != nil {
		t.Fatalf("ReleaseBuffer: %v", err)
	}
	wantErr(t, "second release", h.b.ReleaseBuffer(g, c.BufferID), backend.ErrInvalid)
}

// testBufferRegister: bad counts and sizes are ErrInvalid, a second
// registration ErrExists; a recv from an unregistered group fails.
func testBufferRegister(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	for _, bad := range [][2]int{{0, 64}, {3, 64}, {65536, 64}, {-1, 64}, {4, 0}, {4, -1}, {4, 1<<20 + 1}} {
		wantErr(t, "RegisterBufferGroup(count, size) with a bad argument",
			h.b.RegisterBufferGroup(7, bad[0], bad[1]), backend.ErrInvalid)
	}
	if err := h.b.RegisterBufferGroup(7, 1, 1); err != nil {
		t.Fatalf("RegisterBufferGroup(1, 1): %v", err)
	}
	wantErr(t, "second registration", h.b.RegisterBufferGroup(7, 1, 1), backend.ErrExists)
	if err := h.b.RegisterBufferGroup(8, 2, 1<<20); err != nil {
		t.Errorf("RegisterBufferGroup(2, 1<<20): %v", err)
	}
	fd, conn := h.netPeer()
	netWrite(h, conn, []byte("x"))
	op := &backend.Op{Kind: backend.KindRecv, FD: fd, Flags: backend.SelectBuffer, BufferGroup: 99}
	if err := h.submit(op); err == nil {
		if c := h.wait(op); c.Err == nil {
			t.Errorf("recv from an unregistered group succeeded")
		}
	}
}

// testBufferEOF: end of stream on a SelectBuffer recv carries no buffer, and
// the group keeps all of its buffers.
func testBufferEOF(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	const g = 4
	if err := h.b.RegisterBufferGroup(g, 1, 32); err != nil {
		t.Fatalf("RegisterBufferGroup: %v", err)
	}
	fd, conn := h.netPeer()
	recv := &backend.Op{Kind: backend.KindRecv, FD: fd, Flags: backend.SelectBuffer, BufferGroup: g}
	h.mustSubmit(recv)
	h.settle(10 * time.Millisecond)
	conn.Close()
	c := h.wait(recv)
	if c.Err != nil || c.N != 0 || c.Flags&backend.HasBuffer != 0 {
		t.Fatalf("recv at end of stream: N %d, Err %v, Flags %b; want 0, nil, no buffer", c.N, c.Err, c.Flags)
	}
	// The only buffer is still in the group: another connection's recv gets it.
	fd2, conn2 := h.netPeer()
	netWrite(h, conn2, []byte("again"))
	c = h.runOK(&backend.Op{Kind: backend.KindRecv, FD: fd2, Flags: backend.SelectBuffer, BufferGroup: g})
	if c.Flags&backend.HasBuffer == 0 || string(h.b.Buffer(g, c.BufferID)[:c.N]) != "again" {
		t.Fatalf("recv after EOF: N %d, Flags %b", c.N, c.Flags)
	}
	h.b.ReleaseBuffer(g, c.BufferID)
}

// testPollTimeout: a poll for EventIn with no data and a linked timeout
// completes with ErrTimeout.
func testPollTimeout(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	requireCaps(t, h, backend.CapPoll, "CapPoll")
	fd, _ := h.netPeer()
	c := h.run(&backend.Op{Kind: backend.KindPoll, FD: fd, Events: backend.EventIn, Timeout: 50 * time.Millisecond})
	if c.Err != backend.ErrTimeout {
		t.Fatalf("poll with a linked timeout: N %b, Err %v; want ErrTimeout", c.N, c.Err)
	}
	h.settle(50 * time.Millisecond)
}
