//go:build linux

package peers

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Every WS server, in a child process, holds a few idle connections,
// reports its heap, and broadcasts a message that every connection
// receives.
func TestWSFleetBroadcasts(t *testing.T) {
	for _, kind := range Kinds(WS) {
		t.Run(kind, func(t *testing.T) {
			if kind == "nbio-ws" && raceEnabled {
				t.Skip("nbhttp races with itself under -race: see TestEveryServerServes")
			}
			f := idleFleet(t, kind, "1", 40, 1)
			f.Mode, f.Heap, f.Broadcast = WS, true, 1024
			rep, err := runFleet(t, f)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Delivered <= 0 || rep.Servers[0].HeapFull <= 0 {
				t.Fatalf("delivered in %v, heap %d", rep.Delivered, rep.Servers[0].HeapFull)
			}
			checkReaped(t)
		})
	}
}

// TestWSPeerTable measures the WS servers side by side, each in a
// process of its own, and prints a Markdown table: echo round trips per
// second of WSPayload-byte messages on PEERS_WS_ECHO_CONNS connections
// (1,000 by default) for PEERS_WS_DURATION (5s), the load in this
// process; then, with PEERS_WS_CONNS idle connections (10^4) held by
// client processes, the servers' growth per connection, of resident set
// and of live heap, and the time a broadcast of one WSPayload-byte
// message takes to reach them all; PEERS_WS_COUNT rounds (1), the
// kinds (PEERS_WS_KINDS, all by default) alternating in each. It runs
// only with PEERS_WS_BENCH=1:
//
//	PEERS_WS_BENCH=1 PEERS_WS_COUNT=3 go test -run TestWSPeerTable -v -timeout 60m ./peers
func TestWSPeerTable(t *testing.T) {
	if os.Getenv("PEERS_WS_BENCH") != "1" {
		t.Skip("set PEERS_WS_BENCH=1 to run the WebSocket peer measurement")
	}
	echoConns := envInt(t, "PEERS_WS_ECHO_CONNS", 1000)
	idleConns := envInt(t, "PEERS_WS_CONNS", 10000)
	d := 5 * time.Second
	if s := os.Getenv("PEERS_WS_DURATION"); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			t.Fatal(err)
		}
	}
	kinds := Kinds(WS)
	if s := os.Getenv("PEERS_WS_KINDS"); s != "" {
		kinds = strings.Split(s, ",")
	}
	procs, err := MinProcs(idleConns)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PEERS_TEST_CHILD=1", "GORACE=atexit_sleep_ms=0"}
	rounds := envInt(t, "PEERS_WS_COUNT", 1)
	type figures struct{ rtps, perCore, cores, rss, rssMarg, heap, heapMarg, queued, delivered []float64 }
	res := map[string]*figures{}
	for round := range rounds {
		for _, kind := range kinds {
			fg := res[kind]
			if fg == nil {
				fg = &figures{}
				res[kind] = fg
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			p, srv, err := StartServer(ctx, exe, env, WS, kind, "127.0.0.1:0")
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			cpu0, _ := CPU(p.Pid())
			l, runErr := Run(WS, srv.Addr, echoConns, d)
			cpu1, _ := CPU(p.Pid())
			if err := p.Stop(); err != nil || runErr != nil {
				cancel()
				t.Fatalf("%s: echo: %v %v", kind, runErr, err)
			}
			cores := (cpu1 - cpu0).Seconds() / l.Elapsed.Seconds()
			f := IdleFleet{Exe: exe, Env: env, Mode: WS, Kind: kind, Conns: idleConns, Procs: procs, Heap: true, Broadcast: WSPayload}
			rep, err := f.Run(ctx)
			cancel()
			if err != nil {
				t.Fatalf("%s: idle and broadcast: %v", kind, err)
			}
			heapAvg, heapMarg := rep.HeapPerConn()
			fg.rtps = append(fg.rtps, l.PerSecond())
			fg.perCore = append(fg.perCore, l.PerSecond()/cores)
			fg.cores = append(fg.cores, cores)
			fg.rss = append(fg.rss, rep.PerConn())
			fg.rssMarg = append(fg.rssMarg, rep.Marginal())
			fg.heap = append(fg.heap, heapAvg)
			fg.heapMarg = append(fg.heapMarg, heapMarg)
			fg.queued = append(fg.queued, float64(rep.Queued.Microseconds())/1000)
			fg.delivered = append(fg.delivered, float64(rep.Delivered.Microseconds())/1000)
			t.Logf("round %d %s: %.0f round trips/s, %.2f cores, RSS %.0f (%.0f) B/conn, heap %.0f (%.0f) B/conn, broadcast %v / %v",
				round, kind, l.PerSecond(), cores, rep.PerConn(), rep.Marginal(), heapAvg, heapMarg, rep.Queued, rep.Delivered)
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("\nGo %s, %d CPUs, load average at the end %s", runtime.Version(), runtime.NumCPU(), load)
	fmt.Printf("echo: %d connections, %d-byte binary messages, %v; idle and broadcast: %d connections over %d server process(es), a %d-byte text message; %d round(s), median (min-max)\n\n",
		echoConns, WSPayload, d, idleConns, procs, WSPayload, rounds)
	fmt.Println("| server | echo round trips/s | per core of server CPU | RSS/conn, B | RSS/conn at the margin, B | heap/conn, B | heap/conn at the margin, B | broadcast: server returned, ms | broadcast: last received, ms |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, kind := range kinds {
		fg := res[kind]
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", kind, spread(fg.rtps, 0), spread(fg.perCore, 0),
			spread(fg.rss, 0), spread(fg.rssMarg, 0), spread(fg.heap, 0), spread(fg.heapMarg, 0), spread(fg.queued, 1), spread(fg.delivered, 0))
	}
}

// spread formats the median of xs and, for more than one, their range.
func spread(xs []float64, prec int) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	if len(s) == 1 {
		return strconv.FormatFloat(med, 'f', prec, 64)
	}
	return fmt.Sprintf("%s (%s-%s)", strconv.FormatFloat(med, 'f', prec, 64), strconv.FormatFloat(s[0], 'f', prec, 64), strconv.FormatFloat(s[len(s)-1], 'f', prec, 64))
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}
