package backendtest

import (
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

var coreTests = []test{
	{name: "Nop", fn: testNop},
	{name: "NopMany", fn: testNopMany},
	{name: "Name", fn: testName},
	{name: "SubmitInvalid", fn: testSubmitInvalid},
	{name: "SubmitTwiceInFlight", fn: testSubmitTwice},
	{name: "OpReuse", fn: testOpReuse},
}

// testNop: a nop comes back with its Op, its UserData, N 0 and no error.
func testNop(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	op := &backend.Op{Kind: backend.KindNop, UserData: 0xdeadbeefcafe}
	h.mustSubmit(op)
	if err := h.b.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	c := h.wait(op)
	if c.Op != op || c.UserData != 0xdeadbeefcafe || c.N != 0 || c.Err != nil || c.Flags != 0 {
		t.Fatalf("nop completion %+v", c)
	}
	h.settle(20 * time.Millisecond)
}

// testNopMany: more nops than the Wait buffer holds all complete, once each.
func testNopMany(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	ops := make([]backend.Op, 1000)
	for i := range ops {
		ops[i] = backend.Op{Kind: backend.KindNop, UserData: uint64(i)}
		h.mustSubmit(&ops[i])
	}
	for i := range ops {
		if c := h.wait(&ops[i]); c.Err != nil || c.UserData != uint64(i) {
			t.Fatalf("nop %d: %+v", i, c)
		}
	}
}

// testName: Name is one of the five.
func testName(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	switch h.b.Name() {
	case "uring", "epoll", "kqueue", "poll", "iocp":
	default:
		t.Errorf("Name() = %q", h.b.Name())
	}
}

// testSubmitInvalid: ops CheckOp rejects get ErrInvalid from Submit and never
// complete (a completion would be a stray for the harness).
func testSubmitInvalid(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	target := &backend.Op{Kind: backend.KindNop}
	bad := map[string]*backend.Op{
		"zero kind":          {},
		"unknown kind":       {Kind: 200},
		"multishot recv":     {Kind: backend.KindRecv, Flags: backend.Multishot, Buf: make([]byte, 1)},
		"selectbuffer send":  {Kind: backend.KindSend, Flags: backend.SelectBuffer, Buf: make([]byte, 1)},
		"pollfirst send":     {Kind: backend.KindSend, Flags: backend.PollFirst, Buf: make([]byte, 1)},
		"pollfirst accept":   {Kind: backend.KindAccept, Flags: backend.PollFirst},
		"cancel nil target":  {Kind: backend.KindCancel},
		"cancel itself":      nil,
		"cancel with time":   {Kind: backend.KindCancel, Target: target, Timeout: time.Second},
		"close with timeout": {Kind: backend.KindClose, Timeout: time.Second},
		"recv empty buf":     {Kind: backend.KindRecv},
		"send empty buf":     {Kind: backend.KindSend},
		"read empty buf":     {Kind: backend.KindRead},
		"write bad offset":   {Kind: backend.KindWrite, Buf: make([]byte, 1), Offset: -2},
		"readv no bufs":      {Kind: backend.KindReadv},
		"writev bad offset":  {Kind: backend.KindWritev, Bufs: [][]byte{make([]byte, 1)}, Offset: -5},
		"connect no addr":    {Kind: backend.KindConnect},
		"sendto no addr":     {Kind: backend.KindSendTo, Buf: make([]byte, 1)},
		"poll no events":     {Kind: backend.KindPoll},
		"negative timeout":   {Kind: backend.KindTimeout, Timeout: -time.Second},
	}
	self := &backend.Op{Kind: backend.KindCancel}
	self.Target = self
	bad["cancel itself"] = self
	for name, op := range bad {
		err := h.b.Submit(op)
		wantErr(t, name, err, backend.ErrInvalid)
		checkErr(t, name, err)
	}
	if err := h.b.Submit(nil); err == nil {
		t.Errorf("Submit(nil) = nil, want ErrInvalid")
	}
	// Nothing must complete: settle fails on a completion for an op the
	// harness did not submit.
	h.settle(50 * time.Millisecond)
	// The backend still works.
	h.runOK(&backend.Op{Kind: backend.KindNop})
}

// testSubmitTwice: submitting an op that is in flight is ErrInvalid, and the
// op still completes exactly once.
func testSubmitTwice(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	op := &backend.Op{Kind: backend.KindTimeout, Timeout: 100 * time.Millisecond, UserData: 7}
	h.mustSubmit(op)
	wantErr(t, "second Submit of an op in flight", h.b.Submit(op), backend.ErrInvalid)
	c := h.wait(op)
	wantErr(t, "timeout", c.Err, backend.ErrTimeout)

	// A recv in flight, too (it lives in other tables than a timer).
	client, server := h.pair()
	rop := &backend.Op{Kind: backend.KindRecv, FD: server, Buf: make([]byte, 8), UserData: 8}
	h.mustSubmit(rop)
	wantErr(t, "second Submit of a recv in flight", h.b.Submit(rop), backend.ErrInvalid)
	h.send(client, []byte("x"))
	if c := h.wait(rop); c.Err != nil || c.N != 1 {
		t.Fatalf("recv: N %d, Err %v", c.N, c.Err)
	}
	h.settle(20 * time.Millisecond)
}

// testOpReuse: after its final completion an op can be submitted again.
func testOpReuse(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	op := &backend.Op{Kind: backend.KindNop}
	for i := range 100 {
		op.UserData = uint64(i)
		if c := h.run(op); c.Err != nil || c.UserData != uint64(i) {
			t.Fatalf("round %d: %+v", i, c)
		}
	}
}
