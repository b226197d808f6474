//go:build linux

package epoll_test

import (
	"bytes"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/blitz-go/blitz/backend"
)

// armedConn drives the armed receives of one socket: arm, then collect the
// one completion keyed by key.
type armedConn struct {
	tb  testing.TB
	b   backend.Backend
	fd  backend.FD
	key uint64
	out []backend.Completion
}

// recv arms a receive and returns what it read (nil at end of stream),
// failing the test after 5 s without its completion.
func (a *armedConn) recv() []byte {
	a.tb.Helper()
	if err := a.b.(backend.RecvArmer).ArmRecv(a.fd, 1, a.key); err != nil {
		a.tb.Fatalf("ArmRecv: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		n, err := a.b.Wait(a.out, 50*time.Millisecond)
		if err != nil {
			a.tb.Fatalf("Wait: %v", err)
		}
		for _, c := range a.out[:n] {
			if c.Op != nil || c.UserData != a.key {
				continue
			}
			if c.Err != nil {
				a.tb.Fatalf("armed recv: %v", c.Err)
			}
			if c.N == 0 {
				return nil
			}
			got := bytes.Clone(a.b.(backend.Buffers).Buffer(1, c.BufferID)[:c.N])
			if err := a.b.(backend.Buffers).ReleaseBuffer(1, c.BufferID); err != nil {
				a.tb.Fatal(err)
			}
			return got
		}
	}
	a.tb.Fatal("the armed receive never completed: data or the end of stream was lost")
	return nil
}

// TestArmedRecvSeesEveryArrivalAfterADrainingRead: once a read has emptied
// the socket, an armed receive waits for the poller rather than reading
// first. Whatever comes after that read, whenever it comes, still ends the
// receive: data between the completion and the next arm, data and the
// peer's close in one segment, a close alone, a reset.
func TestArmedRecvSeesEveryArrivalAfterADrainingRead(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	for i := range rounds {
		b := open(t)
		if err := b.(backend.Buffers).RegisterBufferGroup(1, 8, 64); err != nil {
			t.Fatal(err)
		}
		c := newCollector(t, b)
		cl, sv := tcpPair(t, b, c)
		a := &armedConn{tb: t, b: b, fd: sv, key: 9, out: make([]backend.Completion, 16)}
		// write may run on a goroutine of the test's: a failed write shows
		// as the receive that never completes.
		write := func(s string) { _, _ = unix.Write(int(cl), []byte(s)) }
		write("a")
		if got := a.recv(); string(got) != "a" {
			t.Fatalf("round %d: first read %q", i, got)
		}
		// Data that comes between the completion and the next arm.
		write("b")
		if got := a.recv(); string(got) != "b" {
			t.Fatalf("round %d: read after a late arm %q", i, got)
		}
		// Data that comes while the receive waits, at once or a little later.
		go func(late bool) {
			if late {
				time.Sleep(time.Millisecond)
			}
			write("c")
		}(i%2 == 0)
		if got := a.recv(); string(got) != "c" {
			t.Fatalf("round %d: read while armed %q", i, got)
		}
		switch i % 3 {
		case 0: // the last data and the close together, before the arm
			write("d")
			_ = unix.Shutdown(int(cl), unix.SHUT_WR)
			time.Sleep(time.Millisecond)
			if got := a.recv(); string(got) != "d" {
				t.Fatalf("round %d: last data %q", i, got)
			}
			if got := a.recv(); got != nil {
				t.Fatalf("round %d: read %q, want the end of stream", i, got)
			}
		case 1: // the close alone, while the receive waits
			go func() {
				time.Sleep(time.Millisecond)
				_ = unix.Shutdown(int(cl), unix.SHUT_WR)
			}()
			if got := a.recv(); got != nil {
				t.Fatalf("round %d: read %q, want the end of stream", i, got)
			}
		case 2: // the last data and the close racing the completion
			go func() {
				write("d")
				_ = unix.Shutdown(int(cl), unix.SHUT_WR)
			}()
			var all []byte
			for {
				got := a.recv()
				if got == nil {
					break
				}
				all = append(all, got...)
			}
			if string(all) != "d" {
				t.Fatalf("round %d: read %q before the end of stream, want \"d\"", i, all)
			}
		}
		_ = b.CloseFD(cl)
		_ = b.CloseFD(sv)
	}
}
