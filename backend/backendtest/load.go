package backendtest

import (
	"bytes"
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

var loadTests = []test{
	{name: "ManyConnections", fn: testManyConnections},
	{name: "ConcurrentStress", fn: testStress},
	{name: "NoAllocs", fn: testNoAllocs, serial: true},
}

// testManyConnections: 1000 connections (100 with -short), accepted by that
// many accept ops in flight at once, each then with a pending recv; data on
// all of them completes every recv exactly once with its own data.
func testManyConnections(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	n := scale(1000, 100)
	ln, la := h.listen(loopback4)
	accepts := make([]backend.Op, n)
	for i := range accepts {
		accepts[i] = backend.Op{Kind: backend.KindAccept, FD: ln, UserData: uint64(i)}
		h.mustSubmit(&accepts[i])
	}
	conns := make([]net.Conn, n)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	byPort := make(map[uint16]int, n)
	for i := range conns {
		c, err := net.DialTimeout("tcp", la.IP.String(), opLimit)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns[i] = c
		byPort[uint16(c.LocalAddr().(*net.TCPAddr).Port)] = i
	}
	fds := make([]backend.FD, n) // by conn index
	for i := range accepts {
		c := h.wait(&accepts[i])
		if c.Err != nil {
			t.Fatalf("accept %d: %v", i, c.Err)
		}
		j, ok := byPort[c.Addr.IP.Port()]
		if !ok {
			t.Fatalf("accept %d: unknown peer %v", i, c.Addr)
		}
		fds[j] = c.FD
	}
	recvs := make([]backend.Op, n)
	bufs := make([]byte, 8*n)
	for i := range recvs {
		recvs[i] = backend.Op{Kind: backend.KindRecv, FD: fds[i], Buf: bufs[8*i : 8*i+8], UserData: uint64(i)}
		h.mustSubmit(&recvs[i])
	}
	h.settle(20 * time.Millisecond)
	for i := range recvs {
		if !h.pending(&recvs[i]) {
			t.Fatalf("recv %d completed with no data sent", i)
		}
	}
	for i, c := range conns {
		var msg [8]byte
		binary.LittleEndian.PutUint64(msg[:], uint64(i)*0x9e3779b97f4a7c15)
		netWrite(h, c, msg[:])
	}
	for i := range recvs {
		c := h.wait(&recvs[i])
		if c.Err != nil || c.N == 0 {
			t.Fatalf("recv %d: N %d, Err %v", i, c.N, c.Err)
		}
		got := append([]byte(nil), bufs[8*i:8*i+c.N]...)
		if c.N < 8 {
			got = append(got, h.recvFull(fds[i], 8-c.N)...)
		}
		if binary.LittleEndian.Uint64(got) != uint64(i)*0x9e3779b97f4a7c15 {
			t.Fatalf("recv %d got another connection's data", i)
		}
	}
}

// stressWorker is one submitting goroutine of testStress: a connected pair
// and four reusable ops.
type stressWorker struct {
	id                      int
	a, b                    backend.FD
	send, recv, nop, cancel backend.Op
	done                    chan backend.Completion
	stream                  []byte
	sent, received          int
	canceled                int
}

// testStress: several goroutines submit sends, recvs, nops and cancels while
// one goroutine Waits with timeout -1 (so submissions must reach the kernel
// without a Wake); every op completes exactly once (the harness accounts),
// and every byte sent arrives once, in order.
func testStress(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	workers := make([]*stressWorker, 4)
	iters := scale(2000, 200)
	for i := range workers {
		a, b := h.pair()
		workers[i] = &stressWorker{id: i, a: a, b: b, done: make(chan backend.Completion, 8),
			stream: pattern(iters*48+64, byte(i))}
	}
	h.mu.Lock()
	h.sink = func(r record) { workers[r.c.UserData>>8].done <- r.c }
	h.mu.Unlock()

	var stop atomic.Bool
	waiterDone := make(chan struct{})
	go func() {
		defer close(waiterDone)
		out := make([]backend.Completion, 32)
		for !stop.Load() {
			n, err := h.b.Wait(out, -1)
			if err != nil {
				t.Errorf("Wait: %v", err)
				return
			}
			h.mu.Lock()
			for i := range out[:n] {
				h.recordLocked(out[i])
			}
			h.mu.Unlock()
		}
	}()
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(t, h, iters)
		}()
	}
	wg.Wait()
	stop.Store(true)
	if err := h.b.Wake(); err != nil {
		t.Errorf("Wake: %v", err)
	}
	select {
	case <-waiterDone:
	case <-time.After(opLimit):
		t.Fatalf("the waiting goroutine did not return after Wake")
	}
	h.mu.Lock()
	h.sink = nil
	h.mu.Unlock()
	for _, w := range workers {
		if w.received != w.sent {
			t.Errorf("worker %d: sent %d bytes, received %d", w.id, w.sent, w.received)
		}
		t.Logf("worker %d: %d bytes, %d recvs cancelled", w.id, w.sent, w.canceled)
	}
}

// run is one worker's loop: each round submits a send, a recv, a nop and
// sometimes a cancel of the recv, then collects their completions.
func (w *stressWorker) run(t *testing.T, h *harness, iters int) {
	rbuf := make([]byte, 64)
	ud := func(slot int) uint64 { return uint64(w.id)<<8 | uint64(slot) }
	w.send = backend.Op{Kind: backend.KindSend, FD: w.a, UserData: ud(0)}
	w.recv = backend.Op{Kind: backend.KindRecv, FD: w.b, Buf: rbuf, UserData: ud(1)}
	w.nop = backend.Op{Kind: backend.KindNop, UserData: ud(2)}
	w.cancel = backend.Op{Kind: backend.KindCancel, Target: &w.recv, UserData: ud(3)}
	for i := range iters {
		w.send.Buf = w.stream[w.sent : w.sent+1+(i*13)%47]
		ops := []*backend.Op{&w.send, &w.recv, &w.nop}
		if i%4 == 1 {
			ops = append(ops, &w.cancel)
		}
		for _, op := range ops {
			if err := h.submit(op); err != nil {
				t.Errorf("worker %d: Submit(%s): %v", w.id, op.Kind, err)
				return
			}
		}
		if !w.collect(t, len(ops), rbuf) {
			return
		}
	}
	for w.received < w.sent { // what cancelled recvs left in the socket
		if err := h.submit(&w.recv); err != nil {
			t.Errorf("worker %d: Submit: %v", w.id, err)
			return
		}
		if !w.collect(t, 1, rbuf) {
			return
		}
	}
}

// collect receives n final completions of the worker's ops and checks them.
func (w *stressWorker) collect(t *testing.T, n int, rbuf []byte) bool {
	for range n {
		var c backend.Completion
		select {
		case c = <-w.done:
		case <-time.After(opLimit):
			t.Errorf("worker %d: a completion did not arrive within %v", w.id, opLimit)
			return false
		}
		switch c.Op {
		case &w.send:
			if c.Err != nil || c.N <= 0 {
				t.Errorf("worker %d: send: N %d, Err %v", w.id, c.N, c.Err)
				return false
			}
			w.sent += c.N
		case &w.recv:
			if c.Err == backend.ErrCanceled {
				w.canceled++
				continue
			}
			if c.Err != nil || c.N <= 0 || !bytes.Equal(rbuf[:c.N], w.stream[w.received:w.received+c.N]) {
				t.Errorf("worker %d: recv at %d: N %d, Err %v, or wrong data", w.id, w.received, c.N, c.Err)
				return false
			}
			w.received += c.N
		case &w.nop:
			if c.Err != nil {
				t.Errorf("worker %d: nop: %v", w.id, c.Err)
			}
		case &w.cancel:
			if c.Err != nil && c.Err != backend.ErrNotFound && !isNotFound(c.Err) {
				t.Errorf("worker %d: cancel: %v", w.id, c.Err)
			}
		}
	}
	return true
}

// isNotFound reports whether err matches ErrNotFound.
func isNotFound(err error) bool { return sentinelOf(err) == backend.ErrNotFound }

// testNoAllocs: the steady-state round trips of a nop and of a send + recv
// allocate nothing.
func testNoAllocs(t *testing.T, nb NewFunc) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	h := newHarness(t, nb)
	out := make([]backend.Completion, 8)
	nop := &backend.Op{Kind: backend.KindNop}
	if a := testing.AllocsPerRun(200, func() { roundTrip(t, h.b, out, nop) }); a > 0 {
		t.Errorf("nop round trip: %v allocations", a)
	}
	client, server := h.pair()
	msg, rbuf := make([]byte, 64), make([]byte, 64)
	send := &backend.Op{Kind: backend.KindSend, FD: client, Buf: msg}
	recv := &backend.Op{Kind: backend.KindRecv, FD: server, Buf: rbuf}
	if a := testing.AllocsPerRun(200, func() { roundTrip(t, h.b, out, recv, send) }); a > 0 {
		t.Errorf("send + recv round trip: %v allocations", a)
	}
}

// roundTrip submits ops and waits until each has completed once, with raw
// Submit and Wait (no harness bookkeeping, which allocates). It does not
// handle short sends: tb callers use small messages.
func roundTrip(tb testing.TB, b backend.Backend, out []backend.Completion, ops ...*backend.Op) {
	for _, op := range ops {
		if err := b.Submit(op); err != nil {
			tb.Fatalf("Submit(%s): %v", op.Kind, err)
		}
	}
	left := len(ops)
	deadline := time.Now().Add(opLimit)
	for left > 0 {
		n, err := b.Wait(out, pumpSlice)
		if err != nil {
			tb.Fatalf("Wait: %v", err)
		}
		for i := range out[:n] {
			if out[i].Err != nil {
				tb.Fatalf("%s: %v", out[i].Op.Kind, out[i].Err)
			}
			left--
		}
		if left > 0 && time.Now().After(deadline) {
			tb.Fatalf("round trip did not complete")
		}
	}
}
