package blitz_test

// TestIdleConnRSS: the process memory (VmRSS) an idle, used connection costs
// a server, measured with the server and its clients in separate processes.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	goruntime "runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// TestIdleConnRSS measures what an idle connection that has been used costs
// a server in process memory: each connection makes one 64-byte round trip,
// then waits for data that never comes, and the server's VmRSS is read
// (after a GC and a return of free memory to the system, the same for every
// server). Servers: the runtime on io_uring and on epoll, with handlers
// written as the echo example's (see idleEcho), and Go's net package with a
// goroutine per connection and a 4 KiB buffer. Server and clients are child
// processes (this binary, re-executed), so neither counts the other's
// memory or descriptors.
//
// It runs only with BLITZ_IDLECONN_RSS set to the connection counts to
// measure ("10000,19000"): it takes a minute, and tens of thousands of
// descriptors; a count the descriptor limit cannot hold is skipped, with
// the reason. The figures are per connection: "total" is the growth from
// the server's start (listening, its buffer pool made) over N connections;
// "marginal" is the growth between N/2 and N connections over N/2, which
// leaves out fixed costs that the first connections touch (the read pool's
// pages, the first slab chunks). BLITZ_IDLECONN_MODES picks the servers
// (default: every one) and BLITZ_IDLECONN_PROF a directory for the servers'
// heap profiles.
func TestIdleConnRSS(t *testing.T) {
	spec := os.Getenv("BLITZ_IDLECONN_RSS")
	if spec == "" {
		t.Skip("set BLITZ_IDLECONN_RSS=10000 (connection counts, comma-separated) to measure")
	}
	modes := []string{"uring/read", "uring/echo4k", "epoll/read", "epoll/echo4k", "net/goroutine"}
	if m := os.Getenv("BLITZ_IDLECONN_MODES"); m != "" {
		modes = strings.Split(m, ",")
	}
	ran := false
	for _, ns := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(ns)
		if err != nil || n < 2 {
			t.Fatalf("BLITZ_IDLECONN_RSS: bad count %q", ns)
		}
		// Each process holds a descriptor per connection. The soft limit
		// is raised to the hard one; beyond that only CAP_SYS_RESOURCE
		// helps (a network namespace would lift the port limit, not this).
		var l syscall.Rlimit
		if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && uint64(n)+128 > l.Max {
			t.Logf("n=%d skipped: RLIMIT_NOFILE's hard limit is %d and this process cannot raise it", n, l.Max)
			continue
		}
		ran = true
		for _, mode := range modes {
			res, err := runIdleConnRSS(mode, n)
			if err != nil {
				t.Errorf("%s n=%d: %v", mode, n, err)
				continue
			}
			t.Logf("%-14s n=%-6d %s", mode, n, res)
		}
	}
	if !ran {
		t.Skip("no connection count fits the descriptor limit")
	}
}

// runIdleConnRSS runs one server child and one client child for n
// connections and returns the server's report.
func runIdleConnRSS(mode string, n int) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv, err := startIdleChild(ctx, "TestIdleConnServerChild", "BLITZ_IDLECONN_SERVER="+mode, "BLITZ_IDLECONN_N="+strconv.Itoa(n))
	if err != nil {
		return "", err
	}
	defer srv.stop()
	addr, err := srv.expect("listening ")
	if err != nil {
		return "", err
	}
	cli, err := startIdleChild(ctx, "TestIdleConnClientChild", "BLITZ_IDLECONN_CLIENT="+addr)
	if err != nil {
		return "", err
	}
	defer cli.stop()
	// Two halves: the server measures after each.
	for _, k := range []int{n / 2, n - n/2} {
		if err := cli.send(fmt.Sprintf("open %d", k)); err != nil {
			return "", err
		}
		if _, err := cli.expect("opened"); err != nil {
			return "", err
		}
		if err := srv.send("measure"); err != nil {
			return "", err
		}
		if _, err := srv.expect("measured"); err != nil {
			return "", err
		}
	}
	if err := srv.send("report"); err != nil {
		return "", err
	}
	return srv.expect("report ")
}

// idleChild is a child process spoken to by lines on stdin and stdout.
type idleChild struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

func startIdleChild(ctx context.Context, test string, env ...string) (*idleChild, error) {
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
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
	c := &idleChild{cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	return c, nil
}

func (c *idleChild) send(line string) error {
	_, err := fmt.Fprintln(c.in, line)
	return err
}

// expect returns the rest of the first line starting with prefix, failing
// if the child ends first or takes more than two minutes.
func (c *idleChild) expect(prefix string) (string, error) {
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				return "", fmt.Errorf("child ended before %q", prefix)
			}
			if rest, found := strings.CutPrefix(l, prefix); found {
				return rest, nil
			}
		case <-timeout:
			return "", fmt.Errorf("no %q from the child in 2 minutes", prefix)
		}
	}
}

func (c *idleChild) stop() {
	_ = c.in.Close()
	done := make(chan struct{})
	go func() {
		for range c.lines {
		}
		_ = c.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// raiseFDLimit raises the soft descriptor limit to the hard one.
func raiseFDLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

// vmRSS returns the process's resident set in bytes.
func vmRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// idleSample is the server's memory at one point.
type idleSample struct {
	rss, heap, live, stack int64
	goroutines             int
}

func sampleIdle() idleSample {
	goruntime.GC()
	debug.FreeOSMemory()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return idleSample{rss: vmRSS(), heap: int64(ms.HeapInuse), live: int64(ms.HeapAlloc), stack: int64(ms.StackInuse), goroutines: goruntime.NumGoroutine()}
}

// TestIdleConnServerChild is TestIdleConnRSS's server process.
func TestIdleConnServerChild(t *testing.T) {
	mode := os.Getenv("BLITZ_IDLECONN_SERVER")
	if mode == "" {
		t.Skip("the server process of TestIdleConnRSS")
	}
	raiseFDLimit()
	prof := os.Getenv("BLITZ_IDLECONN_PROF")
	if prof != "" {
		goruntime.MemProfileRate = 1
	}
	var served atomic.Int64 // round trips done
	var addr string
	var closeAll func()
	kind, variant, _ := strings.Cut(mode, "/")
	if kind == "net" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var conns []net.Conn
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
				go netEcho(c, &served)
			}
		}()
		addr = ln.Addr().String()
		closeAll = func() {
			ln.Close()
			mu.Lock()
			for _, c := range conns {
				c.Close()
			}
			mu.Unlock()
		}
	} else {
		rt, err := blitz.New(blitz.Config{Backend: kind})
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.PrepareReadPool(); err != nil {
			t.Fatal(err)
		}
		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		handler := func(s *blitz.TCPStream) future.Future[error] {
			return newIdleEcho(s, variant, &served)
		}
		srv := blitz.SpawnOn(rt.Handle(), blitz.Serve(l, handler, blitz.ServeConfig{Grace: -1}))
		addr = l.AddrPort().String()
		closeAll = func() {
			_ = l.Close()
			_, _ = srv.Wait(context.Background())
			_ = rt.Shutdown(context.Background())
		}
	}
	base := sampleIdle()
	fmt.Printf("listening %s\n", addr)
	var samples []idleSample
	var counts []int
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		switch sc.Text() {
		case "measure":
			// The client has its round trips back: wait until every
			// handler counted its write and is back in its read.
			target, _ := strconv.Atoi(os.Getenv("BLITZ_IDLECONN_N"))
			if len(counts) == 0 {
				target /= 2
			}
			for deadline := time.Now().Add(time.Minute); served.Load() < int64(target) && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond)
			counts = append(counts, int(served.Load()))
			samples = append(samples, sampleIdle())
			fmt.Println("measured")
		case "report":
			if len(samples) != 2 {
				t.Fatal("report before two samples")
			}
			n, half := counts[1], counts[1]-counts[0]
			a, b := samples[0], samples[1]
			fmt.Printf("report total %6d B/conn  marginal %6d B/conn  (heap %5d, of it live %5d, stacks %5d B/conn marginal; goroutines %d; served %d)\n",
				(b.rss-base.rss)/int64(n), (b.rss-a.rss)/int64(half),
				(b.heap-a.heap)/int64(half), (b.live-a.live)/int64(half), (b.stack-a.stack)/int64(half), b.goroutines, n)
			if prof != "" {
				f, err := os.Create(fmt.Sprintf("%s/heap-%s.pprof", prof, strings.ReplaceAll(mode, "/", "-")))
				if err == nil {
					_ = pprof.Lookup("heap").WriteTo(f, 0)
					f.Close()
				}
			}
		}
	}
	closeAll()
}

// netEcho is the goroutine-per-connection echo of Go's net package.
func netEcho(c net.Conn, served *atomic.Int64) {
	defer c.Close()
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		if _, err := c.Write(buf[:n]); err != nil {
			return
		}
		served.Add(1)
	}
}

// TestIdleConnClientChild is TestIdleConnRSS's client process: on "open K"
// it opens K more connections (from 127.0.0.1 to 127.0.0.8, so that the
// ephemeral ports of one source address do not run out), makes one 64-byte
// round trip on each and answers "opened"; it holds them until stdin ends.
func TestIdleConnClientChild(t *testing.T) {
	addr := os.Getenv("BLITZ_IDLECONN_CLIENT")
	if addr == "" {
		t.Skip("the client process of TestIdleConnRSS")
	}
	raiseFDLimit()
	var conns []net.Conn
	next := 0
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		ks, ok := strings.CutPrefix(sc.Text(), "open ")
		if !ok {
			continue
		}
		k, _ := strconv.Atoi(ks)
		opened := make([]net.Conn, k)
		var wg sync.WaitGroup
		var failed atomic.Value
		var idx atomic.Int64
		for range 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				msg, back := make([]byte, 64), make([]byte, 64)
				for {
					i := int(idx.Add(1) - 1)
					if i >= k {
						return
					}
					src := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+(next+i)%8))}
					c, err := (&net.Dialer{LocalAddr: src, Timeout: 30 * time.Second}).Dial("tcp", addr)
					if err == nil {
						_, err = c.Write(msg)
					}
					if err == nil {
						_, err = io.ReadFull(c, back)
					}
					if err != nil {
						failed.Store(err)
						return
					}
					opened[i] = c
				}
			}()
		}
		wg.Wait()
		if err, _ := failed.Load().(error); err != nil {
			fmt.Fprintln(os.Stderr, "idle client:", err)
			os.Exit(1)
		}
		next += k
		conns = append(conns, opened...)
		fmt.Println("opened")
	}
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
}

// idleEcho is the echo example's handler (examples/echo: echo), written as
// the state machine blitzgen makes of it: the same fields in the same
// order (64 bytes: err, live across no await, is a local of Poll), the
// deferred Close open-coded (a bit in deferBits, run by runDefers),
// reading as the example does (ReadPooled). served counts the round trips,
// where the example's echoed counts the bytes.
type idleEcho struct {
	state     int32
	deferBits uint8
	rp        *blitz.ReadPooledFuture
	wr        *blitz.WriteAllFuture
	s         *blitz.TCPStream
	served    *atomic.Int64
	data      blitz.PooledBuf
}

// newIdleEcho returns the handler of variant: "read" the example's,
// "echo4k" one that reads into a 4 KiB buffer of the connection's own, as
// the example did before pooled reads.
func newIdleEcho(s *blitz.TCPStream, variant string, served *atomic.Int64) future.Future[error] {
	if variant == "echo4k" {
		return &idleEcho4k{s: s, served: served}
	}
	return &idleEcho{s: s, served: served}
}

func (e *idleEcho) Poll(cx *future.Context) (error, bool) {
	var err error // a local of Poll, as blitzgen makes it
	for {
		switch e.state {
		case 0:
			_ = e.s.Close // the defer statement's nil check, as generated
			e.deferBits |= 1
			_ = e.s.SetNoDelay(true)
			e.state = 1
		case 1:
			e.rp = e.s.ReadPooled()
			e.state = 2
		case 2:
			r, ok := e.rp.Poll(cx)
			if !ok {
				return nil, false
			}
			e.rp = nil
			e.data, err = r.Value, r.Err
			if errors.Is(err, io.EOF) {
				e.runDefers()
				return nil, true
			}
			if err != nil {
				e.runDefers()
				return err, true
			}
			e.wr = e.s.WriteAll(e.data.Bytes())
			e.state = 3
		case 3:
			r, ok := e.wr.Poll(cx)
			if !ok {
				return nil, false
			}
			e.wr = nil
			err = r.Err
			e.data.Release()
			if err != nil {
				e.runDefers()
				return err, true
			}
			e.served.Add(1)
			e.state = 1
		}
	}
}

// runDefers runs the deferred Close if it is due.
func (e *idleEcho) runDefers() {
	if e.deferBits&1 != 0 {
		e.deferBits &^= 1
		_ = e.s.Close()
	}
}

// Cancel cancels the future in flight and runs the deferred Close.
func (e *idleEcho) Cancel() {
	if e.rp != nil {
		e.rp.Cancel()
	}
	if e.wr != nil {
		e.wr.Cancel()
	}
	e.runDefers()
}

// idleEcho4k is the echo handler with a 4 KiB read buffer of the
// connection's own.
type idleEcho4k struct {
	state  int
	buf    []byte
	rd     *blitz.ReadFuture
	wr     *blitz.WriteAllFuture
	s      *blitz.TCPStream
	served *atomic.Int64
}

func (e *idleEcho4k) Poll(cx *future.Context) (error, bool) {
	for {
		switch e.state {
		case 0:
			_ = e.s.SetNoDelay(true)
			e.buf = make([]byte, 4096)
			e.state = 1
		case 1:
			e.rd = e.s.Read(e.buf)
			e.state = 2
		case 2:
			r, ok := e.rd.Poll(cx)
			if !ok {
				return nil, false
			}
			e.rd = nil
			if r.Err != nil {
				_ = e.s.Close()
				if errors.Is(r.Err, io.EOF) {
					return nil, true
				}
				return r.Err, true
			}
			e.wr = e.s.WriteAll(e.buf[:r.Value])
			e.state = 3
		case 3:
			r, ok := e.wr.Poll(cx)
			if !ok {
				return nil, false
			}
			e.wr = nil
			if r.Err != nil {
				_ = e.s.Close()
				return r.Err, true
			}
			e.served.Add(1)
			e.state = 1
		}
	}
}

// Cancel closes the connection.
func (e *idleEcho4k) Cancel() {
	if e.rd != nil {
		e.rd.Cancel()
	}
	if e.wr != nil {
		e.wr.Cancel()
	}
	_ = e.s.Close()
}

// TestIdleEchoSize pins the size of the handler TestIdleConnRSS runs, the
// echo example's state machine with a counter (a size class: 64 bytes).
func TestIdleEchoSize(t *testing.T) {
	if n := unsafe.Sizeof(idleEcho{}); n > 64 {
		t.Fatalf("idleEcho is %d bytes, want <= 64 (the echo example's handler as blitzgen makes it)", n)
	}
}
