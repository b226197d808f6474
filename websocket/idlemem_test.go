package websocket

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/blitz-go/blitz"
)

// The memory of idle connections: BenchmarkIdleConnMemory opens
// WS_IDLE_CONNS (10^4 by default) connections from a child process (the
// test binary with WS_IDLE_CHILD set), each of which shakes hands and
// echoes one message, and reports the growth of the server process's live
// heap and stacks per connection:
//
//	go test -run '^$' -bench IdleConnMemory -benchtime 1x ./websocket
//
// WS_IDLE_BACKEND names the runtime's I/O backend (uring, epoll, poll...;
// the default picks). WS_IDLE_HEAPPROFILE=FILE writes the heap held while
// the connections are idle to FILE, every allocation recorded.

const idleChildEnv = "WS_IDLE_CHILD"

func BenchmarkIdleConnMemory(b *testing.B) {
	n := 10000
	if s := os.Getenv("WS_IDLE_CONNS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	for _, tc := range []struct {
		name string
		up   *Upgrader
		msg  int
	}{
		{"plain", &Upgrader{}, 5},
		{"deflate", &Upgrader{Compression: &CompressionOptions{}}, 200},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var m idleFigures
			for range b.N {
				m = idleOnce(b, tc.up, n, tc.msg)
			}
			b.ReportMetric(m.per, "bytes/conn")
			b.ReportMetric(m.net, "bytes/conn-pools-emptied")
			b.ReportMetric(m.spans, "span-bytes/conn")
			b.ReportMetric(m.rss, "rss-bytes/conn")
			b.ReportMetric(float64(n), "conns")
		})
	}
}

// TestIdleConnMemory keeps the figure of BenchmarkIdleConnMemory (with
// the pools emptied) from growing back: 2,000 idle connections, a read
// buffer (4 KiB) each would fail it, and so would the connection state
// of before (about 1.3 KB in all).
func TestIdleConnMemory(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("opens 2,000 connections; the race detector's shadow memory would count")
	}
	for _, tc := range []struct {
		up    *Upgrader
		msg   int
		limit float64
	}{{&Upgrader{}, 5, 1200}, {&Upgrader{Compression: &CompressionOptions{}}, 200, 1200}} {
		per := idleOnce(t, tc.up, 2000, tc.msg).net
		t.Logf("compression %v: %.0f bytes per idle connection", tc.up.Compression != nil, per)
		if per > tc.limit {
			t.Errorf("compression %v: %.0f bytes per idle connection, over %.0f", tc.up.Compression != nil, per, tc.limit)
		}
	}
}

// idleFigures are idleOnce's measures, in bytes per connection.
type idleFigures struct {
	// per is the growth of the live heap and stacks after one collection;
	// net after a second, which empties the sync.Pools (of flate writers,
	// buffers) that the handshakes' burst filled: memory that does not
	// grow with the connections.
	per, net float64
	// spans is the growth of the heap's spans in use (HeapInuse) after
	// the second collection: live bytes plus the free slots of spans that
	// hold a live object, which the process cannot give back.
	spans float64
	// rss is the growth of the process's resident set after the freed
	// pages went back to the kernel (debug.FreeOSMemory).
	rss float64
}

// idleOnce measures n idle connections (see idleFigures).
func idleOnce(b testing.TB, up *Upgrader, n, msg int) (m idleFigures) {
	if os.Getenv("WS_IDLE_HEAPPROFILE") != "" {
		// Every allocation in the profile, not a sample.
		runtime.MemProfileRate = 1
	}
	rt, err := blitz.New(blitz.Config{Workers: 2, Backend: os.Getenv("WS_IDLE_BACKEND")})
	if err != nil {
		b.Fatal(err)
	}
	ts := startEchoOn(b, rt, up)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), idleChildEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	out := bufio.NewScanner(stdout)
	deflate := 0
	if up.Compression != nil {
		deflate = 1
	}
	// The runtime's pool of read buffers is made once for all
	// connections (4 MiB by default): not a connection's cost.
	if err := ts.rt.PrepareReadPool(); err != nil {
		b.Fatal(err)
	}
	before := liveBytes()
	spansBefore, rssBefore := spanBytes(), rssBytes(b)
	fmt.Fprintf(stdin, "%s %d %d %d\n", ts.addr, n, msg, deflate)
	if !out.Scan() || out.Text() != "ready" {
		b.Fatalf("the client process did not connect: %q %v", out.Text(), out.Err())
	}
	time.Sleep(200 * time.Millisecond) // let the last tasks reach their wait
	m.per = float64(liveBytes()-before) / float64(n)
	if path := os.Getenv("WS_IDLE_HEAPPROFILE"); path != "" {
		// The heap held while the connections are idle.
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	m.net = float64(liveBytes()-before) / float64(n)
	m.spans = (float64(spanBytes()) - float64(spansBefore)) / float64(n)
	m.rss = (float64(rssBytes(b)) - float64(rssBefore)) / float64(n)
	return m
}

// spanBytes is the heap's spans in use (HeapInuse).
func spanBytes() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// rssBytes is the process's resident set (VmRSS) once the pages the heap
// does not use are back with the kernel; 0 where /proc is missing.
func rssBytes(b testing.TB) uint64 {
	debug.FreeOSMemory()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatalf("VmRSS %q: %v", v, err)
			}
			return kb << 10
		}
	}
	return 0
}

func liveBytes() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc + ms.StackInuse
}

// runIdleClients is the child process: it reads "addr n msgsize deflate"
// on stdin, opens n connections that each shake hands (offering
// permessage-deflate if deflate is 1), send a text message of msgsize
// bytes and read its echo, says "ready" and holds them until stdin
// closes.
func runIdleClients() error {
	in := bufio.NewReader(os.Stdin)
	var addr string
	var n, size, deflate int
	if _, err := fmt.Fscanln(in, &addr, &n, &size, &deflate); err != nil {
		return err
	}
	ext := ""
	if deflate == 1 {
		ext = "Sec-WebSocket-Extensions: permessage-deflate\r\n"
	}
	req := "GET /ws HTTP/1.1\r\nHost: " + addr + "\r\n" + goodHeaders + ext + "\r\n"
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = 'a' + byte(i%26)
	}
	fr := frame(0x81, payload)
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return err
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, req+string(fr)); err != nil {
			return err
		}
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusSwitchingProtocols {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		var h [4]byte
		if _, err := io.ReadFull(br, h[:2]); err != nil {
			return err
		}
		l := int(h[1] & 0x7f)
		if l == 126 {
			if _, err := io.ReadFull(br, h[2:4]); err != nil {
				return err
			}
			l = int(binary.BigEndian.Uint16(h[2:4]))
		}
		if _, err := io.ReadFull(br, make([]byte, l)); err != nil {
			return err
		}
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, in)
	for _, c := range conns {
		c.Close()
	}
	return nil
}

// TestConnSize keeps a connection's record in the 80-byte size class: an
// idle connection holds it for its whole life. Its waiters and its
// compression state are in a record of its own (connExtra), its control
// frame state inside the pooled reader's state, and the pooled read it
// waits on is the stream's.
func TestConnSize(t *testing.T) {
	if n := unsafe.Sizeof(Conn{}); n > 80 {
		t.Fatalf("Conn is %d bytes, past the 80-byte size class", n)
	}
}

// A queue longer than MaxBroadcastQueue is MaxBroadcastQueue.
func TestBroadcastQueueClamped(t *testing.T) {
	for _, tc := range []struct{ in, want int }{{0, DefaultBroadcastQueue}, {-3, DefaultBroadcastQueue}, {5, 5}, {MaxBroadcastQueue, MaxBroadcastQueue}, {math.MaxInt, MaxBroadcastQueue}} {
		if got := NewBroadcaster(blitz.Handle{}, &BroadcastOptions{QueueLen: tc.in}).queueLen; got != tc.want {
			t.Errorf("QueueLen %d: queue of %d, want %d", tc.in, got, tc.want)
		}
	}
}
