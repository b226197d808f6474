//go:build linux

package peers

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"
)

// wrkSample is what wrk 4.1.0 printed for a run with --latency.
const wrkSample = `Running 2s test @ http://127.0.0.1:36503/
  1 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.07ms    1.20ms  11.62ms   89.18%
    Req/Sec    67.33k     4.60k   73.84k    57.14%
  Latency Distribution
     50%  722.00us
     75%    1.16ms
     90%    2.42ms
     99%    5.87ms
  140494 requests in 2.10s, 15.41MB read
Requests/sec:  66843.37
Transfer/sec:      7.33MB
`

func TestParseWrk(t *testing.T) {
	l, err := ParseWrk([]byte(wrkSample))
	if err != nil {
		t.Fatal(err)
	}
	want := WrkLoad{
		Load:   Load{Ops: 140494, Elapsed: 2100 * time.Millisecond},
		PerSec: 66843.37,
		Mean:   1070 * time.Microsecond, P50: 722 * time.Microsecond, P99: 5870 * time.Microsecond,
	}
	if l != want {
		t.Fatalf("ParseWrk = %+v, want %+v", l, want)
	}
}

// A run with errors, or output without figures, fails.
func TestParseWrkFailures(t *testing.T) {
	withErrors := wrkSample + "  Socket errors: connect 0, read 3, write 0, timeout 0\n  Non-2xx or 3xx responses: 7\n"
	for name, out := range map[string]string{
		"errors":     withErrors,
		"no figures": "unable to connect to 127.0.0.1:1 Connection refused\n",
		"bad unit":   "    Latency     1.07parsecs\n  1 requests in 1.00s, 1MB read\nRequests/sec:  1.00\n",
	} {
		if l, err := ParseWrk([]byte(out)); err == nil {
			t.Errorf("%s: ParseWrk = %+v, nil; want an error", name, l)
		}
	}
}

// wrk, where installed, measures a server of each HTTP kind.
func TestRunWrk(t *testing.T) {
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skip("wrk is not on PATH")
	}
	s, err := Start(HTTP, "blitz-http", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := RunWrk(ctx, s.Addr, 4, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if l.Ops == 0 || l.PerSec <= 0 || l.Mean <= 0 || l.P99 < l.P50 {
		t.Fatalf("RunWrk = %+v", l)
	}
}

// Without wrk on PATH, RunWrk says so.
func TestRunWrkMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := RunWrk(context.Background(), "127.0.0.1:1", 1, 1, time.Second); !errors.Is(err, ErrNoWrk) {
		t.Fatalf("RunWrk without wrk: %v, want ErrNoWrk", err)
	}
}
