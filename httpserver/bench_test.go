package httpserver_test

// Benchmarks against net/http, with the load generator (or, for memory,
// the server) in a child process: the test binary re-executed with
// childEnv set. They are Benchmarks or tests behind an environment
// variable, so the normal test run skips them.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	goruntime "runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/httpserver"
)

const childEnv = "HTTPSERVER_BENCH_CHILD"

var (
	helloBody = []byte("Hello, World!")
	body4K    = bytes.Repeat([]byte("x"), 4096)
)

// benchHandler is the handler both servers run.
func benchHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/4k" {
			_, _ = w.Write(body4K)
			return
		}
		_, _ = w.Write(helloBody)
	})
}

// benchTaskHandler is benchHandler as a TaskHandler.
func benchTaskHandler() httpserver.TaskHandler {
	h := benchHandler()
	return httpserver.TaskHandlerFunc(func(w http.ResponseWriter, r *http.Request) future.Future[struct{}] {
		h.ServeHTTP(w, r)
		return nil
	})
}

// benchServer starts one of the servers under test and returns its
// address and a stop function.
func benchServer(tb testing.TB, kind string) (string, func()) {
	switch kind {
	case "blitz", "blitz-epoll", "blitz-task":
		cfg := blitz.Config{}
		if kind == "blitz-epoll" {
			cfg.Backend = blitz.BackendEpoll
		}
		rt, err := blitz.New(cfg)
		if err != nil {
			tb.Fatal(err)
		}
		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		srv := &httpserver.Server{Handler: benchHandler()}
		if d, err := time.ParseDuration(os.Getenv("RSS_IDLETIMEOUT")); err == nil {
			srv.IdleTimeout = d // the idle connections then hold a timer each
		}
		if kind == "blitz-task" {
			srv.TaskHandler = benchTaskHandler()
		}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(rt.Handle(), l) }()
		return l.AddrPort().String(), func() {
			_ = srv.Close()
			<-done
			_ = rt.Shutdown(context.Background())
		}
	case "nethttp":
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		srv := &http.Server{Handler: benchHandler()}
		if d, err := time.ParseDuration(os.Getenv("RSS_IDLETIMEOUT")); err == nil {
			srv.IdleTimeout = d
		}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(l) }()
		return l.Addr().String(), func() {
			_ = srv.Close()
			<-done
		}
	}
	tb.Fatalf("unknown server %q", kind)
	return "", nil
}

// BenchmarkServe measures requests per second of keep-alive connections
// (one request in flight each) driven by a load generator in a child
// process, this server against net/http on Go's listener with the same
// handler. ns/op is the time per request over all connections;
// server-cpu-ns/req the CPU time the server's process (this one) used per
// request, a figure less sensitive than req/s to other load on the
// machine. blitz
// runs on the runtime's default backend (io_uring where the kernel
// allows it), blitz-epoll on epoll, blitz-task answers with a
// TaskHandler (no goroutine) on the default backend.
//
//	go test -run XXX -bench Serve -count 6 .
func BenchmarkServe(b *testing.B) {
	for _, path := range []string{"/hello", "/4k"} {
		for _, conns := range []int{1, 64} {
			for _, kind := range []string{"blitz", "blitz-epoll", "blitz-task", "nethttp"} {
				b.Run(fmt.Sprintf("%s/conns=%d/%s", strings.TrimPrefix(path, "/"), conns, kind), func(b *testing.B) {
					b.ReportAllocs() // the server's alone: the load generator is another process
					addr, stop := benchServer(b, kind)
					defer stop()
					lg := startLoadgen(b, addr, conns, path)
					defer lg.close()
					lg.run(b, 1000) // warm up
					cpu0, cpuOK := processCPU()
					b.ResetTimer()
					elapsed := lg.run(b, b.N)
					b.StopTimer()
					b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
					if cpu1, ok := processCPU(); ok && cpuOK {
						b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "server-cpu-ns/req")
					}
				})
			}
		}
	}
}

// loadgen is the parent's handle on a load generator child.
type loadgen struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startLoadgen(tb testing.TB, addr string, conns int, path string) *loadgen {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=loadgen", "LOADGEN_ADDR="+addr, "LOADGEN_CONNS="+strconv.Itoa(conns), "LOADGEN_PATH="+path)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	lg := &loadgen{cmd: cmd, in: in, out: bufio.NewReader(out)}
	if line, err := lg.out.ReadString('\n'); err != nil || line != "ready\n" {
		lg.close()
		tb.Fatalf("load generator: %q, %v", line, err)
	}
	return lg
}

// run has the child make n requests and returns the time they took.
func (lg *loadgen) run(tb testing.TB, n int) time.Duration {
	fmt.Fprintf(lg.in, "run %d\n", n)
	line, err := lg.out.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "done ") {
		tb.Fatalf("load generator: %q, %v", line, err)
	}
	ns, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "done ")), 10, 64)
	return time.Duration(ns)
}

func (lg *loadgen) close() {
	_ = lg.in.Close()
	_ = lg.cmd.Wait()
}

// loadgenMain is the load generator child: it opens its keep-alive
// connections, says "ready", then for each "run N" line makes N requests
// spread over them (one in flight per connection) and answers "done
// <nanoseconds>".
func loadgenMain() int {
	addr, path := os.Getenv("LOADGEN_ADDR"), os.Getenv("LOADGEN_PATH")
	conns, _ := strconv.Atoi(os.Getenv("LOADGEN_CONNS"))
	type client struct {
		c  net.Conn
		br *bufio.Reader
	}
	clients := make([]client, conns)
	for i := range clients {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			return 1
		}
		clients[i] = client{c, bufio.NewReaderSize(c, 16<<10)}
	}
	req := []byte("GET " + path + " HTTP/1.1\r\nHost: bench\r\nUser-Agent: loadgen\r\n\r\n")
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "run "))
		if err != nil {
			return 1
		}
		var left atomic.Int64
		left.Store(int64(n))
		var wg sync.WaitGroup
		var failed atomic.Value
		start := time.Now()
		for _, cl := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for left.Add(-1) >= 0 {
					if _, err := cl.c.Write(req); err != nil {
						failed.Store(err)
						return
					}
					if err := readResponse(cl.br); err != nil {
						failed.Store(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		el := time.Since(start)
		if err := failed.Load(); err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			return 1
		}
		fmt.Printf("done %d\n", el.Nanoseconds())
	}
	return 0
}

// readResponse reads one response (Content-Length or chunked) and checks
// its status.
func readResponse(br *bufio.Reader) error {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(line, []byte("HTTP/1.1 200 ")) {
		return fmt.Errorf("status line %q", line)
	}
	length, chunked := -1, false
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok {
			v = bytes.TrimSpace(v)
			switch {
			case bytes.EqualFold(k, []byte("Content-Length")):
				length, _ = strconv.Atoi(string(v))
			case bytes.EqualFold(k, []byte("Transfer-Encoding")):
				chunked = bytes.EqualFold(v, []byte("chunked"))
			}
		}
	}
	if !chunked {
		if length < 0 {
			return errors.New("no length")
		}
		_, err = br.Discard(length)
		return err
	}
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil {
			return err
		}
		if _, err := br.Discard(int(size) + 2); err != nil {
			return err
		}
		if size == 0 {
			return nil
		}
	}
}

// TestIdleConnRSS measures the resident memory per idle keep-alive
// connection of both servers: each runs in a child process, the parent
// opens HTTPSERVER_RSS connections (10000 for instance) that each make one
// request, and the child reports its VmRSS growth once they are idle.
// Skipped unless HTTPSERVER_RSS is set.
//
//	HTTPSERVER_RSS=10000 go test -run TestIdleConnRSS -v .
func TestIdleConnRSS(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("HTTPSERVER_RSS"))
	if n <= 0 {
		t.Skip("set HTTPSERVER_RSS to the number of connections")
	}
	for _, kind := range []string{"blitz", "nethttp"} {
		t.Run(kind, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"=server", "RSS_KIND="+kind)
			cmd.Stderr = os.Stderr
			in, _ := cmd.StdinPipe()
			outp, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = in.Close(); _ = cmd.Wait() }()
			out := bufio.NewReader(outp)
			addr, err := out.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			addr = strings.TrimSpace(addr)
			conns := make([]net.Conn, 0, n)
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			req := []byte("GET /hello HTTP/1.1\r\nHost: rss\r\n\r\n")
			for i := 0; i < n; i++ {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatalf("connection %d: %v", i, err)
				}
				conns = append(conns, c)
				if _, err := c.Write(req); err != nil {
					t.Fatal(err)
				}
				if err := readResponse(bufio.NewReaderSize(c, 512)); err != nil {
					t.Fatal(err)
				}
			}
			fmt.Fprintln(in, "measure")
			line, err := out.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			var base, now, heapBase, heapNow, gBase, gNow int64
			fmt.Sscan(line, &base, &now, &heapBase, &heapNow, &gBase, &gNow)
			t.Logf("%s: %d idle connections: VmRSS %d -> %d KiB: %.0f bytes/conn; heap in use %.0f bytes/conn; goroutines %d -> %d",
				kind, n, base, now, float64(now-base)*1024/float64(n), float64(heapNow-heapBase)/float64(n), gBase, gNow)
		})
	}
}

// rssServerMain is the server child of TestIdleConnRSS: it prints its
// address, and at "measure" its VmRSS (KiB) before and after, its heap
// in use before and after, and its goroutines before and after. With
// RSS_HEAPPROFILE set, it writes a heap profile there once the connections
// are idle; RSS_IDLETIMEOUT (a duration) sets both servers' IdleTimeout.
func rssServerMain() int {
	addr, stop := benchServer(nopTB{}, os.Getenv("RSS_KIND"))
	defer stop()
	settle := func() (int64, int64, int64) {
		goruntime.GC()
		debug.FreeOSMemory()
		var ms goruntime.MemStats
		goruntime.ReadMemStats(&ms)
		return vmRSS(), int64(ms.HeapInuse), int64(goruntime.NumGoroutine())
	}
	// A first request warms up the server's pools and code.
	if c, err := net.Dial("tcp", addr); err == nil {
		_, _ = c.Write([]byte("GET /hello HTTP/1.1\r\nHost: rss\r\nConnection: close\r\n\r\n"))
		_, _ = io.Copy(io.Discard, c)
		c.Close()
	}
	time.Sleep(100 * time.Millisecond)
	rss0, heap0, g0 := settle()
	fmt.Println(addr)
	sc := bufio.NewScanner(os.Stdin)
	if !sc.Scan() {
		return 1
	}
	time.Sleep(200 * time.Millisecond)
	rss1, heap1, g1 := settle()
	if name := os.Getenv("RSS_HEAPPROFILE"); name != "" {
		if f, err := os.Create(name); err == nil {
			_ = pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		}
	}
	fmt.Println(rss0, rss1, heap0, heap1, g0, g1)
	sc.Scan() // until the parent closes stdin
	return 0
}

// vmRSS reads VmRSS (KiB) from /proc/self/status.
func vmRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			v, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return v
		}
	}
	return -1
}

// nopTB is the testing.TB of a child process: a failure ends it.
type nopTB struct{ testing.TB }

func (nopTB) Fatal(args ...any) {
	fmt.Fprintln(os.Stderr, args...)
	os.Exit(1)
}

func (nopTB) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}
