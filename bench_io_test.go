package blitz_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// ioBenchBackends are the runtime backends the I/O benchmarks compare with
// goroutines over net: the ones this platform has.
func ioBenchBackends(b *testing.B) []string {
	var names []string
	// The sub-benchmarks are named after the backends: "uring", "epoll",
	// "kqueue", "iocp" (blitz.BackendURing, ...).
	for _, n := range []string{"uring", "epoll", "kqueue", "iocp"} {
		if rt, err := blitz.New(blitz.Config{Workers: 1, Backend: n}); err == nil {
			_ = rt.Shutdown(context.Background())
			names = append(names, n)
		}
	}
	return names
}

// echoClientTask makes rounds round trips of a 64-byte message on its own
// connection: the client side of BenchmarkTCPEcho as a task.
type echoClientTask struct {
	s        *blitz.TCPStream
	msg, buf [64]byte
	rounds   int
	got      int
	state    int
	wr       *blitz.WriteAllFuture
	rd       *blitz.ReadFuture
}

func (c *echoClientTask) Poll(cx *future.Context) (error, bool) {
	for c.rounds > 0 {
		switch c.state {
		case 0:
			c.wr = c.s.WriteAll(c.msg[:])
			c.state = 1
		case 1:
			r, ok := c.wr.Poll(cx)
			if !ok {
				return nil, false
			}
			if r.Err != nil {
				return r.Err, true
			}
			c.got = 0
			c.state = 2
		case 2:
			c.rd = c.s.Read(c.buf[c.got:])
			c.state = 3
		case 3:
			r, ok := c.rd.Poll(cx)
			if !ok {
				return nil, false
			}
			if r.Err != nil {
				return r.Err, true
			}
			c.got += r.Value
			c.state = 2
			if c.got == len(c.buf) {
				c.rounds--
				c.state = 0
			}
		}
	}
	_ = c.s.Close()
	return nil, true
}

// BenchmarkTCPEcho: 64 connections over loopback, each making its share of
// the b.N round trips of 64 bytes (10^4 each at b.N = 640000); ns/op is
// the time of one round trip across all connections, "rt/s" the round
// trips per second. On the runtime, both ends are tasks (the server is
// examples/echo's kind of task); the baseline is goroutine-per-connection
// net at both ends.
func BenchmarkTCPEcho(b *testing.B) {
	const conns = 64
	for _, name := range ioBenchBackends(b) {
		b.Run(name, func(b *testing.B) {
			rt := newBenchRuntime(b, blitz.Config{Backend: name})
			h := rt.Handle()
			l, err := blitz.ListenTCP(h, "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			server := blitz.SpawnOn(h, future.Future[int](&acceptLoop{l: l}))
			clients := make([]*echoClientTask, conns)
			for i := range clients {
				r, err := blitz.BlockOn(context.Background(), h, future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(h, l.AddrPort().String(), time.Second)))
				if err == nil {
					err = r.Err
				}
				if err != nil {
					b.Fatal(err)
				}
				_ = r.Value.SetNoDelay(true)
				clients[i] = &echoClientTask{s: r.Value, rounds: share(b.N, conns, i)}
			}
			b.ResetTimer()
			start := time.Now()
			hs := make([]blitz.JoinHandle[error], conns)
			for i, c := range clients {
				hs[i] = blitz.SpawnOn(h, future.Future[error](c))
			}
			for _, jh := range hs {
				if err, werr := jh.Wait(context.Background()); err != nil || werr != nil {
					b.Fatal(err, werr)
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "rt/s")
			st := rt.Stats()
			b.ReportMetric(float64(st.Parked)/float64(b.N), "parks/rt")
			_ = l.Close()
			_, _ = server.Wait(context.Background())
		})
	}
	b.Run("netGoroutines", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					buf := make([]byte, 64)
					for {
						n, err := c.Read(buf)
						if err != nil {
							return
						}
						if _, err := c.Write(buf[:n]); err != nil {
							return
						}
					}
				}()
			}
		}()
		cs := make([]net.Conn, conns)
		for i := range cs {
			if cs[i], err = net.Dial("tcp", ln.Addr().String()); err != nil {
				b.Fatal(err)
			}
		}
		b.ResetTimer()
		start := time.Now()
		var wg sync.WaitGroup
		for i, c := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				msg, buf := make([]byte, 64), make([]byte, 64)
				for range share(b.N, conns, i) {
					if _, err := c.Write(msg); err != nil {
						b.Error(err)
						return
					}
					if _, err := io.ReadFull(c, buf); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		b.StopTimer()
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "rt/s")
	})
}

// share is connection i's part of n operations split over k connections.
func share(n, k, i int) int {
	s := n / k
	if i < n%k {
		s++
	}
	return s
}

// idleConns is the number of connections BenchmarkIdleConnMemory holds.
func idleConns() int {
	if s := os.Getenv("BLITZ_IDLE_CONNS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	if testing.Short() {
		return 500
	}
	// 10^4, or what the descriptor limit allows (the server holds one per
	// connection, the client process another).
	n := 10_000
	if l := fdLimit(); l > 0 && l-256 < n {
		n = max(l-256, 100)
	}
	return n
}

// idlePooled and idleBuffered are a server connection's task: one pending
// read that never completes (the peer never writes), pooled (no buffer
// held while it waits) or into a 4 KiB buffer of its own, as the goroutine
// side's. armed counts the reads in flight.
type idlePooled struct {
	s       *blitz.TCPStream
	rp      *blitz.ReadPooledFuture
	started bool
	armed   *atomic.Int64
}

func (r *idlePooled) Poll(cx *future.Context) (struct{}, bool) {
	if !r.started {
		r.started = true
		r.rp = r.s.ReadPooled()
		defer r.armed.Add(1)
	}
	res, ok := r.rp.Poll(cx)
	if ok && res.Err == nil {
		res.Value.Release()
	}
	return struct{}{}, ok
}

type idleBuffered struct {
	s       *blitz.TCPStream
	buf     []byte
	rd      *blitz.ReadFuture
	started bool
	armed   *atomic.Int64
}

func (r *idleBuffered) Poll(cx *future.Context) (struct{}, bool) {
	if !r.started {
		r.started = true
		r.rd = r.s.Read(r.buf)
		defer r.armed.Add(1)
	}
	_, ok := r.rd.Poll(cx)
	return struct{}{}, ok
}

// idleAcceptor accepts n connections and spawns an idleReader for each.
type idleAcceptor struct {
	l       *blitz.TCPListener
	n       int
	pooled  bool
	acc     *blitz.AcceptFuture[*blitz.TCPStream]
	waiting bool
	armed   *atomic.Int64
	streams []*blitz.TCPStream
}

func (a *idleAcceptor) Poll(cx *future.Context) ([]*blitz.TCPStream, bool) {
	for len(a.streams) < a.n {
		if !a.waiting {
			a.acc = a.l.Accept()
			a.waiting = true
		}
		r, ok := a.acc.Poll(cx)
		if !ok {
			return nil, false
		}
		a.waiting = false
		if r.Err != nil {
			return a.streams, true
		}
		a.streams = append(a.streams, r.Value)
		var task future.Future[struct{}] = &idlePooled{s: r.Value, armed: a.armed}
		if !a.pooled {
			task = &idleBuffered{s: r.Value, buf: make([]byte, 4096), armed: a.armed}
		}
		blitz.Spawn(cx, task).Detach()
	}
	return a.streams, true
}

// BenchmarkIdleConnMemory holds 10^4 open, idle connections, each with a
// read of up to 4 KiB pending, and reports the server side's memory per
// connection (heap plus goroutine stacks, after a GC) as bytes/conn. The
// clients live in a child process (this test binary, re-executed), so that
// neither their memory nor their descriptors count. On the runtime the
// reads are pooled (ReadPooled: no buffer is held while waiting), and, as
// "<backend>Buffer4K", plain reads into a 4 KiB buffer each; a goroutine
// blocked in net.Conn.Read must hold its 4 KiB buffer.
func BenchmarkIdleConnMemory(b *testing.B) {
	n := idleConns()
	for _, bk := range ioBenchBackends(b) {
		for _, pooled := range []bool{true, false} {
			name := bk
			if !pooled {
				name += "Buffer4K"
			}
			b.Run(name, func(b *testing.B) { benchIdleRuntime(b, bk, n, pooled) })
		}
	}
	b.Run("netGoroutines", func(b *testing.B) {
		var per float64
		for range b.N {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			var armed atomic.Int64
			var conns []net.Conn
			var mu sync.Mutex
			before := liveBytes()
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					mu.Lock()
					conns = append(conns, c)
					mu.Unlock()
					go func() {
						buf := make([]byte, 4096)
						armed.Add(1)
						_, _ = c.Read(buf)
					}()
				}
			}()
			stop := startIdleClients(b, ln.Addr().String(), n)
			for armed.Load() < int64(n) {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(10 * time.Millisecond) // let the last goroutines block in Read
			per = float64(liveBytes()-before) / float64(n)
			stop()
			ln.Close()
			mu.Lock()
			for _, c := range conns {
				c.Close()
			}
			mu.Unlock()
		}
		b.ReportMetric(per, "bytes/conn")
	})
}

// benchIdleRuntime is BenchmarkIdleConnMemory on the runtime with backend bk.
func benchIdleRuntime(b *testing.B, bk string, n int, pooled bool) {
	var per float64
	for range b.N {
		rt := newBenchRuntime(b, blitz.Config{Backend: bk})
		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		if pooled {
			// The pool is the runtime's fixed cost (4 MiB by default), not
			// the connections': take it before the baseline.
			if err := rt.PrepareReadPool(); err != nil {
				b.Fatal(err)
			}
		}
		var armed atomic.Int64
		before := liveBytes()
		acc := blitz.SpawnOn(rt.Handle(), future.Future[[]*blitz.TCPStream](&idleAcceptor{l: l, n: n, pooled: pooled, armed: &armed}))
		stop := startIdleClients(b, l.AddrPort().String(), n)
		streams, err := acc.Wait(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		for armed.Load() < int64(n) {
			time.Sleep(time.Millisecond)
		}
		per = float64(liveBytes()-before) / float64(n)
		stop()
		for _, s := range streams {
			_ = s.Close()
		}
		_ = l.Close()
		_ = rt.Shutdown(context.Background())
	}
	b.ReportMetric(per, "bytes/conn")
}

// startIdleClients starts a child process that opens n connections to addr
// and holds them until stop is called.
func startIdleClients(b *testing.B, addr string, n int) (stop func()) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestIdleClientsChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "BLITZ_IDLE_CLIENTS_ADDR="+addr, "BLITZ_IDLE_CLIENTS_N="+strconv.Itoa(n))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if sc.Text() == "ready" {
			break
		}
	}
	return func() {
		stdin.Close()
		_ = cmd.Wait()
	}
}

// TestIdleClientsChild is the client process of BenchmarkIdleConnMemory; it
// does nothing unless the benchmark started it.
func TestIdleClientsChild(t *testing.T) {
	addr := os.Getenv("BLITZ_IDLE_CLIENTS_ADDR")
	if addr == "" {
		t.Skip("the client process of BenchmarkIdleConnMemory")
	}
	n, _ := strconv.Atoi(os.Getenv("BLITZ_IDLE_CLIENTS_N"))
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "idle client:", err)
			os.Exit(1)
		}
		conns = append(conns, c)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin) // until the benchmark closes stdin
	for _, c := range conns {
		c.Close()
	}
}

// BenchmarkHTTPAdapter serves a small net/http handler through NetListener
// (blitz) and through Go's own listener (netHTTP); the clients are the same
// keep-alive net/http clients, 8 concurrent per core. ns/op is one request.
func BenchmarkHTTPAdapter(b *testing.B) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("hello"))
	})
	run := func(b *testing.B, ln net.Listener) {
		srv := &http.Server{Handler: handler}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		tr := &http.Transport{MaxIdleConnsPerHost: 64}
		defer tr.CloseIdleConnections()
		client := &http.Client{Transport: tr}
		url := "http://" + ln.Addr().String() + "/"
		b.SetParallelism(8)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				resp, err := client.Get(url)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	b.Run("blitz", func(b *testing.B) {
		rt := newBenchRuntime(b, blitz.Config{})
		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		run(b, blitz.NetListener(l))
	})
	b.Run("netHTTP", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		run(b, ln)
	})
}
