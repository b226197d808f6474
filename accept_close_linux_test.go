package blitz_test

import (
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
)

// openFDCount is the number of descriptors the process has open.
func openFDCount(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	return len(fds)
}

// TestCancelledAcceptAtCloseLeaksNothing: an accept cancelled (by a
// timeout) and still in flight when its listener closes may take a
// connection that arrived before the close reached the backend. That
// connection is closed, not left open with no one to serve it: after many
// rounds of timeout, close and a client dialling into the close, the
// process holds no more descriptors than before.
func TestCancelledAcceptAtCloseLeaksNothing(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		h := rt.Handle()
		before := openFDCount(t)
		for range rounds {
			l, err := blitz.ListenTCP(h, "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := l.AddrPort().String()
			r, err := blitz.BlockOn(testCtx(t), h, blitz.TryTimeout(time.Millisecond, l.Accept()))
			if err != nil || r.Err == nil {
				t.Fatalf("an accept with no client: %+v, %v; want a timeout", r, err)
			}
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { // dial into the close
				defer wg.Done()
				if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
					_ = c.SetReadDeadline(time.Now().Add(time.Second))
					_, _ = c.Read(make([]byte, 1)) // a reset or EOF once the server side closes
					c.Close()
				}
			}()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
		}
		// The close ops and the disposal of what they cut off complete on
		// the runtime: give them a moment.
		deadline := time.Now().Add(5 * time.Second)
		for openFDCount(t) > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if after := openFDCount(t); after > before {
			t.Fatalf("%d descriptors open after %d rounds, %d before: accepted connections leaked", after, rounds, before)
		}
	})
}
