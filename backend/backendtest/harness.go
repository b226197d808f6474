package backendtest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// opLimit is how long the harness waits for one op's completion before it
// declares the backend broken: long enough for a loaded CI machine running
// under -race (or Wine), short enough that a hang fails the test.
const opLimit = 20 * time.Second

// pumpSlice is the longest single Wait of the harness's pump, so that a
// backend whose completions do not wake Wait still gets polled and the
// failure shows up as a deadline message rather than a hang.
const pumpSlice = 200 * time.Millisecond

// record is one completion as the harness saw it, with its arrival number
// (completions are numbered in the order Wait returned them).
type record struct {
	c   backend.Completion
	seq uint64
}

// harness wraps one backend for one test: it submits ops, pumps Wait, and
// keeps an exact account of every op in flight, so that a completion for an
// op not in flight (a stray or a second final completion), a More flag where
// none is allowed, or an error that is no sentinel fails the test wherever it
// happens. At the end (cleanup) it closes the backend and checks the drain.
type harness struct {
	tb testing.TB
	b  backend.Backend

	// mu guards the fields below it: Submit may be called from any
	// goroutine while another pumps Wait.
	mu sync.Mutex
	// inflight holds the ops submitted and not finally completed.
	inflight map[*backend.Op]bool
	// queued holds completions not yet taken by wait or next, per op.
	queued map[*backend.Op][]record
	// sink, when set, receives every completion instead of queued (the
	// stress test dispatches them itself).
	sink func(record)
	// seq numbers completions in arrival order.
	seq uint64
	// fds are the descriptors to close at the end, made by the harness's
	// helpers or produced by accept completions.
	fds map[backend.FD]bool
	// closed is set once close ran.
	closed bool
	// arms maps the key of each armed receive (backend.RecvArmer) to the
	// placeholder op that stands for it in inflight and queued (see arm).
	arms map[uint64]*backend.Op

	// out is the Wait buffer; only the pumping goroutine uses it.
	out []backend.Completion
}

// newHarness makes a fresh backend and registers its close as a cleanup.
func newHarness(tb testing.TB, newBackend func(testing.TB) backend.Backend) *harness {
	tb.Helper()
	b := newBackend(tb)
	if b == nil {
		tb.Fatal("newBackend returned nil")
	}
	h := &harness{
		tb:       tb,
		b:        b,
		inflight: make(map[*backend.Op]bool),
		queued:   make(map[*backend.Op][]record),
		fds:      make(map[backend.FD]bool),
		arms:     make(map[uint64]*backend.Op),
		out:      make([]backend.Completion, 64),
	}
	tb.Cleanup(h.close)
	return h
}

// submit hands op to the backend, recording it as in flight first (its
// completion may be pumped by another goroutine before Submit returns).
func (h *harness) submit(op *backend.Op) error {
	h.mu.Lock()
	if h.inflight[op] {
		h.mu.Unlock()
		h.tb.Errorf("harness: op %s (UserData %d) submitted while in flight; use b.Submit to test that", op.Kind, op.UserData)
		return errors.New("harness misuse")
	}
	h.inflight[op] = true
	h.mu.Unlock()
	err := h.b.Submit(op)
	if err != nil {
		h.mu.Lock()
		delete(h.inflight, op)
		h.mu.Unlock()
		checkErr(h.tb, "Submit", err)
	}
	return err
}

// mustSubmit is submit failing the test on error. Only from the test
// goroutine.
func (h *harness) mustSubmit(op *backend.Op) {
	h.tb.Helper()
	if err := h.submit(op); err != nil {
		h.tb.Fatalf("Submit(%s): %v", op.Kind, err)
	}
}

// recordLocked accounts for one completion. The caller holds h.mu.
func (h *harness) recordLocked(c backend.Completion) {
	h.seq++
	r := record{c: c, seq: h.seq}
	op := c.Op
	if op == nil {
		// An armed receive's completion: it stands in the accounts as its
		// placeholder op.
		if op = h.arms[c.UserData]; op == nil {
			h.tb.Errorf("completion with nil Op (UserData %d, N %d, Err %v) and no receive armed with that key", c.UserData, c.N, c.Err)
			return
		}
		if c.Flags&backend.More != 0 {
			h.tb.Errorf("armed receive's completion (key %d) has More", c.UserData)
		}
		delete(h.arms, c.UserData)
		c.Op = op
		r.c = c
	}
	if !h.inflight[op] {
		h.tb.Errorf("stray completion: %s op (UserData %d) is not in flight (N %d, Err %v, Flags %b)",
			op.Kind, c.UserData, c.N, c.Err, c.Flags)
		return
	}
	if c.UserData != op.UserData {
		h.tb.Errorf("%s completion: UserData %d, op's is %d", op.Kind, c.UserData, op.UserData)
	}
	checkErr(h.tb, op.Kind.String()+" completion", c.Err)
	h.checkFlags(c)
	if c.Flags&backend.More == 0 {
		delete(h.inflight, op)
	}
	if (op.Kind == backend.KindAccept || op.Kind == backend.KindOpenAt) && c.Err == nil {
		h.fds[c.FD] = true
	}
	if h.sink != nil {
		h.sink(r)
		return
	}
	h.queued[op] = append(h.queued[op], r)
}

// checkFlags checks that More and HasBuffer appear only where allowed.
func (h *harness) checkFlags(c backend.Completion) {
	op := c.Op
	if c.Flags&backend.More != 0 && !(op.Kind == backend.KindAccept && op.Flags&backend.Multishot != 0) {
		h.tb.Errorf("%s completion has More but the op is no Multishot accept", op.Kind)
	}
	if c.Flags&backend.HasBuffer != 0 {
		if op.Flags&backend.SelectBuffer == 0 {
			h.tb.Errorf("%s completion has HasBuffer but the op has no SelectBuffer", op.Kind)
		}
		if c.Err != nil || c.N == 0 {
			h.tb.Errorf("%s completion has HasBuffer with N %d, Err %v (a buffer only comes with data)", op.Kind, c.N, c.Err)
		}
	}
}

// pump runs one Wait with timeout and accounts for what it returns. It
// reports how many completions arrived.
func (h *harness) pump(timeout time.Duration) int {
	h.tb.Helper()
	n, err := h.b.Wait(h.out, timeout)
	if err != nil {
		h.tb.Fatalf("Wait(%v): %v", timeout, err)
	}
	if n < 0 || n > len(h.out) {
		h.tb.Fatalf("Wait returned n = %d with len(out) = %d", n, len(h.out))
	}
	h.mu.Lock()
	for i := range h.out[:n] {
		h.recordLocked(h.out[i])
		h.out[i] = backend.Completion{}
	}
	h.mu.Unlock()
	return n
}

// take removes and returns the first queued completion of op (a More one
// or the final one), without waiting.
func (h *harness) take(op *backend.Op) (record, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queued[op]
	if len(q) == 0 {
		return record{}, false
	}
	r := q[0]
	if len(q) == 1 {
		delete(h.queued, op)
	} else {
		h.queued[op] = q[1:]
	}
	return r, true
}

// next returns op's next completion (a More one or the final one), pumping
// Wait until it arrives or the deadline passes.
func (h *harness) next(op *backend.Op) record {
	h.tb.Helper()
	deadline := time.Now().Add(opLimit)
	for {
		if r, ok := h.take(op); ok {
			return r
		}
		left := time.Until(deadline)
		if left <= 0 {
			h.tb.Fatalf("no completion of the %s op (UserData %d) within %v; in flight: %s", op.Kind, op.UserData, opLimit, h.describeInflight())
		}
		h.pump(min(left, pumpSlice))
	}
}

// wait returns op's final completion; a More completion before it fails the
// test (use next for Multishot ops).
func (h *harness) wait(op *backend.Op) backend.Completion {
	h.tb.Helper()
	return h.waitRec(op).c
}

// waitRec is wait returning the arrival number too.
func (h *harness) waitRec(op *backend.Op) record {
	h.tb.Helper()
	for {
		r := h.next(op)
		if r.c.Flags&backend.More == 0 {
			return r
		}
		h.tb.Errorf("unexpected More completion of %s op (UserData %d)", op.Kind, op.UserData)
	}
}

// run submits op and returns its final completion.
func (h *harness) run(op *backend.Op) backend.Completion {
	h.tb.Helper()
	h.mustSubmit(op)
	return h.wait(op)
}

// runOK is run failing the test when the op fails.
func (h *harness) runOK(op *backend.Op) backend.Completion {
	h.tb.Helper()
	c := h.run(op)
	if c.Err != nil {
		h.tb.Fatalf("%s op: %v", op.Kind, c.Err)
	}
	return c
}

// settle pumps for d and fails on anything that arrives for an op not in
// flight (recordLocked does that); it is how a test checks that nothing
// stray follows a completion.
func (h *harness) settle(d time.Duration) {
	h.tb.Helper()
	deadline := time.Now().Add(d)
	for left := d; left > 0; left = time.Until(deadline) {
		h.pump(min(left, pumpSlice))
	}
}

// pending reports whether op is still in flight.
func (h *harness) pending(op *backend.Op) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inflight[op]
}

// describeInflight lists the ops in flight, for failure messages.
func (h *harness) describeInflight() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := ""
	i := 0
	for op := range h.inflight {
		if i == 8 {
			return s + fmt.Sprintf(" ... (%d in all)", len(h.inflight))
		}
		s += fmt.Sprintf(" %s/%d", op.Kind, op.UserData)
		i++
	}
	if s == "" {
		return "none"
	}
	return s
}

// track registers fd to be closed at the end of the test.
func (h *harness) track(fd backend.FD) {
	h.mu.Lock()
	h.fds[fd] = true
	h.mu.Unlock()
}

// forget drops fd from the close list (a KindClose op closed it).
func (h *harness) forget(fd backend.FD) {
	h.mu.Lock()
	delete(h.fds, fd)
	h.mu.Unlock()
}

// closeFD closes fd now with CloseFD.
func (h *harness) closeFD(fd backend.FD) {
	h.tb.Helper()
	h.forget(fd)
	if err := h.b.CloseFD(fd); err != nil {
		h.tb.Errorf("CloseFD(%d): %v", fd, err)
	}
}

// close ends the test's use of the backend: it closes the descriptors (first
// when nothing is in flight, as CloseFD wants, else after the drain), closes
// the backend and checks the drain contract: Wait returns every in-flight
// op's final completion without blocking, then ErrClosed; Submit and a
// second Close return ErrClosed.
func (h *harness) close() {
	if h.closed {
		return
	}
	h.closed = true
	h.mu.Lock()
	busy := len(h.inflight) > 0
	h.mu.Unlock()
	if !busy {
		h.closeFDs(true)
	}
	if err := h.b.Close(); err != nil {
		h.tb.Errorf("Close: %v", err)
	}
	h.drain()
	h.mu.Lock()
	left := len(h.inflight)
	h.mu.Unlock()
	if left > 0 {
		h.tb.Errorf("after Close and the drain, %d ops never completed finally:%s", left, h.describeInflight())
	}
	if err := h.b.Submit(&backend.Op{Kind: backend.KindNop}); !errors.Is(err, backend.ErrClosed) {
		h.tb.Errorf("Submit after Close: %v, want ErrClosed", err)
	}
	if err := h.b.Close(); !errors.Is(err, backend.ErrClosed) {
		h.tb.Errorf("second Close: %v, want ErrClosed", err)
	}
	if busy {
		h.closeFDs(false)
	}
}

// drain reads the completions Close left until Wait says ErrClosed; Wait
// must not block.
func (h *harness) drain() {
	for i := 0; ; i++ {
		start := time.Now()
		n, err := h.b.Wait(h.out, 5*time.Second)
		if el := time.Since(start); el > 2*time.Second {
			h.tb.Errorf("Wait after Close blocked for %v", el)
			return
		}
		h.mu.Lock()
		for j := range h.out[:max(0, min(n, len(h.out)))] {
			h.recordLocked(h.out[j])
		}
		h.mu.Unlock()
		if errors.Is(err, backend.ErrClosed) {
			if n != 0 {
				h.tb.Errorf("Wait after Close returned n = %d with ErrClosed", n)
			}
			return
		}
		if err != nil {
			h.tb.Errorf("Wait after Close: %v, want completions then ErrClosed", err)
			return
		}
		if n == 0 || i > 100000 {
			h.tb.Errorf("Wait after Close returned (0, nil) (want the drained completions, then ErrClosed)")
			return
		}
	}
}

// closeFDs closes the tracked descriptors; strict says a failure is a test
// failure (before Close) rather than a log line (after it: whether
// Resources work on a closed backend is the backend's affair).
func (h *harness) closeFDs(strict bool) {
	h.mu.Lock()
	fds := h.fds
	h.fds = make(map[backend.FD]bool)
	h.mu.Unlock()
	for fd := range fds {
		err := h.b.CloseFD(fd)
		switch {
		case err != nil && strict:
			h.tb.Errorf("CloseFD(%d): %v", fd, err)
		case err != nil:
			h.tb.Logf("CloseFD(%d) after Close: %v", fd, err)
		}
	}
}
