//go:build linux

package peers

import (
	"bytes"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// Every server of every mode starts, answers its load correctly on a few
// connections, keeps idle connections that made one round trip, and stops.
func TestEveryServerServes(t *testing.T) {
	for _, m := range []Mode{Echo, HTTP, WS} {
		for _, kind := range Kinds(m) {
			t.Run(string(m)+"/"+kind, func(t *testing.T) {
				if (kind == "nbhttp" || kind == "nbio-ws") && raceEnabled {
					// nbhttp v1.6.8 (under nbio's websocket too) reads a
					// connection's remote address in
					// ServerProcessor.OnComplete (nbhttp/processor.go:230)
					// while its poller goroutine writes it: the race
					// detector reports the peer's race, not ours.
					t.Skip("nbhttp races with itself under -race")
				}
				s, err := Start(m, kind, "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				l, runErr := Run(m, s.Addr, 4, 100*time.Millisecond)
				idle, idleErr := DialMany(m, s.Addr, 20, nil)
				CloseAll(idle)
				if err := s.Stop(); err != nil {
					t.Errorf("stop: %v", err)
				}
				if runErr != nil || idleErr != nil {
					t.Fatalf("load: %v; idle connections: %v", runErr, idleErr)
				}
				if l.Ops == 0 {
					t.Fatal("no round trip completed in 100ms")
				}
			})
		}
	}
}

// RunAt paces its round trips: at a rate far below what the server
// answers, the load makes no more round trips than the rate allows, and
// about as many; a negative rate is refused.
func TestRunAtPaces(t *testing.T) {
	s, err := Start(Echo, "go-net", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	}()
	if _, err := RunAt(Echo, s.Addr, 4, 10*time.Millisecond, -1); err == nil {
		t.Error("RunAt with a negative rate succeeded")
	}
	const conns, rate = 4, 400.0
	d := 500 * time.Millisecond
	l, err := RunAt(Echo, s.Addr, conns, d, rate)
	if err != nil {
		t.Fatal(err)
	}
	// Each connection starts a round trip at most once per interval
	// (conns/rate), from the start of the run until it stops: up to
	// elapsed×rate in all, and one more per connection for the round trip
	// under way at the end.
	most := int64(l.Elapsed.Seconds()*rate) + conns
	// A loaded machine may fall behind the schedule; half of it is a floor
	// that only a load which does not pace from the start misses.
	least := int64(d.Seconds() * rate / 2)
	if l.Ops > most || l.Ops < least {
		t.Fatalf("%d round trips in %v at %v/s: want %d to %d", l.Ops, l.Elapsed, rate, least, most)
	}
}

func TestUnknownKind(t *testing.T) {
	if _, err := Start(Echo, "nope", "127.0.0.1:0"); err == nil {
		t.Fatal("Start of an unknown kind succeeded")
	}
}

// The process's own figures are readable and plausible.
func TestProcFigures(t *testing.T) {
	rss, err := RSS(os.Getpid())
	if err != nil || rss < 1<<20 {
		t.Fatalf("RSS = %d, %v; want at least 1 MiB", rss, err)
	}
	before, err := CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); time.Since(start) < 100*time.Millisecond; {
	}
	after, err := CPU(os.Getpid())
	if err != nil || after <= before {
		t.Fatalf("CPU went from %v to %v (%v) over 100ms of spinning", before, after, err)
	}
}

// The blitz echo servers give back every byte of a stream much larger
// than a read buffer, sent while the client reads: reads of many pool
// buffers, and writes that wait for the socket once the client's receive
// window is full.
func TestBlitzEchoLargeStream(t *testing.T) {
	size := 8 << 20
	if testing.Short() {
		size = 1 << 20
	}
	for _, kind := range Kinds(Echo) {
		if !strings.HasPrefix(kind, "blitz") {
			continue
		}
		t.Run(kind, func(t *testing.T) {
			s, err := Start(Echo, kind, "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := s.Stop(); err != nil {
					t.Errorf("stop: %v", err)
				}
			}()
			c, err := net.Dial("tcp", s.Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// A small receive buffer, and a pause before the first read,
			// so the server's socket fills and its writes wait.
			if err := c.(*net.TCPConn).SetReadBuffer(32 << 10); err != nil {
				t.Fatal(err)
			}
			want := make([]byte, size)
			for i := range want {
				want[i] = byte(i*7 + i>>12)
			}
			sent := make(chan error, 1)
			go func() {
				_, err := c.Write(want)
				sent <- err
			}()
			got := make([]byte, size)
			time.Sleep(50 * time.Millisecond)
			_ = c.SetReadDeadline(time.Now().Add(time.Minute))
			if _, err := io.ReadFull(c, got); err != nil {
				t.Fatalf("read back: %v", err)
			}
			if err := <-sent; err != nil {
				t.Fatalf("write: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatal("the echo differs from what was sent")
			}
		})
	}
}
