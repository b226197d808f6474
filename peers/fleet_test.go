//go:build linux

package peers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// idleFleet is a small fleet of the test binary's children (the race
// detector's one-second sleep at exit turned off in them).
func idleFleet(t *testing.T, kind, child string, conns, procs int) IdleFleet {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return IdleFleet{Exe: exe, Env: []string{"PEERS_TEST_CHILD=" + child, "GORACE=atexit_sleep_ms=0"}, Mode: Echo, Kind: kind, Conns: conns, Procs: procs, Settle: 50 * time.Millisecond}
}

// runFleet runs f under a watchdog that fails the test rather than hang.
func runFleet(t *testing.T, f IdleFleet) (IdleReport, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return f.Run(ctx)
}

// children lists the processes whose parent is this one, reaped or not
// (a zombie is listed too).
func children(t *testing.T) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the process ended meanwhile
		}
		i := bytes.LastIndexByte(b, ')')
		if f := bytes.Fields(b[i+1:]); i >= 0 && len(f) > 1 && string(f[1]) == fmt.Sprint(os.Getpid()) {
			kids = append(kids, string(b[:i+1]))
		}
	}
	return kids
}

// checkReaped fails the test if a child process is left, running or a
// zombie.
func checkReaped(t *testing.T) {
	t.Helper()
	if kids := children(t); len(kids) > 0 {
		t.Fatalf("child processes left: %v", kids)
	}
}

// Every echo server kind, spread over two processes with two client
// processes, holds its share of the connections to the end; the figures
// come out of /proc, the blitz servers tell their read pool, and every
// child is reaped.
func TestIdleFleetCountsAndMemory(t *testing.T) {
	const procs, each = 2, 200
	for _, kind := range Kinds(Echo) {
		t.Run(kind, func(t *testing.T) {
			rep, err := runFleet(t, idleFleet(t, kind, "1", procs*each, procs))
			checkReaped(t)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Kind != kind || len(rep.Servers) != procs || rep.Conns() != procs*each {
				t.Fatalf("report of %q: %d servers, %d connections; want %q, %d, %d", rep.Kind, len(rep.Servers), rep.Conns(), kind, procs, procs*each)
			}
			addrs := map[string]bool{}
			for _, s := range rep.Servers {
				if s.HalfConns != each/2 || s.Conns != each || s.FDs < each {
					t.Errorf("server %d: %d then %d connections, %d more open files; want %d, %d, at least %d", s.Pid, s.HalfConns, s.Conns, s.FDs, each/2, each, each)
				}
				if s.Before < 1<<20 || s.Half < 1<<20 || s.Full < 1<<20 || s.Collected < 1<<20 {
					t.Errorf("server %d: VmRSS %d, %d, %d, %d after a GC; want each at least 1 MiB", s.Pid, s.Before, s.Half, s.Full, s.Collected)
				}
				wantPool := int64(0)
				if strings.HasPrefix(kind, "blitz") {
					wantPool = blitzReadBuffers * blitzReadBufferSize
				}
				if s.ReadPool != wantPool {
					t.Errorf("server %d: read pool %d B, want %d", s.Pid, s.ReadPool, wantPool)
				}
				addrs[s.Addr] = true
			}
			if len(addrs) != procs {
				t.Errorf("servers listened on %v, want %d addresses", addrs, procs)
			}
			if math.IsNaN(rep.PerConn()) || math.IsNaN(rep.Marginal()) || rep.Before() <= 0 {
				t.Errorf("figures: before %d, per connection %v, marginal %v", rep.Before(), rep.PerConn(), rep.Marginal())
			}
			t.Logf("%s: before %d B, growth %d B, %.0f B/conn, marginal %.0f B/conn, fixed %d B, after a GC %.0f B/conn", kind, rep.Before(), rep.Growth(), rep.PerConn(), rep.Marginal(), rep.Fixed(), rep.PerConnCollected())
		})
	}
}

// A client process that dies fails the run with its exit status, and the
// servers already running are stopped and reaped; so is a server that
// cannot start.
func TestIdleFleetFailureReapsEveryChild(t *testing.T) {
	_, err := runFleet(t, idleFleet(t, "blitz", "fail-dial", 40, 2))
	checkReaped(t)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("run with crashing clients: %v; want an error with exit status 3", err)
	}
	_, err = runFleet(t, idleFleet(t, "nope", "1", 40, 2))
	checkReaped(t)
	if err == nil || !strings.Contains(err.Error(), "did not start") {
		t.Fatalf("run of an unknown kind: %v; want an error saying it did not start", err)
	}
}

// A share over the open-file limit fails with ErrLimit before any process
// starts.
func TestIdleFleetLimit(t *testing.T) {
	_, err := runFleet(t, idleFleet(t, "blitz", "1", math.MaxInt32, 1))
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("run of 2^31-1 connections in one process: %v; want ErrLimit", err)
	}
	checkReaped(t)
}

// TestServerPinnedToCPUs: with PEERS_SERVER_CPUS set, a serve child runs
// on those CPUs alone, and still serves.
func TestServerPinnedToCPUs(t *testing.T) {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("no taskset here")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PEERS_SERVER_CPUS", "0")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, srv, err := StartServer(ctx, exe, []string{"PEERS_TEST_CHILD=1", "GORACE=atexit_sleep_ms=0"}, Echo, "go-net", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	var allowed string
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			allowed = strings.TrimSpace(v)
		}
	}
	if allowed != "0" {
		t.Fatalf("the server child may run on CPUs %q, want \"0\"", allowed)
	}
	c, err := net.DialTimeout("tcp", srv.Addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "ping" {
		t.Fatalf("echo = %q, %v; want \"ping\"", got, err)
	}
}
