package backendtest

import (
	"fmt"
	"math"
	"net"
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
	{name: "TimeoutForever", fn: testTimeoutForever},
	{name: "LinkedTimeoutForever", fn: testLinkedTimeoutForever},
	{name: "WaitForeverUntilWake", fn: testWaitForeverWake},
}

// forevers are durations that mean never: a deadline computed as now plus
// one of them overflows int64 (MaxInt64 minus a millisecond does as soon as
// the backend's clock is a millisecond old).
var forevers = []time.Duration{math.MaxInt64, math.MaxInt64 - time.Millisecond}

// testTimeoutForever: a timeout op of a duration too long for any clock
// stays pending (it does not fire at once, as an overflowed deadline in
// the past would), and a cancel ends it.
func testTimeoutForever(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	ops := make([]backend.Op, len(forevers))
	for i, d := range forevers {
		ops[i] = backend.Op{Kind: backend.KindTimeout, Timeout: d, UserData: uint64(i)}
		h.mustSubmit(&ops[i])
	}
	h.settle(300 * time.Millisecond)
	for i := range ops {
		if r, done := h.take(&ops[i]); done {
			t.Errorf("timeout op of %v completed within 300 ms: Err %v", forevers[i], r.c.Err)
			continue
		}
		cancel := &backend.Op{Kind: backend.KindCancel, Target: &ops[i], UserData: 10 + uint64(i)}
		h.mustSubmit(cancel)
		if c := h.wait(&ops[i]); c.Err != backend.ErrCanceled {
			t.Errorf("cancelled timeout op of %v: %v, want ErrCanceled", forevers[i], c.Err)
		}
		if c := h.wait(cancel); c.Err != nil {
			t.Errorf("cancel: %v", c.Err)
		}
	}
}

// testLinkedTimeoutForever: ops with a linked timeout too long for any
// clock wait like ops without one: two recvs on a socket with no data (the
// second queued behind the first, re-armed when it completes) are still
// pending after a while and complete with the data when the peer sends it;
// a Multishot accept (re-armed after each connection where it is emulated)
// delivers every connection and stays armed.
func testLinkedTimeoutForever(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	type peer struct {
		conn        net.Conn
		first, next backend.Op
		buf1, buf2  []byte
	}
	peers := make([]peer, len(forevers))
	for i, d := range forevers {
		p := &peers[i]
		var fd backend.FD
		fd, p.conn = h.netPeer()
		p.buf1, p.buf2 = make([]byte, 16), make([]byte, 16)
		p.first = backend.Op{Kind: backend.KindRecv, FD: fd, Buf: p.buf1, Timeout: d, UserData: uint64(i)}
		p.next = backend.Op{Kind: backend.KindRecv, FD: fd, Buf: p.buf2, Timeout: d, UserData: 10 + uint64(i)}
		h.mustSubmit(&p.first)
		h.mustSubmit(&p.next)
	}
	ln, la := h.listen(loopback4)
	acc := &backend.Op{Kind: backend.KindAccept, Flags: backend.Multishot, FD: ln, Timeout: math.MaxInt64, UserData: 20}
	h.mustSubmit(acc)
	h.settle(300 * time.Millisecond)
	for i := range peers {
		p := &peers[i]
		for _, op := range []*backend.Op{&p.first, &p.next} {
			if r, done := h.take(op); done {
				t.Fatalf("recv with a linked timeout of %v completed within 300 ms with no data: N %d, Err %v", forevers[i], r.c.N, r.c.Err)
			}
		}
		netWrite(h, p.conn, []byte("at last"))
		if c := h.wait(&p.first); c.Err != nil || string(p.buf1[:c.N]) != "at last" {
			t.Errorf("recv with a linked timeout of %v: N %d, Err %v; want the data", forevers[i], c.N, c.Err)
		}
		h.settle(100 * time.Millisecond)
		if r, done := h.take(&p.next); done {
			t.Fatalf("queued recv with a linked timeout of %v completed with no data: N %d, Err %v", forevers[i], r.c.N, r.c.Err)
		}
		netWrite(h, p.conn, []byte("again"))
		if c := h.wait(&p.next); c.Err != nil || string(p.buf2[:c.N]) != "again" {
			t.Errorf("queued recv with a linked timeout of %v: N %d, Err %v; want the data", forevers[i], c.N, c.Err)
		}
	}
	if r, done := h.take(acc); done {
		t.Fatalf("multishot accept with a linked timeout of MaxInt64 completed with no connection: More %v, Err %v", r.c.More(), r.c.Err)
	}
	for i := range 2 {
		conn, err := net.DialTimeout("tcp", la.IP.String(), opLimit)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		defer conn.Close()
		if r := h.next(acc); r.c.Err != nil || !r.c.More() {
			t.Fatalf("connection %d to a multishot accept with a linked timeout of MaxInt64: More %v, Err %v", i, r.c.More(), r.c.Err)
		}
	}
	h.settle(100 * time.Millisecond)
	if r, done := h.take(acc); done {
		t.Fatalf("multishot accept with a linked timeout of MaxInt64 ended after two connections: More %v, Err %v", r.c.More(), r.c.Err)
	}
	cancel := &backend.Op{Kind: backend.KindCancel, Target: acc, UserData: 21}
	h.mustSubmit(cancel)
	if r := h.next(acc); r.c.More() || !errorsIs(r.c.Err, backend.ErrCanceled) {
		t.Errorf("cancelled multishot accept: More %v, Err %v; want its final ErrCanceled", r.c.More(), r.c.Err)
	}
	if c := h.wait(cancel); c.Err != nil {
		t.Errorf("cancel: %v", c.Err)
	}
}

// testWaitForeverWake: Wait with a timeout too long for any clock blocks
// like Wait(-1), until a Wake; and a timeout op submitted meanwhile still
// ends it when it fires (a Wait whose own deadline overflowed into the past
// would think the timer later than its deadline and sleep through it).
func testWaitForeverWake(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	for _, d := range forevers {
		started, done := waitAsync(h.b, d)
		<-started
		select {
		case r := <-done:
			t.Fatalf("Wait(%v) returned without a Wake after %v: %d, %v", d, r.el, r.n, r.err)
		case <-time.After(200 * time.Millisecond):
		}
		if err := h.b.Wake(); err != nil {
			t.Fatalf("Wake: %v", err)
		}
		if r, ok := recvWait(t, h.b, done, opLimit, fmt.Sprintf("Wait(%v) did not return after Wake", d)); ok && (r.n != 0 || r.err != nil) {
			t.Errorf("Wait(%v) after Wake = %d, %v; want 0, nil", d, r.n, r.err)
		}

		started, done = waitAsync(h.b, d)
		<-started
		time.Sleep(50 * time.Millisecond) // let it block
		tm := &backend.Op{Kind: backend.KindTimeout, Timeout: 50 * time.Millisecond, UserData: 30}
		h.mustSubmit(tm)
		r, ok := recvWait(t, h.b, done, 5*time.Second, fmt.Sprintf("a 50 ms timeout op submitted during Wait(%v) did not end it", d))
		h.mu.Lock()
		for _, c := range r.c {
			h.recordLocked(c)
		}
		h.mu.Unlock()
		if !ok {
			continue
		}
		if r.err != nil {
			t.Errorf("Wait(%v) with a timeout op: %v", d, r.err)
		}
		if c := h.wait(tm); c.Err != backend.ErrTimeout {
			t.Errorf("timeout op: %v, want ErrTimeout", c.Err)
		}
	}
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
