//go:build linux

package peers

import (
	"os"
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
