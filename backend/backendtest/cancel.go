package backendtest

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

var cancelTests = []test{
	{name: "CancelPendingRecv", fn: testCancelRecv},
	{name: "CancelCompleted", fn: testCancelCompleted},
	{name: "CancelNeverSubmitted", fn: testCancelNeverSubmitted},
	{name: "CancelRace", fn: testCancelRace},
	{name: "CancelRaceSelectBuffer", fn: testCancelRaceSelect},
	{name: "CancelledBufferUntouched", fn: testCancelBuffer},
	{name: "CancelPendingAcceptRecvFrom", fn: testCancelAccept},
	{name: "CloseOpWithPendingRecv", fn: testCloseOp},
	{name: "CloseOpWithMultishotAccept", fn: testCloseOpAccept},
}

// testCancelRecv: a cancel of a pending recv completes nil, the recv
// ErrCanceled (bare), and the socket still works.
func testCancelRecv(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	fd, conn := h.netPeer()
	recv := &backend.Op{Kind: backend.KindRecv, FD: fd, Buf: make([]byte, 4), UserData: 1}
	h.mustSubmit(recv)
	h.settle(10 * time.Millisecond)
	cancel := &backend.Op{Kind: backend.KindCancel, Target: recv, UserData: 2}
	h.mustSubmit(cancel)
	if c := h.wait(recv); c.Err != backend.ErrCanceled {
		t.Errorf("cancelled recv: N %d, Err %v; want the bare ErrCanceled", c.N, c.Err)
	}
	if c := h.wait(cancel); c.Err != nil {
		t.Errorf("cancel: %v, want nil", c.Err)
	}
	netWrite(h, conn, []byte("more"))
	h.expectRecv(fd, []byte("more"))
}

// testCancelCompleted: a cancel of an op that already completed is
// ErrNotFound.
func testCancelCompleted(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	nop := &backend.Op{Kind: backend.KindNop}
	h.runOK(nop)
	c := h.run(&backend.Op{Kind: backend.KindCancel, Target: nop})
	wantErr(t, "cancel of a completed op", c.Err, backend.ErrNotFound)
	fd, conn := h.netPeer()
	netWrite(h, conn, []byte("x"))
	recv := &backend.Op{Kind: backend.KindRecv, FD: fd, Buf: make([]byte, 4)}
	h.runOK(recv)
	c = h.run(&backend.Op{Kind: backend.KindCancel, Target: recv})
	wantErr(t, "cancel of a completed recv", c.Err, backend.ErrNotFound)
}

// testCancelNeverSubmitted: a cancel of an op never submitted is
// ErrNotFound.
func testCancelNeverSubmitted(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	c := h.run(&backend.Op{Kind: backend.KindCancel, Target: &backend.Op{Kind: backend.KindNop}})
	wantErr(t, "cancel of an op never submitted", c.Err, backend.ErrNotFound)
}

// testCancelRace: a cancel racing with the data arriving: the recv completes
// exactly once (the harness checks that), with ErrCanceled or the data; the
// cancel with nil or ErrNotFound; a cancelled recv consumed no data, which
// the next recv gets.
func testCancelRace(t *testing.T, nb NewFunc) { cancelRace(t, nb, false) }

// testCancelRaceSelect is testCancelRace with SelectBuffer recvs from a
// one-buffer group: a cancelled recv must not keep the buffer.
func testCancelRaceSelect(t *testing.T, nb NewFunc) { cancelRace(t, nb, true) }

// cancelRace runs the rounds of testCancelRace.
func cancelRace(t *testing.T, nb NewFunc, selectBuf bool) {
	h := newHarness(t, nb)
	fd, conn := h.netPeer()
	rounds := scale(500, 100)
	canceled := 0
	buf := make([]byte, 1)
	recv := &backend.Op{Kind: backend.KindRecv, FD: fd, Buf: buf}
	const g = 5
	if selectBuf {
		if err := h.b.RegisterBufferGroup(g, 1, 1); err != nil {
			t.Fatalf("RegisterBufferGroup: %v", err)
		}
		recv = &backend.Op{Kind: backend.KindRecv, FD: fd, Flags: backend.SelectBuffer, BufferGroup: g}
	}
	// data returns the byte a successful recv got, releasing its buffer.
	data := func(c backend.Completion) (byte, bool) {
		if c.Err != nil || c.N != 1 {
			return 0, false
		}
		if !selectBuf {
			return buf[0], true
		}
		if c.Flags&backend.HasBuffer == 0 {
			return 0, false
		}
		b := h.b.Buffer(g, c.BufferID)[0]
		if err := h.b.ReleaseBuffer(g, c.BufferID); err != nil {
			t.Fatalf("ReleaseBuffer: %v", err)
		}
		return b, true
	}
	cancel := &backend.Op{Kind: backend.KindCancel, Target: recv}
	written := make(chan error, 1)
	for i := range rounds {
		want := byte(i)
		buf[0] = ^want
		h.mustSubmit(recv)
		go func() {
			_, err := conn.Write([]byte{want})
			written <- err
		}()
		if i%3 == 0 {
			time.Sleep(time.Duration(i%50) * time.Microsecond)
		}
		h.mustSubmit(cancel)
		rc, cc := h.wait(recv), h.wait(cancel)
		if err := <-written; err != nil {
			t.Fatalf("net peer write: %v", err)
		}
		if cc.Err != nil && !errors.Is(cc.Err, backend.ErrNotFound) {
			t.Fatalf("round %d: cancel: %v", i, cc.Err)
		}
		if rc.Err == backend.ErrCanceled {
			canceled++
			if buf[0] != ^want {
				t.Fatalf("round %d: cancelled recv wrote its buffer", i)
			}
			if rc.Flags&backend.HasBuffer != 0 {
				t.Fatalf("round %d: cancelled recv has a buffer", i)
			}
			rc = h.run(recv)
		}
		if got, ok := data(rc); !ok || got != want {
			t.Fatalf("round %d: recv N %d, Err %v, Flags %b, byte %d (want %d)", i, rc.N, rc.Err, rc.Flags, got, want)
		}
	}
	t.Logf("%d of %d recvs cancelled", canceled, rounds)
	h.settle(20 * time.Millisecond)
}

// testCancelBuffer: the buffer of a cancelled recv is never written after
// its completion, even when data arrives later.
func testCancelBuffer(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	fd, conn := h.netPeer()
	bufs := make([][]byte, 8)
	for i := range bufs {
		bufs[i] = bytes.Repeat([]byte{0xAA}, 64)
		recv := &backend.Op{Kind: backend.KindRecv, FD: fd, Buf: bufs[i]}
		h.mustSubmit(recv)
		h.settle(time.Millisecond)
		c := h.run(&backend.Op{Kind: backend.KindCancel, Target: recv})
		if c.Err != nil {
			t.Fatalf("cancel: %v", c.Err)
		}
		if c := h.wait(recv); c.Err != backend.ErrCanceled {
			t.Fatalf("cancelled recv: N %d, Err %v", c.N, c.Err)
		}
	}
	netWrite(h, conn, bytes.Repeat([]byte{0x55}, 64))
	h.expectRecv(fd, bytes.Repeat([]byte{0x55}, 64))
	h.settle(50 * time.Millisecond)
	for i, b := range bufs {
		if !bytes.Equal(b, bytes.Repeat([]byte{0xAA}, 64)) {
			t.Fatalf("buffer of cancelled recv %d was written: % x", i, b[:8])
		}
	}
}

// testCancelAccept: cancels of a pending accept and of a pending recvfrom
// complete nil, their targets with ErrCanceled.
func testCancelAccept(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	ln, _ := h.listen(loopback4)
	acc := &backend.Op{Kind: backend.KindAccept, FD: ln}
	h.mustSubmit(acc)
	u, _ := h.udpSocket(loopback4)
	rf := &backend.Op{Kind: backend.KindRecvFrom, FD: u, Buf: make([]byte, 8)}
	h.mustSubmit(rf)
	h.settle(10 * time.Millisecond)
	for _, op := range []*backend.Op{acc, rf} {
		cancel := &backend.Op{Kind: backend.KindCancel, Target: op}
		h.mustSubmit(cancel)
		wantErr(t, "cancelled "+op.Kind.String(), h.wait(op).Err, backend.ErrCanceled)
		if c := h.wait(cancel); c.Err != nil {
			t.Errorf("cancel of %s: %v", op.Kind, c.Err)
		}
	}
}

// testCloseOp: a KindClose on a socket with a pending recv: the recv
// completes (ErrCanceled or a result) before the close does.
func testCloseOp(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	fd, _ := h.netPeer()
	recv := &backend.Op{Kind: backend.KindRecv, FD: fd, Buf: make([]byte, 4), UserData: 1}
	h.mustSubmit(recv)
	h.settle(10 * time.Millisecond)
	h.forget(fd)
	cl := &backend.Op{Kind: backend.KindClose, FD: fd, UserData: 2}
	h.mustSubmit(cl)
	rr := h.waitRec(recv)
	cr := h.waitRec(cl)
	if cr.c.Err != nil {
		t.Errorf("close op: %v", cr.c.Err)
	}
	if rr.c.Err != nil && rr.c.Err != backend.ErrCanceled {
		t.Errorf("recv on a closed socket: %v, want ErrCanceled or a result", rr.c.Err)
	}
	if rr.seq > cr.seq {
		t.Errorf("the close completed before the recv on its descriptor")
	}
}

// testCloseOpAccept: a KindClose on a listener with a Multishot accept in
// flight: the accept completes finally (without More) before the close.
func testCloseOpAccept(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	ln, _ := h.listen(loopback4)
	acc := &backend.Op{Kind: backend.KindAccept, FD: ln, Flags: backend.Multishot}
	h.mustSubmit(acc)
	h.settle(10 * time.Millisecond)
	h.forget(ln)
	cl := &backend.Op{Kind: backend.KindClose, FD: ln}
	h.mustSubmit(cl)
	ar := h.next(acc)
	for ar.c.More() { // a connection that raced in
		ar = h.next(acc)
	}
	cr := h.waitRec(cl)
	if cr.c.Err != nil {
		t.Errorf("close op: %v", cr.c.Err)
	}
	if ar.c.Err != nil && ar.c.Err != backend.ErrCanceled {
		t.Errorf("multishot accept on a closed listener: %v, want ErrCanceled", ar.c.Err)
	}
	if ar.seq > cr.seq {
		t.Errorf("the close completed before the accept on its descriptor")
	}
}
