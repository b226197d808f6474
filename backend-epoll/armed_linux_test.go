//go:build linux

package epoll_test

import (
	"bytes"
	"math/rand/v2"
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

// TestArmedRecvRandomStreams: a peer writes a random stream in chunks of
// random sizes (smaller and larger than the 64-byte buffers), pausing at
// random, then closes; armed receives, made at random moments, read the
// whole stream in order and then the end of stream, on every seed.
func TestArmedRecvRandomStreams(t *testing.T) {
	seeds := 200
	if testing.Short() {
		seeds = 40
	}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		b := open(t)
		if err := b.(backend.Buffers).RegisterBufferGroup(1, 8, 64); err != nil {
			t.Fatal(err)
		}
		c := newCollector(t, b)
		cl, sv := tcpPair(t, b, c)
		want := make([]byte, 1+rng.IntN(4000))
		for i := range want {
			want[i] = byte(rng.Uint32())
		}
		pauses := make([]time.Duration, 0, 64)
		sizes := make([]int, 0, 64)
		for n := 0; n < len(want); {
			k := min(1+rng.IntN(200), len(want)-n)
			sizes = append(sizes, k)
			pauses = append(pauses, time.Duration(rng.IntN(3))*100*time.Microsecond)
			n += k
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			off := 0
			for i, k := range sizes {
				time.Sleep(pauses[i])
				for p := want[off : off+k]; len(p) > 0; {
					n, err := unix.Write(int(cl), p)
					if err != nil {
						if err == unix.EAGAIN {
							time.Sleep(50 * time.Microsecond)
							continue
						}
						return // the reader sees a short stream
					}
					p = p[n:]
				}
				off += k
			}
			_ = unix.Shutdown(int(cl), unix.SHUT_WR)
		}()
		a := &armedConn{tb: t, b: b, fd: sv, key: 3, out: make([]backend.Completion, 16)}
		var got []byte
		for {
			if rng.IntN(4) == 0 {
				time.Sleep(time.Duration(rng.IntN(200)) * time.Microsecond) // arm late
			}
			p := a.recv()
			if p == nil {
				break
			}
			got = append(got, p...)
		}
		<-done
		if !bytes.Equal(got, want) {
			t.Fatalf("seed %d: read %d bytes, want %d (equal prefix %d)", seed, len(got), len(want), commonPrefix(got, want))
		}
		_ = b.CloseFD(cl)
		_ = b.CloseFD(sv)
	}
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
