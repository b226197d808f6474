package backendtest

import (
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

var timeoutTests = []test{
	{name: "TimeoutFires", fn: testTimeoutFires},
	{name: "TimeoutZero", fn: testTimeoutZero},
	{name: "TimeoutOrder", fn: testTimeoutOrder},
	{name: "TimeoutCancel", fn: testTimeoutCancel},
	{name: "TimeoutMany", fn: testTimeoutMany},
	{name: "LinkedTimeoutFires", fn: testLinkedTimeoutFires},
	{name: "LinkedTimeoutNotFired", fn: testLinkedTimeoutNotFired},
	{name: "LinkedTimeoutAccept", fn: testLinkedTimeoutAccept},
	{name: "LinkedTimeoutCancel", fn: testLinkedTimeoutCancel},
}

// testTimeoutFires: a timeout op completes with ErrTimeout after about its
// duration.
func testTimeoutFires(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	const d = 100 * time.Millisecond
	start := time.Now()
	c := h.run(&backend.Op{Kind: backend.KindTimeout, Timeout: d})
	checkDuration(t, "timeout op", time.Since(start), d)
	wantErr(t, "timeout op", c.Err, backend.ErrTimeout)
	if c.Err != backend.ErrTimeout {
		t.Errorf("timeout op error %#v is not the bare ErrTimeout", c.Err)
	}
}

// testTimeoutZero: a zero timeout completes at once with ErrTimeout.
func testTimeoutZero(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	start := time.Now()
	c := h.run(&backend.Op{Kind: backend.KindTimeout})
	wantErr(t, "zero timeout op", c.Err, backend.ErrTimeout)
	if el := time.Since(start); el > time.Second {
		t.Errorf("zero timeout took %v", el)
	}
}

// testTimeoutOrder: timeouts complete in the order of their durations, not
// of their submission.
func testTimeoutOrder(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	durs := []time.Duration{250, 50, 150, 100, 200}
	ops := make([]backend.Op, len(durs))
	for i, d := range durs {
		ops[i] = backend.Op{Kind: backend.KindTimeout, Timeout: d * time.Millisecond, UserData: uint64(d)}
		h.mustSubmit(&ops[i])
	}
	seq := make(map[time.Duration]uint64)
	for i := range ops {
		r := h.waitRec(&ops[i])
		wantErr(t, "timeout", r.c.Err, backend.ErrTimeout)
		seq[durs[i]] = r.seq
	}
	for _, pair := range [][2]time.Duration{{50, 100}, {100, 150}, {150, 200}, {200, 250}} {
		if seq[pair[0]] > seq[pair[1]] {
			t.Errorf("the %d ms timeout completed after the %d ms one", pair[0], pair[1])
		}
	}
}

// testTimeoutCancel: a cancelled timeout completes with ErrCanceled, at once.
func testTimeoutCancel(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	tm := &backend.Op{Kind: backend.KindTimeout, Timeout: time.Hour, UserData: 1}
	h.mustSubmit(tm)
	h.settle(10 * time.Millisecond)
	start := time.Now()
	cancel := &backend.Op{Kind: backend.KindCancel, Target: tm, UserData: 2}
	h.mustSubmit(cancel)
	if c := h.wait(tm); c.Err != backend.ErrCanceled {
		t.Errorf("cancelled timeout: %v, want the bare ErrCanceled", c.Err)
	}
	if c := h.wait(cancel); c.Err != nil {
		t.Errorf("cancel: %v", c.Err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("cancel took %v", el)
	}
}

// testLinkedTimeoutFires: a recv with no data and a linked timeout completes
// once, with ErrTimeout, after about the timeout; nothing stray follows.
func testLinkedTimeoutFires(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	fd, conn := h.netPeer()
	const d = 80 * time.Millisecond
	buf := make([]byte, 8)
	recv := &backend.Op{Kind: backend.KindRecv, FD: fd, Buf: buf, Timeout: d}
	start := time.Now()
	c := h.run(recv)
	checkDuration(t, "recv with a linked timeout", time.Since(start), d)
	if c.Err != backend.ErrTimeout {
		t.Fatalf("recv with a linked timeout: N %d, Err %v; want the bare ErrTimeout", c.N, c.Err)
	}
	h.settle(100 * time.Millisecond)
	// The data sent later goes to the next recv: the timed-out one took none.
	netWrite(h, conn, []byte("late"))
	c = h.runOK(&backend.Op{Kind: backend.KindRecv, FD: fd, Buf: buf, Timeout: 5 * time.Second})
	if string(buf[:c.N]) != "late" {
		t.Fatalf("recv after a timed-out one: %q", buf[:c.N])
	}
	h.settle(50 * time.Millisecond)
}

// testLinkedTimeoutNotFired: a recv whose data arrives before its linked
// timeout completes with the data, once; the timer leaves no completion.
func testLinkedTimeoutNotFired(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	fd, conn := h.netPeer()
	const d = 300 * time.Millisecond
	buf := make([]byte, 8)
	recv := &backend.Op{Kind: backend.KindRecv, FD: fd, Buf: buf, Timeout: d}
	h.mustSubmit(recv)
	h.settle(10 * time.Millisecond)
	start := time.Now()
	netWrite(h, conn, []byte("intime"))
	c := h.wait(recv)
	if c.Err != nil || string(buf[:c.N]) != "intime" {
		t.Fatalf("recv: N %d, Err %v", c.N, c.Err)
	}
	// Past the timer's expiry: nothing may arrive.
	h.settle(d + 200*time.Millisecond - time.Since(start))
	// Already-there data with a linked timeout: the same.
	netWrite(h, conn, []byte("now"))
	time.Sleep(10 * time.Millisecond)
	c = h.runOK(&backend.Op{Kind: backend.KindRecv, FD: fd, Buf: buf, Timeout: 50 * time.Millisecond})
	if string(buf[:c.N]) != "now" {
		t.Fatalf("recv: %q", buf[:c.N])
	}
	h.settle(150 * time.Millisecond)
}

// testLinkedTimeoutAccept: an accept with nobody connecting times out; a
// send with a linked timeout that can proceed completes normally.
func testLinkedTimeoutAccept(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	ln, _ := h.listen(loopback4)
	c := h.run(&backend.Op{Kind: backend.KindAccept, FD: ln, Timeout: 50 * time.Millisecond})
	wantErr(t, "accept with a linked timeout", c.Err, backend.ErrTimeout)
	client, server := h.pair()
	c = h.runOK(&backend.Op{Kind: backend.KindSend, FD: client, Buf: []byte("t"), Timeout: time.Second})
	if c.N != 1 {
		t.Fatalf("send N %d", c.N)
	}
	h.expectRecv(server, []byte("t"))
	h.settle(50 * time.Millisecond)
}

// testLinkedTimeoutCancel: a recv with a linked timeout that is cancelled
// first completes with ErrCanceled, once.
func testLinkedTimeoutCancel(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	fd, _ := h.netPeer()
	recv := &backend.Op{Kind: backend.KindRecv, FD: fd, Buf: make([]byte, 4), Timeout: 200 * time.Millisecond}
	h.mustSubmit(recv)
	h.settle(10 * time.Millisecond)
	cancel := &backend.Op{Kind: backend.KindCancel, Target: recv}
	h.mustSubmit(cancel)
	c := h.wait(recv)
	wantErr(t, "cancelled recv with a linked timeout", c.Err, backend.ErrCanceled)
	if c := h.wait(cancel); c.Err != nil {
		t.Errorf("cancel: %v", c.Err)
	}
	h.settle(300 * time.Millisecond)
}

// testTimeoutMany: many timeouts of assorted durations all fire once, none
// early; every third is cancelled instead.
func testTimeoutMany(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	n := scale(1000, 100)
	ops := make([]backend.Op, n)
	start := time.Now()
	for i := range ops {
		d := time.Duration(1+(i*7919)%200) * time.Millisecond
		ops[i] = backend.Op{Kind: backend.KindTimeout, Timeout: d, UserData: uint64(i)}
		h.mustSubmit(&ops[i])
	}
	cancels := make([]backend.Op, 0, n/3+1)
	for i := 0; i < n; i += 3 {
		cancels = append(cancels, backend.Op{Kind: backend.KindCancel, Target: &ops[i]})
		h.mustSubmit(&cancels[len(cancels)-1])
	}
	for i := range ops {
		c := h.wait(&ops[i])
		el := time.Since(start)
		switch {
		case c.Err == backend.ErrCanceled && i%3 == 0:
		case c.Err == backend.ErrTimeout:
			if el < ops[i].Timeout-slack {
				t.Errorf("timeout %d of %v fired after %v", i, ops[i].Timeout, el)
			}
		default:
			t.Errorf("timeout %d: %v", i, c.Err)
		}
	}
	for i := range cancels {
		if c := h.wait(&cancels[i]); c.Err != nil && !isNotFound(c.Err) {
			t.Errorf("cancel: %v", c.Err)
		}
	}
}
