//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package poll_test

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	poll "github.com/blitz-go/blitz/backend-poll"
	"golang.org/x/sys/unix"
)

// open makes a backend closed at the end of the test.
func open(t *testing.T) backend.Backend {
	t.Helper()
	b, err := poll.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// socketPair makes a connected pair of non-blocking stream sockets, closed
// through b at the end of the test.
func socketPair(t *testing.T, b backend.Backend) (x, y backend.FD) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if err := unix.SetNonblock(fd, true); err != nil {
			t.Fatal(err)
		}
	}
	x, y = backend.FD(fds[0]), backend.FD(fds[1])
	t.Cleanup(func() {
		_ = b.CloseFD(x)
		_ = b.CloseFD(y)
	})
	return x, y
}

func submit(t *testing.T, b backend.Backend, op *backend.Op) {
	t.Helper()
	if err := b.Submit(op); err != nil {
		t.Fatalf("Submit %v: %v", op.Kind, err)
	}
}

func write(t *testing.T, fd backend.FD, s string) {
	t.Helper()
	if _, err := unix.Write(int(fd), []byte(s)); err != nil {
		t.Fatal(err)
	}
}

// waitFor waits in b.Wait, on this goroutine, for op's completion.
func waitFor(t *testing.T, b backend.Backend, op *backend.Op) backend.Completion {
	t.Helper()
	out := make([]backend.Completion, 8)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		n, err := b.Wait(out, 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range out[:n] {
			if c.Op == op {
				return c
			}
			t.Fatalf("stray completion %+v", c)
		}
	}
	t.Fatalf("%v did not complete", op.Kind)
	return backend.Completion{}
}

// expectIdle waits in short Waits for d, failing on a completion, and
// returns how many times the backend polled meanwhile.
func expectIdle(t *testing.T, b backend.Backend, d time.Duration) uint64 {
	t.Helper()
	ec := b.(backend.EnterCounter)
	before := ec.EnterCalls()
	out := make([]backend.Completion, 8)
	for start := time.Now(); time.Since(start) < d; {
		n, err := b.Wait(out, 20*time.Millisecond)
		if err != nil || n != 0 {
			t.Fatalf("Wait: %d completions (%+v), %v; want none", n, out[:n], err)
		}
	}
	return ec.EnterCalls() - before
}

// Data that arrives while no recv waits stays in the socket: Wait does not
// spin on the readable socket, and the next recv takes the data at once.
func TestUnreadSocketDoesNotSpin(t *testing.T) {
	b := open(t)
	x, y := socketPair(t, b)
	buf := make([]byte, 1)
	recv := &backend.Op{Kind: backend.KindRecv, FD: x, Buf: buf}
	submit(t, b, recv) // waits: nothing to read; x is registered
	write(t, y, "ab")
	if c := waitFor(t, b, recv); c.Err != nil || c.N != 1 || buf[0] != 'a' {
		t.Fatalf("recv: %+v %q", c, buf)
	}
	// "b" waits unread; so does what comes next.
	const idle = 200 * time.Millisecond
	if polls := expectIdle(t, b, idle/2); polls > 20 {
		t.Fatalf("%d polls in %v with data unread: Wait spins", polls, idle/2)
	}
	write(t, y, "cd")
	if polls := expectIdle(t, b, idle/2); polls > 20 {
		t.Fatalf("%d polls in %v with data unread: Wait spins", polls, idle/2)
	}
	big := make([]byte, 8)
	recv = &backend.Op{Kind: backend.KindRecv, FD: x, Buf: big}
	submit(t, b, recv)
	if c := waitFor(t, b, recv); c.Err != nil || string(big[:c.N]) != "bcd" {
		t.Fatalf("recv: %+v %q", c, big[:c.N])
	}
}

// pump runs b.Wait on a goroutine of its own, blocking, as a runtime's
// waiting worker does, and hands the completions out on ch.
type pump struct {
	ch   chan backend.Completion
	stop atomic.Bool
}

func startPump(t *testing.T, b backend.Backend) *pump {
	p := &pump{ch: make(chan backend.Completion, 1024)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		out := make([]backend.Completion, 16)
		for !p.stop.Load() {
			n, err := b.Wait(out, -1)
			if err != nil {
				return
			}
			for _, c := range out[:n] {
				p.ch <- c
			}
		}
	}()
	t.Cleanup(func() {
		p.stop.Store(true)
		_ = b.Wake()
		<-done
	})
	return p
}

// next returns the next completion that match accepts, failing after 5s.
func (p *pump) next(t *testing.T, what string, match func(backend.Completion) bool) backend.Completion {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case c := <-p.ch:
			if match(c) {
				return c
			}
			t.Fatalf("stray completion %+v while waiting for %s", c, what)
		case <-timeout:
			t.Fatalf("%s did not complete: a wake-up was lost", what)
		}
	}
}

// Ops submitted while another goroutine is blocked in Wait reach it: a
// recv that has to wait completes when data comes, again and again, and
// so does a send that finds the socket full.
func TestOpsReachBlockedWait(t *testing.T) {
	b := open(t)
	x, y := socketPair(t, b)
	p := startPump(t, b)
	buf := make([]byte, 16)
	rounds := 200
	if testing.Short() {
		rounds = 50
	}
	for i := range rounds {
		recv := &backend.Op{Kind: backend.KindRecv, FD: x, Buf: buf, UserData: uint64(i)}
		submit(t, b, recv)
		if i%2 == 0 {
			time.Sleep(time.Millisecond) // now and then, certainly blocked by the write
		}
		write(t, y, "ping")
		c := p.next(t, "recv", func(c backend.Completion) bool { return c.Op == recv })
		if c.Err != nil || string(buf[:c.N]) != "ping" {
			t.Fatalf("round %d: recv %+v %q", i, c, buf[:c.N])
		}
	}

	// Fill x's send buffer until a send has to wait, then read y empty.
	chunk := bytes.Repeat([]byte{7}, 64<<10)
	var waiting *backend.Op
	for i := 0; i < 1000 && waiting == nil; i++ {
		send := &backend.Op{Kind: backend.KindSend, FD: x, Buf: chunk}
		submit(t, b, send)
		select {
		case c := <-p.ch:
			if c.Op != send || c.Err != nil {
				t.Fatalf("send: %+v", c)
			}
		case <-time.After(50 * time.Millisecond):
			waiting = send
		}
	}
	if waiting == nil {
		t.Fatal("the socket buffer never filled")
	}
	rbuf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(int(y), rbuf)
		if n > 0 {
			continue
		}
		if err != unix.EAGAIN {
			t.Fatalf("read: %d %v", n, err)
		}
		select {
		case c := <-p.ch:
			if c.Op != waiting || c.Err != nil || c.N <= 0 {
				t.Fatalf("waiting send: %+v", c)
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// An armed receive made while another goroutine is blocked in Wait
// completes when data comes, round after round.
func TestArmedRecvReachesBlockedWait(t *testing.T) {
	b := open(t)
	x, y := socketPair(t, b)
	if err := b.RegisterBufferGroup(1, 4, 64); err != nil {
		t.Fatal(err)
	}
	p := startPump(t, b)
	arm := b.(backend.RecvArmer)
	for i := range 20 {
		key := uint64(100 + i)
		if err := arm.ArmRecv(x, 1, key); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
		write(t, y, "hello")
		c := p.next(t, "armed receive", func(c backend.Completion) bool { return c.Op == nil && c.UserData == key })
		if c.Err != nil || c.Flags&backend.HasBuffer == 0 || string(b.Buffer(1, c.BufferID)[:c.N]) != "hello" {
			t.Fatalf("round %d: %+v", i, c)
		}
		if err := b.ReleaseBuffer(1, c.BufferID); err != nil {
			t.Fatal(err)
		}
	}
}
