//go:build linux

package peers

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The child processes. A measurement runs each server, and with
// IdleFleet each group of client connections, in a process of its own,
// started from a program that hands its arguments to RunChild (peerbench
// itself, or a test binary). A child talks with its parent by lines:
//
//   - serve -mode M -kind K [-addr A]: starts the server, prints
//     "ready ADDR READPOOL" (Server.Addr and ReadPool); for each line "gc"
//     on its standard input, runs a garbage collection, returns the freed
//     memory to the kernel (debug.FreeOSMemory) and prints "collected";
//     for "heap", runs two collections and prints "heap BYTES", its live
//     heap and goroutine stacks (with PEERS_MEMSTATS set, also the Go
//     runtime's memory figures on standard error: heap in use and idle,
//     stacks, GC metadata); for "broadcast SIZE" (a WS server),
//     broadcasts a text message of SIZE bytes to its connections
//     (Server.Broadcast) and prints "broadcasted"; when its standard
//     input closes, stops the server and exits.
//   - dial -mode M -addr A [-from S -sources N]: for each line "dial N" on
//     its standard input, opens N more connections to A, each making one
//     round trip, from the N IPv4 addresses that start at S in turn (none:
//     the kernel picks), and prints "dialed TOTAL"; for "recv" (WS),
//     starts reading one message on every connection, prints
//     "listening", and once every connection has its message prints
//     "received UNIXNANO", the wall-clock time of the last arrival; when
//     its standard input closes, it closes every connection and exits.
//
// A child's other output on standard output is skipped; its standard
// error is the parent's. A child also dies with its parent (the parent's
// end of the pipe closes, and the kernel sends SIGKILL, Pdeathsig).

// protocolLines are the beginnings of the lines a child prints for its
// parent.
var protocolLines = []string{"ready ", "dialed ", "collected", "heap ", "broadcasted", "listening", "received "}

// stopTimeout bounds the wait for a child to exit after its standard input
// closed; then it is killed.
const stopTimeout = 30 * time.Second

// RunChild runs the child named by args[0] ("serve" or "dial") with the
// rest of args as its flags, until its standard input closes.
func RunChild(args []string) error {
	if len(args) == 0 {
		return errors.New("peers: no child named")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	mode := fs.String("mode", "echo", "echo, http or ws")
	kind := fs.String("kind", "", "server kind (serve)")
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on (serve) or dial (dial)")
	from := fs.String("from", "", "first source address (dial)")
	sources := fs.Int("sources", 0, "source addresses, from -from on (dial)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	var src []netip.Addr
	if *sources > 0 {
		a, err := netip.ParseAddr(*from)
		if err != nil || !a.Is4() {
			return fmt.Errorf("peers: dial child: -from %q is not an IPv4 address", *from)
		}
		for range *sources {
			src = append(src, a)
			a = a.Next()
		}
	}
	switch args[0] {
	case "serve":
		return serveChild(Mode(*mode), *kind, *addr)
	case "dial":
		return dialChild(Mode(*mode), *addr, src)
	}
	return fmt.Errorf("peers: no child named %q", args[0])
}

// serveChild is the serve child.
//
// With PEERS_CPUPROFILE=FILE in its environment, the child writes a CPU
// profile of its whole life to FILE (go tool pprof reads it); with
// PEERS_HEAPPROFILE=FILE, a heap profile of every allocation at each
// "heap" line, after its collections (the last one is left in FILE),
// which tells what the connections' live memory is made of.
func serveChild(m Mode, kind, addr string) (err error) {
	if os.Getenv("PEERS_HEAPPROFILE") != "" {
		runtime.MemProfileRate = 1 // every allocation, so that the profile counts each connection's objects
	}
	if path := os.Getenv("PEERS_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return errors.Join(err, f.Close())
		}
		defer func() {
			pprof.StopCPUProfile()
			err = errors.Join(err, f.Close())
		}()
	}
	s, err := Start(m, kind, addr)
	if err != nil {
		return err
	}
	fmt.Printf("ready %s %d\n", s.Addr, s.ReadPool)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		switch {
		case len(f) == 1 && f[0] == "gc":
			debug.FreeOSMemory() // a collection, then the freed pages back to the kernel
			fmt.Println("collected")
		case len(f) == 1 && f[0] == "heap":
			live := liveHeap()
			if os.Getenv("PEERS_MEMSTATS") != "" {
				printMemStats(kind)
			}
			if path := os.Getenv("PEERS_HEAPPROFILE"); path != "" {
				if err := writeHeapProfile(path); err != nil {
					return errors.Join(err, s.Stop())
				}
			}
			// The answer comes last: the profile's file is closed by then,
			// so that the parent's count of this process's open files,
			// taken after it, holds connections only.
			fmt.Printf("heap %d\n", live)
		case len(f) == 2 && f[0] == "broadcast" && s.Broadcast != nil:
			size, err := strconv.Atoi(f[1])
			if err == nil {
				err = s.Broadcast(size)
			}
			if err != nil {
				return errors.Join(fmt.Errorf("peers: serve child: broadcast: %w", err), s.Stop())
			}
			fmt.Println("broadcasted")
		default:
			return errors.Join(fmt.Errorf("peers: serve child: unknown command %q", in.Text()), s.Stop())
		}
	}
	return errors.Join(in.Err(), s.Stop())
}

// dialChild is the dial child.
func dialChild(m Mode, addr string, sources []netip.Addr) error {
	var clients []*Client
	defer func() { CloseAll(clients) }()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 1 && f[0] == "recv" {
			recvAll(clients)
			continue
		}
		if len(f) != 2 || f[0] != "dial" {
			return fmt.Errorf("peers: dial child: unknown command %q", in.Text())
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 0 {
			return fmt.Errorf("peers: dial child: bad count %q", f[1])
		}
		more, err := DialMany(m, addr, n, sources)
		if err != nil {
			return err
		}
		clients = append(clients, more...)
		fmt.Printf("dialed %d\n", len(clients))
	}
	return in.Err()
}

// Proc is a child process started by StartChild: the parent's side of the
// line protocol.
type Proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// lines carries the child's protocol lines (those that start with one
	// of protocolLines), in order; closed when its standard output ends.
	lines chan string
	// eof is closed when the reader of the child's standard output has
	// ended (the child exited, or closed its standard output).
	eof chan struct{}
	// stopOnce makes Stop idempotent; stopErr is its result.
	stopOnce sync.Once
	stopErr  error
}

// StartChild runs exe (a program that hands its arguments to RunChild)
// with args and env added to the environment.
//
// With PEERS_SERVER_CPUS set (a CPU list as taskset(1) takes it, such as
// "1"), a server child ("serve") runs pinned to those CPUs, through
// taskset, so that its Go runtime sizes GOMAXPROCS (and a blitz runtime
// its workers) to them from the start; run peerbench itself under
// taskset on the other CPUs to keep the load off the server's.
func StartChild(exe string, env []string, args ...string) (*Proc, error) {
	cmd := exec.Command(exe, args...)
	if cpus := os.Getenv("PEERS_SERVER_CPUS"); cpus != "" && len(args) > 0 && args[0] == "serve" {
		cmd = exec.Command("taskset", append([]string{"-c", cpus, exe}, args...)...)
	}
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		in.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		in.Close()
		return nil, err
	}
	p := &Proc{cmd: cmd, stdin: in, lines: make(chan string, 16), eof: make(chan struct{})}
	go p.read(out)
	return p, nil
}

// read passes the child's protocol lines to p.lines until its standard
// output ends; some peers log to standard output, so other lines are
// skipped.
func (p *Proc) read(out io.Reader) {
	defer close(p.eof)
	defer close(p.lines)
	r := bufio.NewScanner(out)
	for r.Scan() {
		line := strings.TrimSpace(r.Text())
		for _, prefix := range protocolLines {
			if strings.HasPrefix(line, prefix) {
				p.lines <- line
				break
			}
		}
	}
	_, _ = io.Copy(io.Discard, out)
}

// Pid is the child's process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Await returns the rest of the child's next line that starts with
// prefix, or an error if the child's output ends first (Stop then tells
// how it exited), another protocol line comes, or ctx ends.
func (p *Proc) Await(ctx context.Context, prefix string) (string, error) {
	select {
	case line, ok := <-p.lines:
		if !ok {
			return "", fmt.Errorf("peers: child %d ended before saying %q", p.Pid(), prefix)
		}
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok {
			return "", fmt.Errorf("peers: child %d said %q, want %q", p.Pid(), line, prefix)
		}
		return rest, nil
	case <-ctx.Done():
		return "", fmt.Errorf("peers: child %d, waiting for %q: %w", p.Pid(), prefix, ctx.Err())
	}
}

// Send writes line to the child's standard input.
func (p *Proc) Send(line string) error {
	_, err := io.WriteString(p.stdin, line+"\n")
	return err
}

// Stop closes the child's standard input, waits for it to exit (killing it
// after 30s) and reaps it. It returns the child's exit error, if any; later
// calls return the same.
func (p *Proc) Stop() error {
	p.stopOnce.Do(func() {
		p.stdin.Close()
		var killed error
		select {
		case <-p.eof:
		case <-time.After(stopTimeout):
			killed = fmt.Errorf("peers: child %d did not exit %v after its input closed; killed", p.Pid(), stopTimeout)
			_ = p.cmd.Process.Kill()
		}
		// Drain what read has not passed on, so that it reaches EOF.
		go func() {
			for range p.lines {
			}
		}()
		<-p.eof
		p.stopErr = errors.Join(killed, p.cmd.Wait())
	})
	return p.stopErr
}

// StartServer runs a serve child of mode m and kind on addr and waits
// for it to listen; the server's Addr and ReadPool are returned beside it
// (its Stop is the child's).
func StartServer(ctx context.Context, exe string, env []string, m Mode, kind, addr string) (*Proc, Server, error) {
	p, err := StartChild(exe, env, "serve", "-mode", string(m), "-kind", kind, "-addr", addr)
	if err != nil {
		return nil, Server{}, err
	}
	line, err := p.Await(ctx, "ready ")
	if err != nil {
		return nil, Server{}, errors.Join(fmt.Errorf("peers: %s server did not start: %w", kind, err), p.Stop())
	}
	s := Server{Stop: p.Stop}
	f := strings.Fields(line)
	if len(f) == 2 {
		s.Addr = f[0]
		s.ReadPool, err = strconv.ParseInt(f[1], 10, 64)
	}
	if len(f) != 2 || err != nil {
		return nil, Server{}, errors.Join(fmt.Errorf("peers: %s server said %q, want \"ready ADDR READPOOL\"", kind, "ready "+line), p.Stop())
	}
	return p, s, nil
}

// printMemStats writes the Go runtime's memory figures to standard
// error (PEERS_MEMSTATS set): where a server's resident memory goes
// besides its live heap.
func printMemStats(kind string) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(os.Stderr, "memstats %s: heap alloc %d, heap in use %d, heap idle %d (released %d), stacks %d, mspan %d, mcache %d, gc meta %d, other %d, buckhash %d, sys %d; allocated in all %d bytes in %d objects, %d collections\n",
		kind, ms.HeapAlloc, ms.HeapInuse, ms.HeapIdle, ms.HeapReleased, ms.StackSys, ms.MSpanInuse, ms.MCacheInuse, ms.GCSys, ms.OtherSys, ms.BuckHashSys, ms.Sys, ms.TotalAlloc, ms.Mallocs, ms.NumGC)
}

// writeHeapProfile writes the heap profile as of the last collection to
// path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(pprof.Lookup("heap").WriteTo(f, 0), f.Close())
}

// liveHeap is the live heap and goroutine stacks after two collections
// (the second empties the sync.Pools the first moved aside).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc + ms.StackInuse
}

// recvAll starts reading one message on every client, prints
// "listening", and in the background, once every client has its message,
// "received UNIXNANO" with the time of the last arrival (or the first
// error).
func recvAll(clients []*Client) {
	var last atomic.Int64
	errs := make(chan error, len(clients))
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.ReadMessage(); err != nil {
				errs <- err
				return
			}
			now := time.Now().UnixNano()
			for {
				old := last.Load()
				if now <= old || last.CompareAndSwap(old, now) {
					break
				}
			}
		}()
	}
	fmt.Println("listening")
	go func() {
		wg.Wait()
		select {
		case err := <-errs:
			fmt.Fprintln(os.Stderr, "peers: dial child: recv:", err)
			fmt.Println("received 0")
		default:
			fmt.Printf("received %d\n", last.Load())
		}
	}()
}
