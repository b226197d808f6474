//go:build !race

package blitz_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// TestSocketOpsAllocateNothing pins the steady state of a connection that
// reads and writes in a loop: after a warm-up, a TCP echo round trip (a
// WriteAll and Reads on the client task, a Read and a WriteAll on the
// server's) allocates nothing, on every backend this platform has. The
// futures are the connection's own, reused (see TCPStream.Read). Not run
// under the race detector, whose instrumentation allocates.
func TestSocketOpsAllocateNothing(t *testing.T) {
	for _, name := range []string{"uring", "epoll", "kqueue", "iocp"} {
		probe, err := blitz.New(blitz.Config{Workers: 1, Backend: name})
		if err != nil {
			continue
		}
		_ = probe.Shutdown(context.Background())
		t.Run(name, func(t *testing.T) {
			rt := newRuntime(t, blitz.Config{Workers: 1, Backend: name})
			h := rt.Handle()
			l, err := blitz.ListenTCP(h, "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			blitz.SpawnOn(h, future.Future[int](&acceptLoop{l: l})).Detach()
			r, err := blitz.BlockOn(context.Background(), h, future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(h, l.AddrPort().String(), time.Second)))
			if err == nil {
				err = r.Err
			}
			if err != nil {
				t.Fatal(err)
			}
			p := &echoPinger{s: r.Value}
			roundTrips := func(n int) {
				t.Helper()
				p.rounds = n
				werr, err := blitz.SpawnOn(h, future.Future[error](p)).Wait(context.Background())
				if werr != nil || err != nil {
					t.Fatal(werr, err)
				}
			}
			roundTrips(200) // warm-up: the connection's futures, the backend's records
			const n = 2000
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			roundTrips(n)
			runtime.ReadMemStats(&after)
			perRoundTrip := float64(after.Mallocs-before.Mallocs) / n
			t.Logf("%s: %.3f allocations per round trip", name, perRoundTrip)
			if perRoundTrip > 0.05 { // the spawn of the measured task and the runtime's own background
				t.Errorf("%s: %.3f allocations per echo round trip; want none", name, perRoundTrip)
			}
			_ = r.Value.Close()
		})
	}
}

// echoPinger makes rounds round trips of a 64-byte message on s and leaves s
// open: write it all, read until 64 bytes came back.
type echoPinger struct {
	s        *blitz.TCPStream
	msg, buf [64]byte
	rounds   int
	got      int
	wr       *blitz.WriteAllFuture
	rd       *blitz.ReadFuture
}

func (p *echoPinger) Poll(cx *future.Context) (error, bool) {
	for p.rounds > 0 {
		if p.rd == nil {
			if p.wr == nil {
				p.wr = p.s.WriteAll(p.msg[:])
			}
			r, ok := p.wr.Poll(cx)
			if !ok {
				return nil, false
			}
			if r.Err != nil {
				return r.Err, true
			}
			p.got = 0
			p.rd = p.s.Read(p.buf[:])
		}
		r, ok := p.rd.Poll(cx)
		if !ok {
			return nil, false
		}
		if r.Err != nil {
			return r.Err, true
		}
		p.got += r.Value
		p.rd = nil
		if p.got < len(p.buf) {
			p.rd = p.s.Read(p.buf[p.got:])
			continue
		}
		p.wr = nil
		p.rounds--
	}
	return nil, true
}
