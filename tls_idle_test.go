package blitz_test

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"os"
	gort "runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// idleSnapshot is what the idle tests measure.
type idleSnapshot struct {
	goroutines int
	rss        int64 // VmRSS in bytes; 0 where /proc is missing
	heap       int64 // HeapInuse + StackInuse
}

// takeIdleSnapshot measures after collecting garbage and returning free
// memory to the system, so that VmRSS counts what is live rather than the
// peak of the connections' set-up.
func takeIdleSnapshot() idleSnapshot {
	gort.GC()
	debug.FreeOSMemory()
	var ms gort.MemStats
	gort.ReadMemStats(&ms)
	return idleSnapshot{goroutines: gort.NumGoroutine(), rss: tlsVmRSS(), heap: int64(ms.HeapInuse + ms.StackInuse)}
}

// tlsVmRSS reads the process's resident set size from /proc, 0 without it.
func tlsVmRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// pingHandler is a task-side TLS server handler: handshake, read "ping",
// write "pong", then wait for the client's end (the idle phase), close.
func pingHandler(s *blitz.TLSStream) future.Future[error] {
	buf := make([]byte, 4)
	return future.Map(tlsChain(
		func() future.Future[error] { return tlsErrOf[struct{}](s.Handshake()) },
		func() future.Future[error] { return tlsErrOf[int](blitz.ReadFull(s, buf)) },
		func() future.Future[error] { return tlsErrOf[int](s.WriteAll([]byte("pong"))) },
		func() future.Future[error] {
			return future.Map(s.Read(buf), func(r future.Result[int]) error {
				if r.Err == io.EOF {
					return nil
				}
				return r.Err
			})
		},
	), func(err error) error {
		_ = s.Close()
		return err
	})
}

// pingClient is a task-side TLS client: dial, handshake, "ping", "pong",
// report ready, then read until the test closes the stream (idle phase).
func pingClient(h blitz.Handle, addr string, cfg *tls.Config, streams chan<- *blitz.TLSStream, ready *atomic.Int32) future.Future[error] {
	var s *blitz.TLSStream
	buf := make([]byte, 4)
	return tlsChain(
		func() future.Future[error] {
			return future.Map(blitz.DialTCP(h, addr, 5*time.Second), func(r future.Result[*blitz.TCPStream]) error {
				if r.Err == nil {
					s = blitz.TLSClient(r.Value, cfg)
					streams <- s
				}
				return r.Err
			})
		},
		func() future.Future[error] { return tlsErrOf[struct{}](s.Handshake()) },
		func() future.Future[error] { return tlsErrOf[int](s.WriteAll([]byte("ping"))) },
		func() future.Future[error] { return tlsErrOf[int](blitz.ReadFull(s, buf)) },
		tlsDo(func() error { ready.Add(1); return nil }),
		func() future.Future[error] {
			// Ends when the test closes the stream.
			return future.Map(s.Read(buf), func(r future.Result[int]) error { return nil })
		},
	)
}

// idleTLS opens n task-side TLS connections to a task-side TLS server of
// rt (both ends in this process), makes one round trip on each, and
// measures the process while all 2n ends wait idle in a read. It returns
// the measurements before the connections and while they are idle, and
// closes them.
func idleTLS(t *testing.T, rt *blitz.Runtime, pki *testPKI, n int) (before, idle idleSnapshot) {
	l, err := blitz.ListenTLS(rt.Handle(), "127.0.0.1:0", pki.serverConfig())
	require.NoError(t, err)
	server := blitz.SpawnOn(rt.Handle(), blitz.Serve(l, pingHandler, blitz.ServeConfig{}))
	addr := l.Addr().String()

	// Warm up: one connection, so that lazily made state (the read pool,
	// crypto tables) is not counted per connection.
	var ready atomic.Int32
	streams := make(chan *blitz.TLSStream, n+1)
	warm := blitz.SpawnOn(rt.Handle(), pingClient(rt.Handle(), addr, pki.clientConfig(), streams, &ready))
	tlsWaitFor(t, func() bool { return ready.Load() == 1 }, "the warm-up connection")
	(<-streams).Close()
	_, err = warm.Wait(testCtx(t))
	require.NoError(t, err)
	ready.Store(0)
	time.Sleep(50 * time.Millisecond)
	before = takeIdleSnapshot()

	clients := make([]blitz.JoinHandle[error], n)
	for i := range clients {
		clients[i] = blitz.SpawnOn(rt.Handle(), pingClient(rt.Handle(), addr, pki.clientConfig(), streams, &ready))
	}
	tlsWaitFor(t, func() bool { return ready.Load() == int32(n) }, "the connections' round trips")
	time.Sleep(50 * time.Millisecond)
	idle = takeIdleSnapshot()

	for i := 0; i < n; i++ {
		(<-streams).Close()
	}
	for _, c := range clients {
		err, werr := c.Wait(testCtx(t))
		require.NoError(t, werr)
		require.NoError(t, err)
	}
	require.NoError(t, l.Close())
	st, err := server.Wait(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, n+1, st.Accepted)
	assert.NoError(t, st.HandlerErr)
	return before, idle
}

// tlsWaitFor polls cond until it holds, failing the test after a while.
func tlsWaitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// An idle TLS connection holds no goroutine: 200 connections (400 TLS
// ends, client and server, all tasks), each after its handshake and one
// round trip, waiting in a read, add only a bounded handful of goroutines
// (none per connection). The memory per idle end is logged.
func TestTLSIdleConnectionsHoldNoGoroutine(t *testing.T) {
	pki, _ := testCerts(t)
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		if !tlsHeavyBackend(cfg) {
			t.Skip("trimmed under -short and -race: the automatic backend runs it")
		}
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		n := 200
		if tlsRace {
			n = 50 // 100 handshakes under the race detector take seconds
		}
		before, idle := idleTLS(t, rt, pki, n)
		grown := idle.goroutines - before.goroutines
		t.Logf("%d idle TLS connections (%d ends): goroutines %d -> %d; per end: VmRSS %+d B, heap+stacks %+d B",
			n, 2*n, before.goroutines, idle.goroutines, (idle.rss-before.rss)/int64(2*n), (idle.heap-before.heap)/int64(2*n))
		assert.Less(t, grown, 16, "goroutines grew with the idle connections: %d -> %d for %d connections", before.goroutines, idle.goroutines, n)
	})
}

// TestTLSIdleMemoryReport compares the memory of idle TLS connections:
// TLSStream (tasks), crypto/tls over blitz.NetConn and crypto/tls over
// Go's net (a goroutine per end blocked in Read). A measurement, not a
// check: run with BLITZ_TLS_IDLE_REPORT set to a comma-separated list of
// tlsstream, gonet, netconn (one per process gives the fairest VmRSS,
// since Go keeps freed heap mapped), or to all.
func TestTLSIdleMemoryReport(t *testing.T) {
	modes := os.Getenv("BLITZ_TLS_IDLE_REPORT")
	if modes == "" {
		t.Skip("set BLITZ_TLS_IDLE_REPORT=all (or tlsstream,gonet,netconn) to measure")
	}
	if modes == "all" {
		modes = "tlsstream,gonet,netconn"
	}
	pki, _ := testCerts(t)
	n := 1000
	report := func(name string, before, idle idleSnapshot) {
		t.Logf("%-24s %d conns: goroutines %5d -> %5d (%+.2f per end); per end: VmRSS %+6d B, heap+stacks %+6d B",
			name, n, before.goroutines, idle.goroutines, float64(idle.goroutines-before.goroutines)/float64(2*n),
			(idle.rss-before.rss)/int64(2*n), (idle.heap-before.heap)/int64(2*n))
	}
	for _, mode := range strings.Split(modes, ",") {
		switch mode {
		case "tlsstream":
			rt := newRuntime(t, blitz.Config{Workers: 2})
			before, idle := idleTLS(t, rt, pki, n)
			report("TLSStream (tasks)", before, idle)
		case "gonet":
			before, idle := idleGoTLS(t, pki, n, nil)
			report("crypto/tls over net", before, idle)
		case "netconn":
			rt := newRuntime(t, blitz.Config{Workers: 2})
			before, idle := idleGoTLS(t, pki, n, rt)
			report("crypto/tls over NetConn", before, idle)
		default:
			t.Fatalf("unknown mode %q", mode)
		}
	}
}

// idleGoTLS is idleTLS with crypto/tls on goroutines: the server's
// connections over Go's net, or, with rt, over blitz.NetConn of the
// runtime's TCP streams; the clients over Go's net in both cases (so the
// figure per end is the mean of a client and a server end).
func idleGoTLS(t *testing.T, pki *testPKI, n int, rt *blitz.Runtime) (before, idle idleSnapshot) {
	var ln net.Listener
	if rt != nil {
		tl, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		ln = blitz.NetListener(tl)
	} else {
		var err error
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
	}
	ln = tls.NewListener(ln, pki.serverConfig())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				buf := make([]byte, 4)
				if _, err := io.ReadFull(c, buf); err != nil {
					return
				}
				if _, err := c.Write([]byte("pong")); err != nil {
					return
				}
				_, _ = c.Read(buf)
			}()
		}
	}()
	var ready atomic.Int32
	conns := make(chan net.Conn, n+1)
	dial := func() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := tls.Dial("tcp", ln.Addr().String(), pki.clientConfig())
			if err != nil {
				t.Error(err)
				ready.Add(1)
				return
			}
			conns <- c
			buf := make([]byte, 4)
			if _, err := c.Write([]byte("ping")); err != nil {
				t.Error(err)
			} else if _, err := io.ReadFull(c, buf); err != nil {
				t.Error(err)
			}
			ready.Add(1)
			_, _ = c.Read(buf)
		}()
	}
	dial()
	tlsWaitFor(t, func() bool { return ready.Load() == 1 }, "the warm-up connection")
	(<-conns).Close()
	ready.Store(0)
	time.Sleep(50 * time.Millisecond)
	before = takeIdleSnapshot()
	for i := 0; i < n; i++ {
		dial()
	}
	tlsWaitFor(t, func() bool { return ready.Load() == int32(n) }, "the connections' round trips")
	time.Sleep(50 * time.Millisecond)
	idle = takeIdleSnapshot()
	for i := 0; i < n; i++ {
		(<-conns).Close()
	}
	ln.Close()
	wg.Wait()
	return before, idle
}
