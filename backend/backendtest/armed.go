package backendtest

import (
	"errors"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

var armedTests = []test{
	{name: "ArmedRecv", fn: testArmedRecv},
	{name: "ArmedRecvDataWaiting", fn: testArmedRecvWaiting},
	{name: "ArmedRecvEndOfStream", fn: testArmedRecvEOF},
	{name: "ArmedRecvCancel", fn: testArmedRecvCancel},
	{name: "ArmedRecvCloseOp", fn: testArmedRecvCloseOp},
	{name: "ArmedRecvNoBuffers", fn: testArmedRecvNoBuffers},
	{name: "ArmedRecvLeftAtClose", fn: testArmedRecvAtClose},
	{name: "ArmedRecvMisuse", fn: testArmedRecvMisuse},
}

// arm arms a receive on fd through the backend's RecvArmer, with a
// placeholder op standing for it in the harness's accounts: wait and next
// take its completion. The test is skipped when the backend has no
// RecvArmer, or reports ErrUnsupported (its kernel cannot).
func (h *harness) arm(fd backend.FD, group uint16, key uint64) *backend.Op {
	h.tb.Helper()
	a, ok := h.b.(backend.RecvArmer)
	if !ok {
		h.tb.Skip("the backend is no backend.RecvArmer")
	}
	ph := &backend.Op{Kind: backend.KindRecv, FD: fd, Flags: backend.SelectBuffer, BufferGroup: group, UserData: key}
	h.mu.Lock()
	h.arms[key] = ph
	h.inflight[ph] = true
	h.mu.Unlock()
	if err := a.ArmRecv(fd, group, key); err != nil {
		h.mu.Lock()
		delete(h.arms, key)
		delete(h.inflight, ph)
		h.mu.Unlock()
		if errors.Is(err, backend.ErrUnsupported) {
			h.tb.Skipf("ArmRecv: %v", err)
		}
		h.tb.Fatalf("ArmRecv: %v", err)
	}
	return ph
}

// armGroup registers group g of count buffers of 64 bytes.
func armGroup(t *testing.T, h *harness, g uint16, count int) {
	t.Helper()
	if err := h.b.RegisterBufferGroup(g, count, 64); err != nil {
		t.Fatalf("RegisterBufferGroup: %v", err)
	}
}

// expectArmedData checks that c carries want in a buffer of g, and
// releases it.
func expectArmedData(t *testing.T, h *harness, g uint16, c backend.Completion, want []byte) {
	t.Helper()
	if c.Err != nil || c.Flags&backend.HasBuffer == 0 || c.N != len(want) {
		t.Fatalf("armed recv: N %d, Err %v, Flags %b; want %d bytes in a buffer", c.N, c.Err, c.Flags, len(want))
	}
	if got := h.b.Buffer(g, c.BufferID)[:c.N]; string(got) != string(want) {
		t.Fatalf("armed recv: buffer %d holds %q, want %q", c.BufferID, got, want)
	}
	if err := h.b.ReleaseBuffer(g, c.BufferID); err != nil {
		t.Fatalf("ReleaseBuffer: %v", err)
	}
}

// testArmedRecv: an armed receive waits without completing, and completes
// with the data in a group buffer, keyed by its key; armed again and again
// it goes round the group.
func testArmedRecv(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	const g = 5
	armGroup(t, h, g, 4)
	fd, conn := h.netPeer()
	for i := range 10 {
		ph := h.arm(fd, g, uint64(1000+i))
		if i%2 == 0 {
			h.settle(10 * time.Millisecond)
			if !h.pending(ph) {
				t.Fatalf("armed recv %d completed with no data", i)
			}
		}
		want := pattern(5+i, byte(i))
		netWrite(h, conn, want)
		expectArmedData(t, h, g, h.wait(ph), want)
	}
}

// testArmedRecvWaiting: data that waits already completes the armed
// receive.
func testArmedRecvWaiting(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	const g = 5
	armGroup(t, h, g, 2)
	fd, conn := h.netPeer()
	netWrite(h, conn, []byte("early"))
	time.Sleep(10 * time.Millisecond) // the bytes cross the loopback
	expectArmedData(t, h, g, h.wait(h.arm(fd, g, 7)), []byte("early"))
}

// testArmedRecvEOF: the peer's close completes an armed receive with N 0
// and no buffer.
func testArmedRecvEOF(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	const g = 5
	armGroup(t, h, g, 2)
	fd, conn := h.netPeer()
	ph := h.arm(fd, g, 3)
	h.settle(5 * time.Millisecond)
	conn.Close()
	c := h.wait(ph)
	if c.Err != nil || c.N != 0 || c.Flags&backend.HasBuffer != 0 {
		t.Fatalf("armed recv at end of stream: N %d, Err %v, Flags %b; want 0", c.N, c.Err, c.Flags)
	}
}

// testArmedRecvCancel: CancelRecv ends the armed receive with ErrCanceled;
// with nothing armed it is ErrNotFound; the data sent after stays for the
// next receive.
func testArmedRecvCancel(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	const g = 5
	armGroup(t, h, g, 2)
	fd, conn := h.netPeer()
	ph := h.arm(fd, g, 9)
	h.settle(5 * time.Millisecond)
	a := h.b.(backend.RecvArmer)
	if err := a.CancelRecv(fd); err != nil {
		t.Fatalf("CancelRecv: %v", err)
	}
	wantErr(t, "cancelled armed recv", h.wait(ph).Err, backend.ErrCanceled)
	wantErr(t, "CancelRecv with nothing armed", a.CancelRecv(fd), backend.ErrNotFound)
	netWrite(h, conn, []byte("after"))
	expectArmedData(t, h, g, h.wait(h.arm(fd, g, 10)), []byte("after"))
}

// testArmedRecvCloseOp: a KindClose of the descriptor ends its armed
// receive with ErrCanceled, and the close completes.
func testArmedRecvCloseOp(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	const g = 5
	armGroup(t, h, g, 2)
	fd, _ := h.netPeer()
	ph := h.arm(fd, g, 11)
	h.settle(5 * time.Millisecond)
	h.forget(fd)
	h.runOK(&backend.Op{Kind: backend.KindClose, FD: fd})
	wantErr(t, "armed recv of a closed descriptor", h.wait(ph).Err, backend.ErrCanceled)
}

// testArmedRecvNoBuffers: with the group's only buffer held, data arriving
// fails the armed receive with ErrNoBuffers; it stays for the next one.
func testArmedRecvNoBuffers(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	const g = 5
	armGroup(t, h, g, 1)
	fd, conn := h.netPeer()
	netWrite(h, conn, []byte("one"))
	c := h.wait(h.arm(fd, g, 20))
	if c.Err != nil || c.Flags&backend.HasBuffer == 0 {
		t.Fatalf("first armed recv: N %d, Err %v", c.N, c.Err)
	}
	held := c.BufferID
	netWrite(h, conn, []byte("two"))
	c = h.wait(h.arm(fd, g, 21))
	wantErr(t, "armed recv from an empty group", c.Err, backend.ErrNoBuffers)
	if err := h.b.ReleaseBuffer(g, held); err != nil {
		t.Fatalf("ReleaseBuffer: %v", err)
	}
	expectArmedData(t, h, g, h.wait(h.arm(fd, g, 22)), []byte("two"))
}

// testArmedRecvAtClose: a receive still armed when the backend closes
// completes (ErrCanceled) in the drain; the harness checks it.
func testArmedRecvAtClose(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	const g = 5
	armGroup(t, h, g, 2)
	fd, _ := h.netPeer()
	ph := h.arm(fd, g, 30)
	h.settle(5 * time.Millisecond)
	h.close()
	r, ok := h.take(ph)
	if !ok {
		t.Fatalf("the armed recv did not complete in Close's drain")
	}
	wantErr(t, "armed recv at Close", r.c.Err, backend.ErrCanceled)
}

// testArmedRecvMisuse: a second arm on a descriptor, a key too wide and an
// unknown group are ErrInvalid; the first arm goes on.
func testArmedRecvMisuse(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	const g = 5
	armGroup(t, h, g, 2)
	fd, conn := h.netPeer()
	ph := h.arm(fd, g, 40)
	a := h.b.(backend.RecvArmer)
	wantErr(t, "second ArmRecv on a descriptor", a.ArmRecv(fd, g, 41), backend.ErrInvalid)
	wantErr(t, "ArmRecv with a key too wide", a.ArmRecv(fd, g, 1<<backend.ArmKeyBits), backend.ErrInvalid)
	wantErr(t, "ArmRecv of an unknown group", a.ArmRecv(fd, g+1, 42), backend.ErrInvalid)
	netWrite(h, conn, []byte("ok"))
	expectArmedData(t, h, g, h.wait(ph), []byte("ok"))
}
