//go:build linux

// Command peerbench measures blitz's servers beside their peers, each
// server in a process of its own and the load in this one (see package
// peers):
//
//	peerbench -mode echo [-kinds blitz,gnet] [-conns 64] [-duration 5s] [-count 3]
//	peerbench -mode http ...
//	peerbench -mode idle [-idle echo|http] -conns 10000
//
// It prints a Markdown table: for echo and HTTP, round trips (or requests)
// per second in total and per core of the server's CPU time, median and
// range over -count runs; for idle, the growth of the server's resident
// set per connection after each connection made one round trip.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/blitz-go/blitz/peers"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		serve(os.Args[2:])
		return
	}
	mode := flag.String("mode", "echo", "echo, http or idle")
	idleMode := flag.String("idle", "echo", "with -mode idle: the servers measured, echo or http")
	kindList := flag.String("kinds", "", "comma-separated server kinds (default: all of the mode)")
	conns := flag.Int("conns", 64, "connections")
	d := flag.Duration("duration", 5*time.Second, "length of a throughput run")
	count := flag.Int("count", 3, "runs per kind")
	sources := flag.Int("sources", 4, "with -mode idle: loopback source addresses 127.0.0.1.. to spread the client ports over")
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
		err = idle(m, kinds, *conns, *sources)
	} else {
		err = throughput(m, kinds, *conns, *d, *count)
	}
	if err != nil {
		log.Fatal(err)
	}
}

// serve is the child: start one server, say where it listens, run until
// stdin closes.
func serve(args []string) {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	mode := fs.String("mode", "echo", "echo or http")
	kind := fs.String("kind", "", "server kind")
	_ = fs.Parse(args)
	s, err := peers.Start(peers.Mode(*mode), *kind, "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ready %s\n", s.Addr)
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := s.Stop(); err != nil {
		log.Fatal(err)
	}
}

// child is a server process.
type child struct {
	cmd   *exec.Cmd
	stdin io.Closer
	addr  string
}

// start runs this program as a server child of kind.
func start(m peers.Mode, kind string) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "serve", "-mode", string(m), "-kind", kind)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// Some peers log to stdout: skip lines up to ours, and drain the rest.
	r := bufio.NewReader(out)
	var line string
	for {
		line, err = r.ReadString('\n')
		if addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ready "); ok {
			go func() { _, _ = io.Copy(io.Discard, r) }()
			return &child{cmd: cmd, stdin: in, addr: addr}, nil
		}
		if err != nil {
			in.Close()
			_ = cmd.Wait()
			return nil, fmt.Errorf("peerbench: %s did not start (%q, %v)", kind, line, err)
		}
	}
}

// stop ends the child and waits for it.
func (c *child) stop() error {
	c.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		return errors.Join(errors.New("peerbench: server did not stop in 30s"), <-done)
	}
}

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
			cpu0, err := peers.CPU(c.cmd.Process.Pid)
			if err != nil {
				return errors.Join(err, c.stop())
			}
			l, runErr := peers.Run(m, c.addr, conns, d)
			cpu1, cpuErr := peers.CPU(c.cmd.Process.Pid)
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

// idle opens conns connections to every kind, one round trip each, and
// prints the server's resident-set growth per connection.
func idle(m peers.Mode, kinds []string, conns, sources int) error {
	var src []netip.Addr
	for i := range sources {
		src = append(src, netip.AddrFrom4([4]byte{127, 0, 0, byte(1 + i)}))
	}
	fmt.Printf("%s servers, %d connections each after one round trip, server and clients in separate processes\n\n", m, conns)
	fmt.Println("| server | VmRSS before | VmRSS with the connections | per connection |")
	fmt.Println("| --- | ---: | ---: | ---: |")
	for _, kind := range kinds {
		c, err := start(m, kind)
		if err != nil {
			return err
		}
		pid := c.cmd.Process.Pid
		time.Sleep(500 * time.Millisecond)
		before, err := peers.RSS(pid)
		if err != nil {
			return errors.Join(err, c.stop())
		}
		clients, err := peers.DialMany(m, c.addr, conns, src)
		if err != nil {
			return errors.Join(fmt.Errorf("%s: %w", kind, err), c.stop())
		}
		time.Sleep(2 * time.Second) // let the server settle (its GC, lazily freed pages)
		after, err := peers.RSS(pid)
		peers.CloseAll(clients)
		if err := errors.Join(err, c.stop()); err != nil {
			return err
		}
		fmt.Printf("| %s | %.1f MiB | %.1f MiB | %d B |\n", kind, mib(before), mib(after), (after-before)/int64(conns))
	}
	return nil
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
