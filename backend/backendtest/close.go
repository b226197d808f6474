package backendtest

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

var closeTests = []test{
	{name: "CloseIdle", fn: testCloseIdle},
	{name: "CloseWithOpsInFlight", fn: testCloseInFlight},
	{name: "CloseWakesBlockedWait", fn: testCloseWakesWait},
	{name: "CloseKeepsUserDescriptors", fn: testCloseKeepsFDs},
}

// testCloseIdle: Close with nothing in flight; then Wait is ErrClosed at
// once, Submit ErrClosed, a second Close ErrClosed (the harness checks the
// last two).
func testCloseIdle(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	h.runOK(&backend.Op{Kind: backend.KindNop})
	h.close()
	n, err := h.b.Wait(h.out, -1)
	if n != 0 || !errors.Is(err, backend.ErrClosed) {
		t.Errorf("Wait after the drain = %d, %v; want 0, ErrClosed", n, err)
	}
	if err := h.b.Wake(); err != nil && !errors.Is(err, backend.ErrClosed) {
		t.Errorf("Wake after Close: %v", err)
	}
}

// testCloseInFlight: Close with recvs, an accept, a multishot accept, a
// timeout, a send blocked on a full socket and a poll in flight: Close
// returns, and Wait hands back every op's final completion without blocking,
// then ErrClosed (the harness's close checks the drain).
func testCloseInFlight(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	var ops []*backend.Op
	add := func(op *backend.Op) {
		op.UserData = uint64(len(ops))
		h.mustSubmit(op)
		ops = append(ops, op)
	}
	for range 4 {
		fd, _ := h.netPeer()
		add(&backend.Op{Kind: backend.KindRecv, FD: fd, Buf: make([]byte, 64)})
	}
	ln, _ := h.listen(loopback4)
	add(&backend.Op{Kind: backend.KindAccept, FD: ln})
	ln2, _ := h.listen(loopback4)
	add(&backend.Op{Kind: backend.KindAccept, FD: ln2, Flags: backend.Multishot})
	add(&backend.Op{Kind: backend.KindTimeout, Timeout: time.Hour})
	lfd, _ := h.netPeer()
	add(&backend.Op{Kind: backend.KindRecv, FD: lfd, Buf: make([]byte, 1), Timeout: time.Hour})
	client, _ := h.pair()
	h.b.SetOption(client, backend.OptSendBuffer, 4096)
	big := make([]byte, 16<<20)
	for range 3 { // the first fill the buffers, the last blocks
		add(&backend.Op{Kind: backend.KindSend, FD: client, Buf: big})
	}
	if h.caps().Has(backend.CapPoll) {
		fd, _ := h.netPeer()
		add(&backend.Op{Kind: backend.KindPoll, FD: fd, Events: backend.EventIn})
	}
	u, _ := h.udpSocket(loopback4)
	add(&backend.Op{Kind: backend.KindRecvFrom, FD: u, Buf: make([]byte, 8)})
	if err := h.b.RegisterBufferGroup(1, 2, 64); err != nil {
		t.Fatalf("RegisterBufferGroup: %v", err)
	}
	sfd, _ := h.netPeer()
	add(&backend.Op{Kind: backend.KindRecv, FD: sfd, Flags: backend.SelectBuffer, BufferGroup: 1})
	h.settle(20 * time.Millisecond)

	start := time.Now()
	h.close()
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Close and the drain took %v", el)
	}
	for _, op := range ops {
		var last backend.Completion
		found := false
		for {
			r, ok := h.take(op)
			if !ok {
				break
			}
			last, found = r.c, true
		}
		if !found {
			t.Errorf("%s op (UserData %d): no completion", op.Kind, op.UserData)
			continue
		}
		if last.Err != nil && last.Err != backend.ErrCanceled {
			t.Errorf("%s op (UserData %d) after Close: %v, want ErrCanceled or its result", op.Kind, op.UserData, last.Err)
		}
		if last.More() {
			t.Errorf("%s op: last completion has More", op.Kind)
		}
	}
}

// testCloseWakesWait: Close while another goroutine is blocked in Wait(-1)
// makes that Wait return (completions or ErrClosed).
func testCloseWakesWait(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	tm := &backend.Op{Kind: backend.KindTimeout, Timeout: time.Hour}
	h.mustSubmit(tm)
	started, done := waitAsync(h.b, -1)
	<-started
	time.Sleep(50 * time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- h.b.Close() }()
	r, _ := recvWait(t, h.b, done, 5*time.Second, "Wait(-1) blocked across Close")
	if r.err != nil && !errors.Is(r.err, backend.ErrClosed) {
		t.Errorf("Wait across Close: %v", r.err)
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(opLimit):
		t.Fatalf("Close did not return while a Wait was in progress")
	}
	h.mu.Lock()
	for _, c := range r.c {
		h.recordLocked(c)
	}
	h.mu.Unlock()
	h.closed = true
	h.drain()
	if h.pending(tm) {
		t.Errorf("the timeout never completed after Close")
	}
	if err := h.b.Close(); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	h.closeFDs(false)
}

// testCloseKeepsFDs: Close leaves the caller's descriptors open: the net
// peer of a backend socket sees neither end of stream nor a reset.
func testCloseKeepsFDs(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	fd, conn := h.netPeer()
	h.forget(fd)
	h.close()
	conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	_, err := conn.Read(make([]byte, 1))
	if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Errorf("the net peer read %v after the backend's Close: the descriptor was closed", err)
	}
	// Whether Resources work after Close is the backend's affair: a
	// failure here is logged only.
	if err := h.b.CloseFD(fd); err != nil {
		t.Logf("CloseFD after Close: %v", err)
	}
}
