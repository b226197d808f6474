//go:build !race

package blitz_test

import (
	"context"
	"math"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// TestSocketOpsAllocateNothing pins the steady state of a connection that
// reads and writes in a loop: after a warm-up, a TCP echo round trip (a
// WriteAll and Reads on the client task; on the server's, a Read and a
// WriteAll, or a PollReadPooled and PollWrites) allocates nothing, on
// every backend this platform has. The futures are the connection's own,
// reused (see TCPStream.Read), or the pools' (PollReadPooled's, parked
// while it waits, and PollWrite's). Not run under the race detector, whose
// instrumentation allocates, nor with its pools' random drops.
func TestSocketOpsAllocateNothing(t *testing.T) {
	for _, server := range []string{"futures", "polled"} {
		for _, name := range opAllocBackends(t) {
			t.Run(server+"/"+name, func(t *testing.T) { socketOpsAllocateNothing(t, name, server == "polled") })
		}
	}
}

// socketOpsAllocateNothing is one case of TestSocketOpsAllocateNothing:
// the echo server's connections are echos (ExamplePooledBuf_Advance's) if polled, else echoConns.
func socketOpsAllocateNothing(t *testing.T, name string, polled bool) {
	rt := newRuntime(t, blitz.Config{Workers: 1, Backend: name})
	h := rt.Handle()
	l, err := blitz.ListenTCP(h, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	blitz.SpawnOn(h, future.Future[int](&acceptLoop{l: l, polled: polled})).Detach()
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

// TestAcceptAllocatesOnlyTheConnection pins what accepting a connection
// allocates: the socket's record and its stream, and nothing for the peer's
// address, which the accept itself reports (a getpeername after it would
// leave 144 bytes of garbage per connection, resident in a server that
// accepted many). The addresses must still be right: each accepted
// connection's RemoteAddr is the LocalAddr of one of the dialed ones.
func TestAcceptAllocatesOnlyTheConnection(t *testing.T) {
	for _, name := range opAllocBackends(t) {
		t.Run(name, func(t *testing.T) {
			rt := newRuntime(t, blitz.Config{Workers: 1, Backend: name})
			h := rt.Handle()
			l, err := blitz.ListenTCP(h, "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			const n = 200
			dial := func() map[string]bool {
				dialed := make(map[string]bool, n)
				for range n { // the kernel completes them into the listener's backlog
					c, err := net.Dial("tcp", l.AddrPort().String())
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { c.Close() })
					dialed[c.LocalAddr().String()] = true
				}
				return dialed
			}
			accept := func() *acceptCount {
				a := &acceptCount{l: l, conns: make([]*blitz.TCPStream, 0, n), want: n}
				if got, err := blitz.SpawnOn(h, future.Future[int](a)).Wait(context.Background()); err != nil || got != n {
					t.Fatalf("accepted %d, %v; want %d", got, err, n)
				}
				return a
			}
			dial() // warm-up: the backend's records of n sockets
			for _, s := range accept().conns {
				_ = s.Close()
			}
			// TotalAlloc counts the whole process's allocations, and the
			// runtime's own (or, under Wine, the emulation's) may land in
			// the window of a round: the least of three rounds is the
			// accept's. A regression shows in every round.
			perConn := math.Inf(1)
			for round := 0; round < 3 && perConn > 240; round++ {
				dialed := dial()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				acc := accept()
				runtime.ReadMemStats(&after)
				perConn = min(perConn, float64(after.TotalAlloc-before.TotalAlloc)/n)
				t.Logf("%s: round %d: %.0f bytes allocated per accepted connection", name, round, float64(after.TotalAlloc-before.TotalAlloc)/n)
				for _, s := range acc.conns {
					if a := s.RemoteAddr().String(); !dialed[a] {
						t.Errorf("%s: accepted a connection from %s, which was not dialed", name, a)
					}
					_ = s.Close()
				}
			}
			// The socket record (128 bytes) and the stream (24), with room
			// for the backend's per-socket state (IOCP's is the largest,
			// about 60 bytes more) and the spawn of the measuring task; a
			// getpeername's garbage would add 144.
			if perConn > 240 {
				t.Errorf("%s: %.0f bytes allocated per accepted connection in the best of three rounds; want at most 240", name, perConn)
			}
		})
	}
}

// acceptCount accepts want connections on l into conns.
type acceptCount struct {
	l     *blitz.TCPListener
	acc   *blitz.AcceptFuture[*blitz.TCPStream]
	conns []*blitz.TCPStream
	want  int
}

func (a *acceptCount) Poll(cx *future.Context) (int, bool) {
	for len(a.conns) < a.want {
		if a.acc == nil {
			a.acc = a.l.Accept()
		}
		r, ok := a.acc.Poll(cx)
		if !ok {
			return 0, false
		}
		if r.Err != nil {
			return len(a.conns), true
		}
		a.acc.Rearm() // as a server's accept loop would: one future for all
		a.conns = append(a.conns, r.Value)
	}
	return len(a.conns), true
}
