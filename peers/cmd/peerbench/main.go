//go:build linux

// Command peerbench measures blitz's servers beside their peers, each
// server in a process of its own (see package peers):
//
//	peerbench -mode echo [-kinds blitz,gnet] [-conns 64] [-duration 5s] [-count 3]
//	peerbench -mode http ...
//	peerbench -mode idle [-idle echo|http] -conns 100000 [-procs 6] [-count 1]
//
// It prints a Markdown table: for echo and HTTP, round trips (or requests)
// per second in total and per core of the server's CPU time, median and
// range over -count runs, the load in peerbench's process; for idle, the
// growth of the servers' resident sets, in all and per connection, after
// each connection made one round trip, one row per run. The idle
// connections are spread over -procs server processes, each with a client
// process of its own (peers.IdleFleet), by default as few as the open-file
// limit and the local port range allow.
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
	mode := flag.String("mode", "echo", "echo, http or idle")
	idleMode := flag.String("idle", "echo", "with -mode idle: the servers measured, echo or http")
	kindList := flag.String("kinds", "", "comma-separated server kinds (default: all of the mode)")
	conns := flag.Int("conns", 64, "connections (with -mode idle: in all, over -procs processes)")
	d := flag.Duration("duration", 5*time.Second, "length of a throughput run")
	count := flag.Int("count", 3, "runs per kind (with -mode idle: default 1)")
	procs := flag.Int("procs", 0, "with -mode idle: server processes, and as many client processes, to spread the connections over (0: as few as the open-file limit and the local port range allow)")
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
		counted := false
		flag.Visit(func(f *flag.Flag) { counted = counted || f.Name == "count" })
		if !counted {
			*count = 1
		}
		err = idle(m, kinds, *conns, *procs, *count)
	} else {
		err = throughput(m, kinds, *conns, *d, *count)
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

// start runs this program as a server child of kind.
func start(m peers.Mode, kind string) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
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

// throughput runs every kind count times and prints the table.
func throughput(m peers.Mode, kinds []string, conns int, d time.Duration, count int) error {
	unit := "round trips/s"
	if m == peers.HTTP {
		unit = "requests/s"
	}
	fmt.Printf("%s, %d connections, %v per run, %d runs, server and load in separate processes\n\n", m, conns, d, count)
	fmt.Printf("| server | %s (median, range) | per core of server CPU (median, range) | server CPU, cores |\n", unit)
	fmt.Println("| --- | ---: | ---: | ---: |")
	for _, kind := range kinds {
		var rates, perCore, cores []float64
		for range count {
			c, err := start(m, kind)
			if err != nil {
				return err
			}
			cpu0, err := peers.CPU(c.pid())
			if err != nil {
				return errors.Join(err, c.stop())
			}
			l, runErr := peers.Run(m, c.addr, conns, d)
			cpu1, cpuErr := peers.CPU(c.pid())
			if err := errors.Join(runErr, cpuErr, c.stop()); err != nil {
				return fmt.Errorf("%s: %w", kind, err)
			}
			used := (cpu1 - cpu0).Seconds()
			rates = append(rates, l.PerSecond())
			perCore = append(perCore, float64(l.Ops)/used)
			cores = append(cores, used/l.Elapsed.Seconds())
		}
		fmt.Printf("| %s | %s | %s | %.2f |\n", kind, spread(rates), spread(perCore), median(cores))
	}
	return nil
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
			r, err := peers.IdleFleet{Exe: self, Mode: m, Kind: kind, Conns: conns, Procs: procs}.Run(ctx)
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

// machine describes where the figures were taken: Go, CPUs, kernel.
func machine() string {
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return fmt.Sprintf("%s %s/%s, %d CPUs, Linux %s", goruntime.Version(), goruntime.GOOS, goruntime.GOARCH, goruntime.NumCPU(), strings.TrimSpace(string(kernel)))
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
