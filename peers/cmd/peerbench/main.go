//go:build linux

// Command peerbench measures blitz's servers beside their peers, each
// server in a process of its own (see package peers):
//
//	peerbench -mode echo [-kinds blitz,gnet] [-conns 64] [-duration 5s] [-count 3]
//	peerbench -mode http [-load auto|go|wrk] [-wrk-threads 1] ...
//	peerbench -mode http -kinds net-http,blitz-http,blitz-http@/tmp/peerbench-old ...
//	peerbench -mode ws [-conns 1000]   # WebSocket echo of 1 KiB messages
//	peerbench -mode idle [-idle echo|http] -conns 100000 [-procs 6] [-count 1]
//
// It prints a Markdown table: for echo and HTTP, round trips (or requests)
// per second in total and per core of the server's CPU time, median and
// range over -count rounds, in which the kinds alternate, and each kind's
// ratio to the Go standard library's server in the same round. The load
// runs in peerbench's process (-load go), or for HTTP in wrk's own
// process (-load wrk; -load auto, the default, picks wrk when it is on
// PATH), which also reports latencies; for idle, the
// growth of the servers' resident sets, in all and per connection, after
// each connection made one round trip, one row per run. The idle
// connections are spread over -procs server processes, each with a client
// process of its own (peers.IdleFleet), by default as few as the open-file
// limit and the local port range allow.
//
// A kind written KIND@PROGRAM is served by PROGRAM, another build of
// peerbench (an earlier commit's, say), in the same alternating rounds:
// the honest way to compare two builds on a machine whose load changes.
//
// peerbench runs its own children: "peerbench serve ..." and
// "peerbench dial ..." are the child processes (peers.RunChild).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	goruntime "runtime"
	"slices"
	"strings"
	"time"

	"github.com/blitz-go/blitz/peers"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "serve" || os.Args[1] == "dial") {
		if err := peers.RunChild(os.Args[1:]); err != nil {
			log.Fatal(err)
		}
		return
	}
	mode := flag.String("mode", "echo", "echo, http, ws or idle")
	idleMode := flag.String("idle", "echo", "with -mode idle: the servers measured, echo, http or ws")
	kindList := flag.String("kinds", "", "comma-separated server kinds (default: all of the mode)")
	conns := flag.Int("conns", 64, "connections (with -mode idle: in all, over -procs processes)")
	d := flag.Duration("duration", 5*time.Second, "length of a throughput run")
	count := flag.Int("count", 3, "runs per kind (with -mode idle: default 1)")
	procs := flag.Int("procs", 0, "with -mode idle: server processes, and as many client processes, to spread the connections over (0: as few as the open-file limit and the local port range allow)")
	load := flag.String("load", "auto", "with -mode http: the load generator, go (in peerbench's process), wrk (the wrk program, in its own process) or auto (wrk if it is on PATH, else go)")
	wrkThreads := flag.Int("wrk-threads", 1, "with -load wrk: wrk's threads")
	rate := flag.Float64("rate", 0, "with the Go load: a fixed offered load, round trips (or requests) per second in all, so that servers which all keep up compare by their CPU per round trip (0: as fast as each server answers)")
	base := flag.String("baseline", "", "the kind the others are compared with, round by round (default: go-net for echo, net-http for http, gorilla for ws)")
	flag.Parse()
	m := peers.Mode(*mode)
	if m == "idle" {
		m = peers.Mode(*idleMode)
	}
	kinds := peers.Kinds(m)
	if *kindList != "" {
		kinds = strings.Split(*kindList, ",")
	}
	if len(kinds) == 0 {
		log.Fatalf("peerbench: unknown mode %q", *mode)
	}
	var err error
	if *mode == "idle" {
		for _, k := range kinds {
			if strings.Contains(k, "@") {
				log.Fatalf("peerbench: -mode idle runs its servers from this program: %q", k)
			}
		}
		counted := false
		flag.Visit(func(f *flag.Flag) { counted = counted || f.Name == "count" })
		if !counted {
			*count = 1
		}
		err = idle(m, kinds, *conns, *procs, *count)
	} else {
		var lg loadGen
		if lg, err = pickLoad(m, *load, *wrkThreads, *rate); err == nil {
			b := *base
			if b == "" {
				b = baseline[m]
			}
			err = throughput(m, kinds, lg, *conns, *d, *count, b)
		}
	}
	if err != nil {
		log.Fatal(err)
	}
}

// child is a server process.
type child struct {
	p    *peers.Proc
	addr string
}

// start runs this program as a server child of kind; a kind written
// KIND@PROGRAM runs PROGRAM (another build of peerbench, say the one of an
// earlier commit) as the server child of KIND instead.
func start(m peers.Mode, kind string) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if k, exe, ok := strings.Cut(kind, "@"); ok {
		kind, self = k, exe
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, s, err := peers.StartServer(ctx, self, nil, m, kind, "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &child{p: p, addr: s.Addr}, nil
}

// pid is the child's process id.
func (c *child) pid() int { return c.p.Pid() }

// stop ends the child and waits for it.
func (c *child) stop() error { return c.p.Stop() }

// loadGen is the load of a throughput run: the Go load in peerbench's
// process (wrkThreads 0), as fast as the server answers or at a fixed
// rate, or wrk in a process of its own.
type loadGen struct {
	wrkThreads int
	rate       float64 // the Go load's offered round trips per second (0: closed loop)
}

// pickLoad resolves -load for mode m.
func pickLoad(m peers.Mode, load string, wrkThreads int, rate float64) (loadGen, error) {
	if rate < 0 {
		return loadGen{}, fmt.Errorf("peerbench: -rate %v: want 0 or more", rate)
	}
	_, lookErr := exec.LookPath("wrk")
	switch load {
	case "go":
		return loadGen{rate: rate}, nil
	case "auto":
		if m != peers.HTTP || lookErr != nil || rate > 0 {
			return loadGen{rate: rate}, nil
		}
	case "wrk":
		if m != peers.HTTP {
			return loadGen{}, fmt.Errorf("peerbench: -load wrk measures HTTP servers only, not -mode %s", m)
		}
		if rate > 0 { // before wrk's absence: installing wrk would not make the flags agree
			return loadGen{}, errors.New("peerbench: -rate needs the Go load (-load go): wrk runs closed loops only")
		}
		if lookErr != nil {
			return loadGen{}, fmt.Errorf("peerbench: -load wrk: %w", peers.ErrNoWrk)
		}
	default:
		return loadGen{}, fmt.Errorf("peerbench: -load %q: want go, wrk or auto", load)
	}
	if wrkThreads < 1 {
		return loadGen{}, fmt.Errorf("peerbench: -wrk-threads %d: want at least 1", wrkThreads)
	}
	return loadGen{wrkThreads: wrkThreads}, nil
}

// String says where the load runs.
func (g loadGen) String() string {
	if g.wrkThreads > 0 {
		return fmt.Sprintf("load by wrk (%d thread(s)) in its own process", g.wrkThreads)
	}
	if g.rate > 0 {
		return fmt.Sprintf("load by Go in peerbench's process, offered at %.0f/s", g.rate)
	}
	return "load by Go in peerbench's process"
}

// round is one run of one kind.
type round struct {
	rate, perCore, cores float64
	p50, p99             time.Duration // wrk only
}

// run starts a server of kind, loads it for d and stops it.
func (g loadGen) run(m peers.Mode, kind string, conns int, d time.Duration) (round, error) {
	c, err := start(m, kind)
	if err != nil {
		return round{}, err
	}
	cpu0, err := peers.CPU(c.pid())
	if err != nil {
		return round{}, errors.Join(err, c.stop())
	}
	var l peers.Load
	var r round
	var runErr error
	if g.wrkThreads > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), d+time.Minute)
		var w peers.WrkLoad
		w, runErr = peers.RunWrk(ctx, c.addr, conns, g.wrkThreads, d)
		cancel()
		l, r.p50, r.p99 = w.Load, w.P50, w.P99
	} else {
		l, runErr = peers.RunAt(m, c.addr, conns, d, g.rate)
	}
	cpu1, cpuErr := peers.CPU(c.pid())
	if err := errors.Join(runErr, cpuErr, c.stop()); err != nil {
		return round{}, fmt.Errorf("%s: %w", kind, err)
	}
	used := (cpu1 - cpu0).Seconds()
	r.rate = l.PerSecond()
	r.perCore = float64(l.Ops) / used
	r.cores = used / l.Elapsed.Seconds()
	return r, nil
}

// baseline is the kind every other is compared with, round by round,
// unless -baseline names another.
var baseline = map[peers.Mode]string{peers.HTTP: "net-http", peers.Echo: "go-net", peers.WS: "gorilla"}

// throughput runs every kind count times, the kinds alternating within
// each round in an order that rotates from round to round, and prints the
// table.
func throughput(m peers.Mode, kinds []string, g loadGen, conns int, d time.Duration, count int, base string) error {
	unit := "round trips/s"
	if m == peers.HTTP {
		unit = "requests/s"
	}
	fmt.Printf("%s, %d connections, %v per run, %d rounds (the kinds alternate within a round, each round starting one kind further on), server in its own process, %s; %s, load average %s\n\n",
		m, conns, d, count, g, machine(), loadavg())
	runs := make(map[string][]round)
	for i := range count {
		// Each round starts one kind further on, so that no kind always
		// runs first (or after the same neighbour) in a round.
		for j := range kinds {
			kind := kinds[(i+j)%len(kinds)]
			r, err := g.run(m, kind, conns, d)
			if err != nil {
				return err
			}
			runs[kind] = append(runs[kind], r)
		}
	}
	fmt.Printf("| server | %s (median, range) | ÷ %s, same round (median, range) | per core of server CPU (median, range) | ÷ %s per core | server CPU, cores |", unit, base, base)
	if g.wrkThreads > 0 {
		fmt.Print(" latency p50 | latency p99 |")
	}
	if g.rate > 0 {
		fmt.Print(" server CPU per op, µs (median, range) |")
	}
	fmt.Println()
	fmt.Print("| --- | ---: | ---: | ---: | ---: | ---: |")
	if g.wrkThreads > 0 || g.rate > 0 {
		fmt.Print(" ---: |")
	}
	if g.wrkThreads > 0 {
		fmt.Print(" ---: |")
	}
	fmt.Println()
	for _, kind := range kinds {
		rs := runs[kind]
		pick := func(f func(round) float64) []float64 {
			v := make([]float64, len(rs))
			for i, r := range rs {
				v[i] = f(r)
			}
			return v
		}
		ratio, ratioCore := "-", "-"
		if b, ok := runs[base]; ok {
			ratio = ratios(pick(func(r round) float64 { return r.rate }), b, func(r round) float64 { return r.rate })
			ratioCore = ratios(pick(func(r round) float64 { return r.perCore }), b, func(r round) float64 { return r.perCore })
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %.2f |", kind, spread(pick(func(r round) float64 { return r.rate })), ratio,
			spread(pick(func(r round) float64 { return r.perCore })), ratioCore, median(pick(func(r round) float64 { return r.cores })))
		if g.wrkThreads > 0 {
			fmt.Printf(" %v | %v |", time.Duration(median(pick(func(r round) float64 { return float64(r.p50) }))).Round(time.Microsecond),
				time.Duration(median(pick(func(r round) float64 { return float64(r.p99) }))).Round(time.Microsecond))
		}
		if g.rate > 0 {
			us := pick(func(r round) float64 { return 1e6 / r.perCore })
			fmt.Printf(" %.2f (%.2f-%.2f) |", median(us), slices.Min(us), slices.Max(us))
		}
		fmt.Println()
	}
	fmt.Printf("\nload average after: %s\n", loadavg())
	return nil
}

// ratios formats the median and range of v[i] ÷ f(base[i]), round by round.
func ratios(v []float64, base []round, f func(round) float64) string {
	q := make([]float64, len(v))
	for i := range v {
		q[i] = v[i] / f(base[i])
	}
	return fmt.Sprintf("%.2fx (%.2f-%.2fx)", median(q), slices.Min(q), slices.Max(q))
}

// loadavg is the machine's load average over 1, 5 and 15 minutes.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// idle opens conns connections to every kind over procs server processes
// (see peers.IdleFleet), one round trip each, count times, and prints the
// servers' resident-set growth, in all and per connection, the size of
// the read pools the growth includes once their pages are touched, and
// the growth once more after a forced garbage collection in each server.
func idle(m peers.Mode, kinds []string, conns, procs, count int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if procs == 0 {
		if procs, err = peers.MinProcs(conns); err != nil {
			return err
		}
	}
	share, err := peers.MaxShare()
	if err != nil {
		return err
	}
	fmt.Printf("%s servers, %d idle connections after one round trip each, over %d server processes and %d client processes (at most %d per process here: open-file limit, local port range); %s\n\n",
		m, conns, procs, procs, share, machine())
	fmt.Println("| server | processes × connections | VmRSS before, all servers | VmRSS growth, all servers | growth per connection | per connection at the margin (½ to all) | fixed part of the growth | read pools, all servers | growth after a forced GC | per connection after a forced GC |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, kind := range kinds {
		for range count {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			r, err := peers.IdleFleet{Exe: self, Mode: m, Kind: kind, Conns: conns, Procs: procs, Heap: os.Getenv("PEERS_HEAPPROFILE") != "" || os.Getenv("PEERS_MEMSTATS") != ""}.Run(ctx)
			cancel()
			if err != nil {
				return err
			}
			shares := fmt.Sprint(r.Servers[0].Conns)
			if last := r.Servers[len(r.Servers)-1].Conns; last != r.Servers[0].Conns {
				shares = fmt.Sprintf("%d-%d", last, r.Servers[0].Conns)
			}
			pool := "-"
			if r.ReadPool() > 0 {
				pool = fmt.Sprintf("%.1f MiB", mib(r.ReadPool()))
			}
			fmt.Printf("| %s | %d × %s | %.1f MiB | %.1f MiB | %.0f B | %.0f B | %.1f MiB | %s | %.1f MiB | %.0f B |\n",
				kind, len(r.Servers), shares, mib(r.Before()), mib(r.Growth()), r.PerConn(), r.Marginal(), mib(r.Fixed()), pool,
				mib(r.CollectedGrowth()), r.PerConnCollected())
		}
	}
	return nil
}

// machine describes where the figures were taken: Go, the processor, CPUs, kernel.
func machine() string {
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	cpuinfo, _ := os.ReadFile("/proc/cpuinfo")
	return fmt.Sprintf("%s %s/%s, %s, %d CPUs, Linux %s", goruntime.Version(), goruntime.GOOS, goruntime.GOARCH,
		processor(string(cpuinfo)), goruntime.NumCPU(), strings.TrimSpace(string(kernel)))
}

// processor names the first processor of a /proc/cpuinfo text: its model name and, on x86, its family
// and model numbers, which tell processor generations apart where a virtual machine's model name does
// not ("AMD EPYC, family 26 model 2", as blitzbench prints it); "unknown processor" when the text names
// none.
func processor(cpuinfo string) string {
	first, _, _ := strings.Cut(cpuinfo, "\n\n") // the first processor's block
	var name, family, model string
	for line := range strings.Lines(first) {
		k, v, _ := strings.Cut(line, ":")
		switch v = strings.TrimSpace(v); strings.TrimSpace(k) {
		case "model name":
			name = v
		case "cpu family":
			family = v
		case "model":
			model = v
		}
	}
	switch {
	case name == "":
		return "unknown processor"
	case family == "" || model == "":
		return name
	}
	return name + ", family " + family + " model " + model
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// median returns the median of v.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread formats the median and range of v in thousands.
func spread(v []float64) string {
	return fmt.Sprintf("%.1fk (%.1f-%.1fk)", median(v)/1e3, slices.Min(v)/1e3, slices.Max(v)/1e3)
}
