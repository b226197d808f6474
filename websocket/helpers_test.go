package websocket

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/httpserver"
)

// echoTask is the server side of the tests: it echoes every data message
// until the read fails, as a hand-written future.
type echoTask struct {
	c  *Conn
	rf *ReadFuture
	wf *WriteFuture
	cf *CloseFuture
}

func (e *echoTask) Poll(cx *future.Context) (struct{}, bool) {
	for {
		if e.cf != nil {
			if _, ok := e.cf.Poll(cx); !ok {
				return struct{}{}, false
			}
			return struct{}{}, true
		}
		if e.wf != nil {
			r, ok := e.wf.Poll(cx)
			if !ok {
				return struct{}{}, false
			}
			e.wf = nil
			if r.Err != nil {
				_ = e.c.CloseNow()
				return struct{}{}, true
			}
		}
		if e.rf == nil {
			e.rf = e.c.ReadMessage()
		}
		r, ok := e.rf.Poll(cx)
		if !ok {
			return struct{}{}, false
		}
		e.rf = nil
		if r.Err != nil {
			e.cf = e.c.Close(StatusNormalClosure, "")
			continue
		}
		e.wf = e.c.WriteMessage(r.Value.Type, r.Value.Data)
	}
}

func (e *echoTask) Cancel() {
	if e.rf != nil {
		e.rf.Cancel()
	}
	if e.wf != nil {
		e.wf.Cancel()
	}
	if e.cf != nil {
		e.cf.Cancel()
	}
	_ = e.c.CloseNow()
}

// testServer is a httpserver.Server whose handler upgrades and spawns an
// echo task, on a runtime of its own.
type testServer struct {
	rt   *blitz.Runtime
	srv  *httpserver.Server
	addr string
	errc chan error
	up   *Upgrader
}

func startEcho(t testing.TB, up *Upgrader) *testServer {
	t.Helper()
	rt, err := blitz.New(blitz.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return startEchoOn(t, rt, up)
}

// startEchoOn is startEcho on rt, which it shuts down at the end.
func startEchoOn(t testing.TB, rt *blitz.Runtime, up *Upgrader) *testServer {
	t.Helper()
	return startEchoHook(t, rt, up, nil)
}

// startEchoHook is startEchoOn that calls onConn, if not nil, with each
// connection before its echo task starts.
func startEchoHook(t testing.TB, rt *blitz.Runtime, up *Upgrader, onConn func(*Conn)) *testServer {
	t.Helper()
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		_ = rt.Shutdown(context.Background())
		t.Fatal(err)
	}
	if up == nil {
		up = &Upgrader{}
	}
	ts := &testServer{rt: rt, addr: l.AddrPort().String(), errc: make(chan error, 1), up: up}
	var (
		mu       sync.Mutex
		tasks    []blitz.JoinHandle[struct{}]
		handlers sync.WaitGroup // Shutdown does not wait for handlers that upgraded
	)
	ts.srv = &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers.Add(1)
		defer handlers.Done()
		c, err := ts.up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		if onConn != nil {
			onConn(c)
		}
		h := blitz.SpawnOn[struct{}](rt.Handle(), &echoTask{c: c})
		mu.Lock()
		tasks = append(tasks, h)
		mu.Unlock()
	})}
	go func() { ts.errc <- ts.srv.Serve(rt.Handle(), l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ts.srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-ts.errc; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
		handlers.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, h := range tasks {
			if _, err := h.Wait(ctx); err != nil {
				t.Errorf("echo task: %v", err)
			}
		}
		if err := rt.Shutdown(ctx); err != nil {
			t.Errorf("runtime Shutdown: %v", err)
		}
	})
	return ts
}

func (ts *testServer) url(path string) string { return "ws://" + ts.addr + path }

// rawConn is a client speaking raw frames over a plain TCP connection, as
// the Autobahn testsuite's fuzzing client does.
type rawConn struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
}

// dialRaw connects and performs the handshake with extra header lines.
func dialRaw(t testing.TB, ts *testServer, extra string) (*rawConn, *http.Response) {
	t.Helper()
	return dialRawMethod(t, ts, "GET", extra)
}

func dialRawMethod(t testing.TB, ts *testServer, method, extra string) (*rawConn, *http.Response) {
	t.Helper()
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	req := method + " /ws HTTP/1.1\r\nHost: " + ts.addr + "\r\n" + extra + "\r\n"
	if _, err := io.WriteString(nc, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &rawConn{t: t, nc: nc, br: br}, resp
}

const goodHeaders = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"

func openRaw(t testing.TB, ts *testServer) *rawConn {
	t.Helper()
	rc, resp := dialRaw(t, ts, goodHeaders)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", resp.StatusCode)
	}
	return rc
}

// frame builds a client frame: b0 is FIN|RSV|opcode, the payload masked.
func frame(b0 byte, payload []byte) []byte {
	key := [4]byte{0x37, 0xfa, 0x21, 0x3d}
	b := appendHeader(nil, b0&0x80 != 0, b0&0x0F, len(payload), true, key)
	b[0] = b0
	n := len(b)
	b = append(b, payload...)
	maskBytes(key, 0, b[n:])
	return b
}

// rxFrame is a frame received by the raw client.
type rxFrame struct {
	op      byte
	fin     bool
	payload string
	rsv1    bool // a compressed message's first frame
}

// next reads the server's next frame; ok is false at the end of the
// stream.
func (rc *rawConn) next() (rxFrame, bool) {
	rc.t.Helper()
	var buf []byte
	for {
		h, n, err := parseHeader(buf)
		if err != nil {
			rc.t.Fatalf("server sent a bad frame header: %v", err)
		}
		if n > 0 {
			if h.masked {
				rc.t.Fatalf("server sent a masked frame")
			}
			p := make([]byte, h.length)
			if _, err := io.ReadFull(rc.br, p); err != nil {
				rc.t.Fatalf("reading a payload: %v", err)
			}
			return rxFrame{op: h.op, fin: h.fin, payload: string(p), rsv1: h.rsv&rsv1 != 0}, true
		}
		b, err := rc.br.ReadByte()
		if err != nil {
			if len(buf) > 0 {
				rc.t.Fatalf("stream ended inside a header: %v", err)
			}
			return rxFrame{}, false
		}
		buf = append(buf, b)
	}
}

func (rc *rawConn) send(chunks ...[]byte) {
	rc.t.Helper()
	for _, c := range chunks {
		if _, err := rc.nc.Write(c); err != nil {
			return // the server may fail the connection before the end
		}
	}
}

// sendChopped writes b in pieces of n bytes, each its own write.
func (rc *rawConn) sendChopped(b []byte, n int) {
	for len(b) > 0 {
		k := min(n, len(b))
		rc.send(b[:k])
		b = b[k:]
		time.Sleep(time.Microsecond)
	}
}

// expectEnd checks that the server closes the TCP connection.
func (rc *rawConn) expectEnd() {
	rc.t.Helper()
	if f, ok := rc.next(); ok {
		rc.t.Fatalf("expected the end of the stream, got frame %#x %q", f.op, f.payload)
	}
}

func closeFrame(code int, reason string) []byte {
	if code < 0 {
		return frame(0x88, nil)
	}
	return frame(0x88, append([]byte{byte(code >> 8), byte(code)}, reason...))
}

func closeCodeOf(f rxFrame) int {
	if f.op != opClose || len(f.payload) < 2 {
		return 0
	}
	return int(f.payload[0])<<8 | int(f.payload[1])
}
