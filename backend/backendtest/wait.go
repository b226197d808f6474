package backendtest

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

var waitTests = []test{
	{name: "WaitZero", fn: testWaitZero},
	{name: "WaitPositive", fn: testWaitPositive},
	{name: "WaitNegativeUntilWake", fn: testWaitNegativeWake},
	{name: "WakeBeforeWait", fn: testWakeBeforeWait},
	{name: "WakesCoalesce", fn: testWakesCoalesce},
	{name: "WaitConcurrentBusy", fn: testWaitBusy},
	{name: "SubmitWhileWaitingNop", fn: testSubmitWhileWaitingNop},
	{name: "SubmitWhileWaitingRecv", fn: testSubmitWhileWaitingRecv},
	{name: "WaitSmallOut", fn: testWaitSmallOut},
	{name: "WakeConcurrent", fn: testWakeConcurrent},
}

// slack is how much earlier than asked a timed wait may return (coarse
// timers: Windows ticks at 15.6 ms).
const slack = 20 * time.Millisecond

// late is how much later than asked a timed wait may return on a loaded,
// race-instrumented machine.
const late = 3 * time.Second

// checkDuration fails the test unless el is about d: not much less, and not
// absurdly more.
func checkDuration(t testing.TB, what string, el, d time.Duration) {
	t.Helper()
	if el < d-slack {
		t.Errorf("%s took %v, want about %v (returned early)", what, el, d)
	}
	if el > d+late {
		t.Errorf("%s took %v, want about %v", what, el, d)
	}
}

// testWaitZero: Wait with timeout 0 and nothing ready returns at once.
func testWaitZero(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	out := make([]backend.Completion, 4)
	start := time.Now()
	for range 10 {
		n, err := h.b.Wait(out, 0)
		if n != 0 || err != nil {
			t.Fatalf("Wait(0) = %d, %v", n, err)
		}
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("10 Wait(0) took %v", el)
	}
}

// testWaitPositive: Wait with a positive timeout and nothing ready waits
// about that long.
func testWaitPositive(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	out := make([]backend.Completion, 4)
	for _, d := range []time.Duration{time.Millisecond, 30 * time.Millisecond, 150 * time.Millisecond} {
		start := time.Now()
		n, err := h.b.Wait(out, d)
		el := time.Since(start)
		if n != 0 || err != nil {
			t.Fatalf("Wait(%v) = %d, %v", d, n, err)
		}
		checkDuration(t, "Wait", el, d)
	}
}

// waitResult is what a Wait in another goroutine returned.
type waitResult struct {
	n   int
	err error
	c   []backend.Completion
	el  time.Duration
}

// waitAsync runs Wait(out, timeout) in a goroutine, returning a channel for
// its result. started is closed just before it calls Wait.
func waitAsync(b backend.Backend, timeout time.Duration) (started chan struct{}, done chan waitResult) {
	started = make(chan struct{})
	done = make(chan waitResult, 1)
	go func() {
		out := make([]backend.Completion, 16)
		close(started)
		start := time.Now()
		n, err := b.Wait(out, timeout)
		done <- waitResult{n: n, err: err, c: out[:max(0, n)], el: time.Since(start)}
	}()
	return started, done
}

// recvWait returns the result of a Wait started with waitAsync, or, when it
// has not returned within limit, Wakes the backend (so the goroutine ends),
// fails the test with msg and returns ok false.
func recvWait(t testing.TB, b backend.Backend, done chan waitResult, limit time.Duration, msg string) (waitResult, bool) {
	t.Helper()
	select {
	case r := <-done:
		return r, true
	case <-time.After(limit):
		t.Errorf("%s (no return within %v)", msg, limit)
		for range 10 {
			if err := b.Wake(); err != nil {
				t.Errorf("Wake: %v", err)
			}
			select {
			case r := <-done:
				return r, false
			case <-time.After(time.Second):
			}
		}
		t.Fatalf("Wait does not return even after Wakes; its goroutine is left blocked")
		return waitResult{}, false
	}
}

// testWaitNegativeWake: Wait(-1) blocks until Wake from another goroutine,
// then returns (0, nil).
func testWaitNegativeWake(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	started, done := waitAsync(h.b, -1)
	<-started
	select {
	case r := <-done:
		t.Fatalf("Wait(-1) returned without a Wake: %d, %v", r.n, r.err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := h.b.Wake(); err != nil {
		t.Fatalf("Wake: %v", err)
	}
	r, ok := recvWait(t, h.b, done, opLimit, "Wait(-1) did not return after Wake")
	if ok && (r.n != 0 || r.err != nil) {
		t.Errorf("Wait after Wake = %d, %v; want 0, nil", r.n, r.err)
	}
}

// testWakeBeforeWait: a Wake with no Wait in progress makes the next Wait
// return at once, even with a negative timeout.
func testWakeBeforeWait(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	if err := h.b.Wake(); err != nil {
		t.Fatalf("Wake: %v", err)
	}
	_, done := waitAsync(h.b, -1)
	r, ok := recvWait(t, h.b, done, 5*time.Second, "Wait(-1) after Wake did not return")
	if ok && (r.n != 0 || r.err != nil) {
		t.Errorf("Wait after Wake = %d, %v; want 0, nil", r.n, r.err)
	}
}

// testWakesCoalesce: many Wakes before a Wait make it return once; the Wait
// after that waits its full timeout.
func testWakesCoalesce(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	for range 100 {
		if err := h.b.Wake(); err != nil {
			t.Fatalf("Wake: %v", err)
		}
	}
	out := make([]backend.Completion, 4)
	start := time.Now()
	if n, err := h.b.Wait(out, 5*time.Second); n != 0 || err != nil {
		t.Fatalf("Wait after Wakes = %d, %v", n, err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("Wait after Wakes took %v", el)
	}
	const d = 100 * time.Millisecond
	start = time.Now()
	if n, err := h.b.Wait(out, d); n != 0 || err != nil {
		t.Fatalf("second Wait = %d, %v", n, err)
	}
	checkDuration(t, "second Wait after 100 coalesced Wakes", time.Since(start), d)
}

// testWaitBusy: a Wait while another goroutine waits returns ErrBusy at once,
// whatever its timeout.
func testWaitBusy(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	started, done := waitAsync(h.b, -1)
	<-started
	out := make([]backend.Completion, 4)
	sawBusy := false
	for i := 0; i < 50 && !sawBusy; i++ {
		time.Sleep(20 * time.Millisecond)
		if n, err := h.b.Wait(out, 0); err == nil && n == 0 {
			continue // the other goroutine has not entered Wait yet
		} else if !errors.Is(err, backend.ErrBusy) || n != 0 {
			t.Fatalf("concurrent Wait(0) = %d, %v; want 0, ErrBusy", n, err)
		}
		sawBusy = true
		start := time.Now()
		n, err := h.b.Wait(out, 10*time.Second)
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("concurrent Wait(10s) took %v", el)
		}
		if !errors.Is(err, backend.ErrBusy) || n != 0 {
			t.Errorf("concurrent Wait(10s) = %d, %v; want 0, ErrBusy", n, err)
		}
		_, done2 := waitAsync(h.b, -1)
		if r, ok := recvWait(t, h.b, done2, 2*time.Second, "concurrent Wait(-1) blocked"); ok &&
			(!errors.Is(r.err, backend.ErrBusy) || r.n != 0) {
			t.Errorf("concurrent Wait(-1) = %d, %v; want 0, ErrBusy", r.n, r.err)
		}
	}
	if !sawBusy {
		t.Errorf("never saw ErrBusy from a concurrent Wait")
	}
	if err := h.b.Wake(); err != nil {
		t.Fatalf("Wake: %v", err)
	}
	if r, ok := recvWait(t, h.b, done, opLimit, "blocked Wait did not return after Wake"); ok && r.err != nil {
		t.Errorf("blocked Wait = %d, %v", r.n, r.err)
	}
}

// submitWhileWaiting submits op while another goroutine is blocked in
// Wait(-1), and checks that the op completes without a Wake.
func submitWhileWaiting(t *testing.T, h *harness, op *backend.Op) backend.Completion {
	t.Helper()
	started, done := waitAsync(h.b, -1)
	<-started
	time.Sleep(50 * time.Millisecond) // let it block
	h.mu.Lock()
	h.inflight[op] = true
	h.mu.Unlock()
	if err := h.b.Submit(op); err != nil {
		t.Fatalf("Submit while waiting: %v", err)
	}
	r, ok := recvWait(t, h.b, done, 5*time.Second,
		"an op submitted while Wait(-1) blocked did not complete without a Wake")
	if r.err != nil {
		t.Fatalf("Wait: %v", r.err)
	}
	h.mu.Lock()
	for _, c := range r.c {
		h.recordLocked(c)
	}
	h.mu.Unlock()
	if !ok {
		return h.wait(op)
	}
	if r.n == 0 {
		t.Fatalf("Wait(-1) returned 0 completions without a Wake")
	}
	return h.wait(op)
}

// testSubmitWhileWaitingNop: a nop submitted while Wait(-1) blocks completes.
func testSubmitWhileWaitingNop(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	op := &backend.Op{Kind: backend.KindNop, UserData: 5}
	if c := submitWhileWaiting(t, h, op); c.Err != nil {
		t.Fatalf("nop: %v", c.Err)
	}
}

// testSubmitWhileWaitingRecv: a recv whose data is already there, submitted
// while Wait(-1) blocks, completes.
func testSubmitWhileWaitingRecv(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	fd, peer := h.netPeer()
	netWrite(h, peer, []byte("ready"))
	time.Sleep(20 * time.Millisecond)
	buf := make([]byte, 16)
	op := &backend.Op{Kind: backend.KindRecv, FD: fd, Buf: buf, UserData: 6}
	c := submitWhileWaiting(t, h, op)
	if c.Err != nil || string(buf[:c.N]) != "ready" {
		t.Fatalf("recv: N %d, Err %v, data %q", c.N, c.Err, buf[:max(0, c.N)])
	}
}

// testWaitSmallOut: Wait with a one-element out returns one completion at a
// time and loses none.
func testWaitSmallOut(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	h.out = h.out[:1]
	ops := make([]backend.Op, 20)
	for i := range ops {
		ops[i] = backend.Op{Kind: backend.KindNop, UserData: uint64(i)}
		h.mustSubmit(&ops[i])
	}
	for i := range ops {
		h.wait(&ops[i])
	}
}

// testWakeConcurrent: Wakes from several goroutines while one goroutine
// loops in Wait(-1): no Wake is lost for good (the loop always ends) and
// nothing races.
func testWakeConcurrent(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range scale(2000, 300) {
				if err := h.b.Wake(); err != nil {
					t.Errorf("Wake: %v", err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		out := make([]backend.Completion, 4)
		for !stop.Load() {
			if _, err := h.b.Wait(out, -1); err != nil {
				t.Errorf("Wait: %v", err)
				return
			}
		}
	}()
	wg.Wait()
	stop.Store(true)
	if err := h.b.Wake(); err != nil {
		t.Fatalf("Wake: %v", err)
	}
	select {
	case <-done:
	case <-time.After(opLimit):
		t.Fatalf("Wait(-1) did not return after the last Wake")
	}
}
