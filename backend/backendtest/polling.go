package backendtest

import (
	"net"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// The polled wait (backend.Pollable): a waiter that waits for the backend's
// descriptor to poll readable instead of blocking in Wait. Backends that do
// not implement it skip these tests.
var pollingTests = []test{
	{name: "PollingWake", fn: testPollingWake},
	{name: "PollingSubmitRecv", fn: testPollingSubmitRecv},
	{name: "PollingWaitZeroAfterWake", fn: testPollingWaitZeroAfterWake},
	{name: "PollingOwnDeadline", fn: testPollingOwnDeadline},
}

// pollable returns the backend's Pollable and its descriptor, or skips.
func pollable(t *testing.T, h *harness) (backend.Pollable, backend.FD) {
	t.Helper()
	p, ok := h.b.(backend.Pollable)
	if !ok {
		t.Skipf("%s backend is not Pollable", h.b.Name())
	}
	fd, ok := p.PollFD()
	if !ok {
		t.Skipf("%s backend has no descriptor to poll", h.b.Name())
	}
	return p, fd
}

// pumpZero runs Wait(out, 0) and records what it returned.
func pumpZero(t *testing.T, h *harness) int {
	t.Helper()
	return h.pump(0)
}

// completedIn returns a look for poller.await: it pumps Wait(out, 0) and
// reports whether op has completed (its record is then taken into *r).
func completedIn(t *testing.T, h *harness, op *backend.Op, r *record) func() bool {
	return func() bool {
		pumpZero(t, h)
		got, ok := h.take(op)
		if ok {
			*r = got
		}
		return ok
	}
}

// testPollingWake: while polling, a Wake from another goroutine makes the
// descriptor readable, and a Wait(0) then returns without error.
func testPollingWake(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	pb, fd := pollable(t, h)
	p := newPoller(t, fd)
	pb.StartPolling()
	defer pb.StopPolling()
	go func() {
		time.Sleep(20 * time.Millisecond)
		_ = h.b.Wake()
	}()
	looks := 0
	woke := p.await(t, 5*time.Second, func() bool {
		looks++
		if n := pumpZero(t, h); n != 0 {
			t.Errorf("Wait(0) while polling = %d completions, want 0", n)
		}
		return looks > 1 // a second look: the descriptor became readable
	})
	if !woke {
		t.Fatal("a Wake while polling did not make the descriptor readable")
	}
}

// polledRecv is a recv submitted while polling is on, with the peer that
// feeds it.
type polledRecv struct {
	h    *harness
	pb   backend.Pollable
	fd   backend.FD // the backend's PollFD
	op   *backend.Op
	buf  []byte
	peer net.Conn
}

// startPolledRecv turns polling on (off again at the test's end), looks
// once, and submits a recv on a fresh connection.
func startPolledRecv(t *testing.T, nb NewFunc, userData uint64) *polledRecv {
	h := newHarness(t, nb)
	pb, fd := pollable(t, h)
	conn, peer := h.netPeer()
	pb.StartPolling()
	t.Cleanup(pb.StopPolling)
	pumpZero(t, h)
	r := &polledRecv{h: h, pb: pb, fd: fd, buf: make([]byte, 16), peer: peer}
	r.op = &backend.Op{Kind: backend.KindRecv, FD: conn, Buf: r.buf, UserData: userData}
	h.mustSubmit(r.op)
	return r
}

// check fails the test unless the recv's completion c carried want.
func (r *polledRecv) check(t *testing.T, c backend.Completion, want string) {
	t.Helper()
	if c.Err != nil || string(r.buf[:max(0, c.N)]) != want {
		t.Fatalf("recv: N %d, Err %v, data %q, want %q", c.N, c.Err, r.buf[:max(0, c.N)], want)
	}
}

// testPollingSubmitRecv: a recv submitted while polling reaches the kernel
// without a Flush or a Wait, so the data a peer sends later makes the
// descriptor readable and a Wait(0) returns the recv.
func testPollingSubmitRecv(t *testing.T, nb NewFunc) {
	r := startPolledRecv(t, nb, 7)
	p := newPoller(t, r.fd)
	go func() {
		time.Sleep(20 * time.Millisecond)
		netWrite(r.h, r.peer, []byte("polled"))
	}()
	var got record
	if !p.await(t, 5*time.Second, completedIn(t, r.h, r.op, &got)) {
		t.Fatal("a recv submitted while polling did not complete by readiness of the descriptor")
	}
	r.check(t, got.c, "polled")
}

// testPollingWaitZeroAfterWake: a Wait(0) made while a Wake is pending still
// returns what is ready. The waiter's readiness edge for the data may be
// spent already (it arrived before the waiter looked); a Wait(0) that
// returned early for the Wake would leave the completion to a wait that
// never wakes.
func testPollingWaitZeroAfterWake(t *testing.T, nb NewFunc) {
	r := startPolledRecv(t, nb, 8)
	netWrite(r.h, r.peer, []byte("both"))
	time.Sleep(50 * time.Millisecond) // the data is in; its readiness is pending
	if err := r.h.b.Wake(); err != nil {
		t.Fatalf("Wake: %v", err)
	}
	var got record
	if !completedIn(t, r.h, r.op, &got)() {
		t.Fatal("Wait(0) with a Wake pending returned without the recv whose data had arrived")
	}
	r.check(t, got.c, "both")
}

// testPollingOwnDeadline: a KindTimeout submitted while polling completes
// in time for a waiter that sleeps towards StartPolling's deadline (a
// backend keeping deadlines in user space) or until the descriptor is
// readable (one whose kernel keeps them).
func testPollingOwnDeadline(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	pb, fd := pollable(t, h)
	p := newPoller(t, fd)
	const d = 50 * time.Millisecond
	pb.StartPolling()
	defer pb.StopPolling()
	op := &backend.Op{Kind: backend.KindTimeout, Timeout: d, UserData: 9}
	start := time.Now()
	h.mustSubmit(op)
	var r record
	for done := false; !done; {
		own := pb.StartPolling()
		if own > d {
			t.Fatalf("StartPolling = %v with a %v timeout in flight", own, d)
		}
		limit := 5 * time.Second
		if own >= 0 {
			limit = max(own, time.Millisecond)
		}
		done = p.await(t, limit, completedIn(t, h, op, &r))
		if !done && completedIn(t, h, op, &r)() {
			done = true
		}
		if !done && time.Since(start) > d+late {
			t.Fatalf("a %v KindTimeout did not complete in %v of polling", d, time.Since(start))
		}
	}
	if r.c.Err != backend.ErrTimeout {
		t.Fatalf("timeout: Err %v, want ErrTimeout", r.c.Err)
	}
	checkDuration(t, "a KindTimeout waited for by polling", time.Since(start), d)
}
