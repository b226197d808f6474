//go:build linux

package epoll_test

import (
	"bytes"
	"errors"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// A send that finds the socket buffer full waits (EAGAIN path) and
// completes once the peer reads.
func TestSendWaitsForPeer(t *testing.T) {
	b := open(t)
	c := newCollector(t, b)
	cl, sv := tcpPair(t, b, c)
	for _, fd := range []backend.FD{cl, sv} {
		_ = b.SetOption(fd, backend.OptSendBuffer, 4096)
		_ = b.SetOption(fd, backend.OptRecvBuffer, 4096)
	}
	chunk := bytes.Repeat([]byte{7}, 64<<10)
	sent := 0
	var waiting *backend.Op
	for i := 0; i < 1000 && waiting == nil; i++ {
		op := &backend.Op{Kind: backend.KindSend, FD: cl, Buf: chunk, UserData: uint64(i)}
		submit(t, b, op)
		c.pump(0)
		if !c.has(op) {
			waiting = op
			break
		}
		r := c.wait(op)
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		sent += r.N
	}
	if waiting == nil {
		t.Fatal("the socket buffer never filled")
	}
	c.pump(20 * time.Millisecond)
	if c.has(waiting) {
		t.Fatal("a send on a full socket completed before the peer read")
	}
	buf := make([]byte, 64<<10)
	received := 0
	for !c.has(waiting) {
		rv := &backend.Op{Kind: backend.KindRecv, FD: sv, Buf: buf}
		submit(t, b, rv)
		r := c.wait(rv)
		if r.Err != nil || r.N == 0 {
			t.Fatalf("recv: %d %v", r.N, r.Err)
		}
		received += r.N
	}
	if r := c.wait(waiting); r.Err != nil || r.N <= 0 {
		t.Fatalf("waiting send: %d %v", r.N, r.Err)
	}
	t.Logf("sent %d bytes before the buffer filled, read %d to free it", sent, received)
}

// Two recvs on one socket complete in submission order, and a send in
// flight on the same socket proceeds independently.
func TestRecvOrderAndDuplex(t *testing.T) {
	b := open(t)
	c := newCollector(t, b)
	cl, sv := tcpPair(t, b, c)
	b1, b2 := make([]byte, 3), make([]byte, 3)
	r1 := &backend.Op{Kind: backend.KindRecv, FD: sv, Buf: b1, UserData: 1}
	r2 := &backend.Op{Kind: backend.KindRecv, FD: sv, Buf: b2, UserData: 2}
	submit(t, b, r1)
	submit(t, b, r2)
	// A send on sv while its recvs wait.
	s := &backend.Op{Kind: backend.KindSend, FD: sv, Buf: []byte("pong"), UserData: 3}
	submit(t, b, s)
	if r := c.wait(s); r.Err != nil || r.N != 4 {
		t.Fatalf("send beside pending recvs: %d %v", r.N, r.Err)
	}
	if c.has(r1) || c.has(r2) {
		t.Fatal("recv completed without data")
	}
	submit(t, b, &backend.Op{Kind: backend.KindSend, FD: cl, Buf: []byte("abcdef")})
	x, y := c.wait(r1), c.wait(r2)
	if x.Err != nil || y.Err != nil || string(b1[:x.N]) != "abc" || string(b2[:y.N]) != "def" {
		t.Fatalf("recvs out of order: %q %v, %q %v", b1[:x.N], x.Err, b2[:y.N], y.Err)
	}
}

// A linked timeout racing the data: exactly one completion, and data is
// never lost to a timed-out recv.
func TestLinkedTimeoutRace(t *testing.T) {
	b := open(t)
	c := newCollector(t, b)
	cl, sv := tcpPair(t, b, c)
	buf := make([]byte, 1)
	rounds := 200
	if testing.Short() {
		rounds = 40
	}
	timedOut := 0
	for i := 0; i < rounds; i++ {
		rv := &backend.Op{Kind: backend.KindRecv, FD: sv, Buf: buf, Timeout: time.Millisecond, UserData: uint64(i)}
		submit(t, b, rv)
		time.Sleep(time.Duration(i%3) * 500 * time.Microsecond)
		submit(t, b, &backend.Op{Kind: backend.KindSend, FD: cl, Buf: []byte{byte(i)}})
		r := c.wait(rv)
		switch {
		case errors.Is(r.Err, backend.ErrTimeout):
			timedOut++
			again := &backend.Op{Kind: backend.KindRecv, FD: sv, Buf: buf}
			submit(t, b, again)
			r = c.wait(again)
			fallthrough
		case r.Err == nil:
			if r.N != 1 || buf[0] != byte(i) {
				t.Fatalf("round %d: got %d bytes %v", i, r.N, buf[:r.N])
			}
		default:
			t.Fatalf("round %d: %v", i, r.Err)
		}
		c.pump(0)
		if c.has(rv) {
			t.Fatalf("round %d: a second completion", i)
		}
	}
	t.Logf("%d of %d timed out", timedOut, rounds)
}

// Cancels from several goroutines while one goroutine Waits: every op
// completes exactly once, every cancel with nil or ErrNotFound.
func TestCancelStress(t *testing.T) {
	b := open(t)
	c := newCollector(t, b)
	cl, sv := tcpPair(t, b, c)
	_ = cl
	const workers, per = 4, 200
	type pair struct{ recv, cancel backend.Op }
	ops := make([]pair, workers*per)
	var finals, cancels, canceled atomic.Int64
	stop := make(chan struct{})
	var waiter sync.WaitGroup
	waiter.Add(1)
	go func() {
		defer waiter.Done()
		out := make([]backend.Completion, 32)
		seen := map[*backend.Op]int{}
		for {
			n, err := b.Wait(out, 10*time.Millisecond)
			if err != nil {
				t.Errorf("Wait: %v", err)
				return
			}
			for _, comp := range out[:n] {
				seen[comp.Op]++
				if seen[comp.Op] > 1 {
					t.Errorf("op %d completed twice", comp.UserData)
				}
				if comp.Op.Kind == backend.KindCancel {
					cancels.Add(1)
					if comp.Err != nil && !errors.Is(comp.Err, backend.ErrNotFound) {
						t.Errorf("cancel: %v", comp.Err)
					}
					continue
				}
				finals.Add(1)
				if errors.Is(comp.Err, backend.ErrCanceled) {
					canceled.Add(1)
				} else if comp.Err != nil {
					t.Errorf("recv: %v", comp.Err)
				}
			}
			select {
			case <-stop:
				if finals.Load() == workers*per && cancels.Load() == workers*per {
					return
				}
			default:
			}
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				p := &ops[w*per+i]
				p.recv = backend.Op{Kind: backend.KindRecv, FD: sv, Buf: make([]byte, 1), UserData: uint64(w*per + i)}
				p.cancel = backend.Op{Kind: backend.KindCancel, Target: &p.recv, UserData: 1 << 32}
				if err := b.Submit(&p.recv); err != nil {
					t.Errorf("submit: %v", err)
					return
				}
				if i%2 == 0 {
					runtime.Gosched()
				}
				if err := b.Submit(&p.cancel); err != nil {
					t.Errorf("submit cancel: %v", err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	waiter.Wait()
	if canceled.Load() != workers*per {
		t.Fatalf("%d of %d recvs cancelled (no data was sent)", canceled.Load(), workers*per)
	}
}

// Close with ops in flight: every op completes with ErrCanceled through
// Wait, then Wait says ErrClosed.
func TestCloseWithOpsInFlight(t *testing.T) {
	b := open(t)
	c := newCollector(t, b)
	cl, sv := tcpPair(t, b, c)
	ops := []*backend.Op{
		{Kind: backend.KindRecv, FD: sv, Buf: make([]byte, 8)},
		{Kind: backend.KindRecv, FD: cl, Buf: make([]byte, 8), Timeout: time.Hour},
		{Kind: backend.KindTimeout, Timeout: time.Hour},
		{Kind: backend.KindPoll, FD: sv, Events: backend.EventIn},
	}
	for i, op := range ops {
		op.UserData = uint64(i)
		submit(t, b, op)
	}
	c.pump(0)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); !errors.Is(err, backend.ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
	if err := b.Submit(&backend.Op{Kind: backend.KindNop}); !errors.Is(err, backend.ErrClosed) {
		t.Fatalf("Submit after Close: %v", err)
	}
	out := make([]backend.Completion, 16)
	got := 0
	for {
		n, err := b.Wait(out, time.Second)
		if errors.Is(err, backend.ErrClosed) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, comp := range out[:n] {
			if !errors.Is(comp.Err, backend.ErrCanceled) {
				t.Errorf("op %d: %v", comp.UserData, comp.Err)
			}
		}
		got += n
	}
	if got != len(ops) {
		t.Fatalf("%d completions for %d ops", got, len(ops))
	}
	for _, fd := range []backend.FD{cl, sv} {
		if _, err := b.Option(fd, backend.OptError); err != nil {
			t.Fatalf("Close closed a user descriptor: %v", err)
		}
	}
}

// A Submit from another goroutine while Wait blocks reaches the kernel and
// completes the Wait without Wake: an immediate completion, and an op that
// has to wait for readiness.
func TestSubmitWhileWaiting(t *testing.T) {
	b := open(t)
	c := newCollector(t, b)
	cl, sv := tcpPair(t, b, c)
	out := make([]backend.Completion, 4)

	nop := &backend.Op{Kind: backend.KindNop, UserData: 1}
	go func() {
		time.Sleep(20 * time.Millisecond)
		_ = b.Submit(nop)
	}()
	start := time.Now()
	n, err := b.Wait(out, 5*time.Second)
	if err != nil || n != 1 || out[0].Op != nop {
		t.Fatalf("Wait: %d %v", n, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("immediate completion took %v to reach Wait", d)
	}

	rv := &backend.Op{Kind: backend.KindRecv, FD: sv, Buf: make([]byte, 4), UserData: 2}
	snd := &backend.Op{Kind: backend.KindSend, FD: cl, Buf: []byte("data"), UserData: 3}
	go func() {
		time.Sleep(10 * time.Millisecond)
		_ = b.Submit(rv) // waits: registered with the kernel, no wake
		time.Sleep(20 * time.Millisecond)
		_ = b.Submit(snd)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for done, sent := false, false; !done || !sent; {
		if time.Now().After(deadline) {
			t.Fatal("recv submitted during Wait never completed")
		}
		n, err := b.Wait(out, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, comp := range out[:n] {
			if comp.Op == rv {
				if comp.Err != nil || comp.N != 4 {
					t.Fatalf("recv: %d %v", comp.N, comp.Err)
				}
				done = true
			}
			sent = sent || comp.Op == snd
		}
	}

	// A linked timeout sooner than the blocked Wait's deadline wakes it.
	to := &backend.Op{Kind: backend.KindTimeout, Timeout: 10 * time.Millisecond}
	go func() {
		time.Sleep(10 * time.Millisecond)
		_ = b.Submit(to)
	}()
	start = time.Now()
	n, err = b.Wait(out, -1)
	if err != nil || n != 1 || out[0].Op != to || !errors.Is(out[0].Err, backend.ErrTimeout) {
		t.Fatalf("timeout submitted during Wait: %d %v", n, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("timer took %v", d)
	}
}

// A SelectBuffer recv holds no buffer while it waits; an empty group with
// data waiting gives ErrNoBuffers.
func TestSelectBufferEmptyGroup(t *testing.T) {
	b := open(t)
	c := newCollector(t, b)
	cl, sv := tcpPair(t, b, c)
	if err := b.RegisterBufferGroup(1, 1, 16); err != nil {
		t.Fatal(err)
	}
	r1 := &backend.Op{Kind: backend.KindRecv, FD: sv, Flags: backend.SelectBuffer, BufferGroup: 1}
	submit(t, b, r1)
	submit(t, b, &backend.Op{Kind: backend.KindSend, FD: cl, Buf: []byte("hello")})
	x := c.wait(r1)
	if x.Err != nil || x.Flags&backend.HasBuffer == 0 || string(b.Buffer(1, x.BufferID)[:x.N]) != "hello" {
		t.Fatalf("select recv: %+v", x)
	}
	submit(t, b, &backend.Op{Kind: backend.KindSend, FD: cl, Buf: []byte("more")})
	time.Sleep(10 * time.Millisecond)
	r2 := &backend.Op{Kind: backend.KindRecv, FD: sv, Flags: backend.SelectBuffer, BufferGroup: 1}
	submit(t, b, r2)
	if y := c.wait(r2); !errors.Is(y.Err, backend.ErrNoBuffers) || y.Flags&backend.HasBuffer != 0 {
		t.Fatalf("empty group: %+v", y)
	}
	if err := b.ReleaseBuffer(1, x.BufferID); err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseBuffer(1, x.BufferID); !errors.Is(err, backend.ErrInvalid) {
		t.Fatalf("double release: %v", err)
	}
	submit(t, b, r2)
	if y := c.wait(r2); y.Err != nil || string(b.Buffer(1, y.BufferID)[:y.N]) != "more" {
		t.Fatalf("after release: %+v", y)
	}
}

// pendingRecvs parks n recvs on n UDP sockets, returning the sockets, the
// ops and the heap bytes the reactor's bookkeeping took.
func pendingRecvs(tb testing.TB, b backend.Backend, n int) ([]backend.FD, []backend.Op, uint64) {
	fds := make([]backend.FD, n)
	ops := make([]backend.Op, n)
	bufs := make([]byte, n)
	for i := range fds {
		fd, err := b.Socket(backend.FamilyInet4, backend.Datagram)
		if err != nil {
			tb.Fatalf("socket %d: %v", i, err)
		}
		if err := b.Bind(fd, backend.AddrPort(netip.MustParseAddrPort("127.0.0.1:0"))); err != nil {
			tb.Fatal(err)
		}
		fds[i] = fd
		ops[i] = backend.Op{Kind: backend.KindRecv, FD: fd, Buf: bufs[i : i+1], UserData: uint64(i)}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range ops {
		if err := b.Submit(&ops[i]); err != nil {
			tb.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	return fds, ops, after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
}

// 10^4 recvs pending at once, then all served.
func TestManyPendingRecvs(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	b := open(t)
	fds, ops, heap := pendingRecvs(t, b, n)
	t.Logf("%d pending recvs: %d heap bytes, %.0f per recv", n, heap, float64(heap)/float64(n))
	sender, err := b.Socket(backend.FamilyInet4, backend.Datagram)
	if err != nil {
		t.Fatal(err)
	}
	defer b.CloseFD(sender)
	c := newCollector(t, b)
	for i, fd := range fds {
		addr, _ := b.LocalAddr(fd)
		s := &backend.Op{Kind: backend.KindSendTo, FD: sender, Buf: []byte{byte(i)}, Addr: addr}
		submit(t, b, s)
		if r := c.wait(s); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	for i := range ops {
		if r := c.wait(&ops[i]); r.Err != nil || r.N != 1 || ops[i].Buf[0] != byte(i) {
			t.Fatalf("recv %d: %d %v", i, r.N, r.Err)
		}
	}
	for _, fd := range fds {
		if err := b.CloseFD(fd); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkPendingRecv reports the heap bytes one pending recv costs.
func BenchmarkPendingRecv(b *testing.B) {
	const n = 10000
	for range b.N {
		be := open(b)
		fds, _, heap := pendingRecvs(b, be, n)
		b.ReportMetric(float64(heap)/n, "heapB/pending")
		be.Close()
		for _, fd := range fds {
			be.CloseFD(fd)
		}
	}
}

// A steady-state round trip allocates nothing: a nop, and a send plus a
// recv that waits for it.
func TestZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	b := open(t)
	c := newCollector(t, b)
	cl, sv := tcpPair(t, b, c)
	out := make([]backend.Completion, 4)
	nop := &backend.Op{Kind: backend.KindNop}
	waitOne := func() {
		for got := 0; got == 0; {
			n, err := b.Wait(out, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			got = n
		}
	}
	if a := testing.AllocsPerRun(1000, func() {
		_ = b.Submit(nop)
		waitOne()
	}); a != 0 {
		t.Fatalf("nop round trip: %v allocs", a)
	}
	buf, rbuf := make([]byte, 64), make([]byte, 64)
	send := &backend.Op{Kind: backend.KindSend, FD: cl, Buf: buf}
	recv := &backend.Op{Kind: backend.KindRecv, FD: sv, Buf: rbuf, Timeout: time.Second}
	if a := testing.AllocsPerRun(1000, func() {
		_ = b.Submit(recv) // waits: no data yet
		_ = b.Submit(send)
		got := 0
		for got < 2 {
			n, err := b.Wait(out, time.Second)
			if err != nil || n == 0 {
				t.Fatalf("Wait: %d %v", n, err)
			}
			got += n
		}
	}); a != 0 {
		t.Fatalf("send/recv round trip: %v allocs", a)
	}
}
