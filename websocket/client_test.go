package websocket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

func dialTest(t *testing.T, ts *testServer, opts *DialOptions) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := DialContext(ctx, ts.rt.Handle(), ts.url("/ws"), opts)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", resp.StatusCode)
	}
	return c
}

// Our client against our server, blocking API, for the sizes of Autobahn
// 1.1/1.2 and (short of the largest) 9.1/9.2.
func TestClientEchoSizes(t *testing.T) {
	ts := startEcho(t, nil)
	c := dialTest(t, ts, nil)
	ctx := context.Background()
	sizes := []int{0, 125, 126, 127, 128, 65535, 65536, 256 << 10, 1 << 20}
	if !testing.Short() {
		sizes = append(sizes, 4<<20, 16<<20)
	}
	for _, n := range sizes {
		for _, typ := range []MessageType{TextMessage, BinaryMessage} {
			t.Run(fmt.Sprintf("1.x_9.x_%s_%d", typ, n), func(t *testing.T) {
				p := bytes.Repeat([]byte("*"), n)
				if err := c.Write(ctx, typ, p); err != nil {
					t.Fatal(err)
				}
				gt, got, err := c.Read(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if gt != typ || !bytes.Equal(got, p) {
					t.Fatalf("got %s of %d bytes", gt, len(got))
				}
			})
		}
	}
	if err := c.PingContext(ctx, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if err := c.CloseContext(ctx, StatusNormalClosure, "bye"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(ctx); !errors.Is(err, ErrClosed) && CloseStatus(err) != StatusNormalClosure {
		t.Fatalf("read after close: %v", err)
	}
}

// The client's futures, polled by a task: a message, then the close
// handshake started by the client.
func TestClientAsync(t *testing.T) {
	ts := startEcho(t, nil)
	h := ts.rt.Handle()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := blitz.BlockOn(ctx, h, future.Future[future.Result[string]](&clientTask{d: Dial(h, ts.url("/"), nil)}))
	if err != nil || r.Err != nil {
		t.Fatalf("%v %v", err, r.Err)
	}
	if r.Value != "hello" {
		t.Fatalf("got %q", r.Value)
	}
}

// clientTask dials, sends "hello", reads the echo and closes.
type clientTask struct {
	d     *DialFuture
	c     *Conn
	w     *WriteFuture
	rf    *ReadFuture
	cl    *CloseFuture
	got   string
	phase int
}

func (ct *clientTask) Poll(cx *future.Context) (future.Result[string], bool) {
	for {
		switch ct.phase {
		case 0:
			r, ok := ct.d.Poll(cx)
			if !ok {
				return future.Result[string]{}, false
			}
			if r.Err != nil {
				return future.Fail[string](r.Err), true
			}
			ct.c = r.Value
			ct.w = ct.c.WriteMessage(TextMessage, []byte("hello"))
			ct.phase = 1
		case 1:
			r, ok := ct.w.Poll(cx)
			if !ok {
				return future.Result[string]{}, false
			}
			if r.Err != nil {
				return future.Fail[string](r.Err), true
			}
			ct.rf = ct.c.ReadMessage()
			ct.phase = 2
		case 2:
			r, ok := ct.rf.Poll(cx)
			if !ok {
				return future.Result[string]{}, false
			}
			if r.Err != nil {
				return future.Fail[string](r.Err), true
			}
			ct.got = string(r.Value.Data)
			ct.cl = ct.c.Close(StatusNormalClosure, "")
			ct.phase = 3
		case 3:
			r, ok := ct.cl.Poll(cx)
			if !ok {
				return future.Result[string]{}, false
			}
			return future.Result[string]{Value: ct.got, Err: r.Err}, true
		}
	}
}

// Autobahn 9.x with a limit: a message over the read limit closes with
// 1009, whether in one frame or in fragments.
func TestReadLimit9(t *testing.T) {
	ts := startEcho(t, &Upgrader{Options: Options{ReadLimit: 1000}})
	for _, tc := range []struct {
		name string
		send [][]byte
	}{
		{"9.x_limit_one_frame", [][]byte{fr(0x82, strings.Repeat("x", 1001))}},
		{"9.x_limit_fragments", [][]byte{fr(0x02, strings.Repeat("x", 600)), fr(0x80, strings.Repeat("x", 600))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := openRaw(t, ts)
			rc.send(tc.send...)
			got, ok := rc.next()
			if !ok || closeCodeOf(got) != 1009 {
				t.Fatalf("got %#x %q (open %v), want close 1009", got.op, got.payload, ok)
			}
			rc.send(closeFrame(1009, ""))
			rc.expectEnd()
		})
	}
	// At the limit passes.
	rc := openRaw(t, ts)
	p := strings.Repeat("x", 1000)
	rc.send(fr(0x82, p))
	if got, ok := rc.next(); !ok || got.payload != p {
		t.Fatalf("message at the limit not echoed")
	}
}

// The server requires masked frames (1002), and the client refuses masked
// ones from the server.
func TestMasking(t *testing.T) {
	ts := startEcho(t, nil)
	rc := openRaw(t, ts)
	rc.send(appendHeader(nil, true, opText, 2, false, [4]byte{}), []byte("hi"))
	if got, ok := rc.next(); !ok || closeCodeOf(got) != 1002 {
		t.Fatalf("unmasked frame: got %#x %q", got.op, got.payload)
	}

	// A client reading a masked frame: over an in-memory pipe.
	c := newConn(&bytesTransport{in: frame(0x81, []byte("hi"))}, true, "", nil, nil)
	_, err := future.Block(context.Background(), future.Future[future.Result[Message]](c.ReadMessage()))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := future.Block(context.Background(), future.Future[future.Result[Message]](c.ReadMessage()))
	if !errors.Is(r.Err, ErrProtocol) {
		t.Fatalf("client read a masked frame: %v", r.Err)
	}
}

// bytesTransport reads from in and collects writes, for codec tests.
type bytesTransport struct {
	in  []byte
	out bytes.Buffer
}

func (b *bytesTransport) PollRead(_ *future.Context, p []byte) (future.Result[int], bool) {
	if len(b.in) == 0 {
		return future.Result[int]{Err: io.EOF}, true
	}
	n := copy(p, b.in)
	b.in = b.in[n:]
	return future.Ok(n), true
}
func (b *bytesTransport) CancelRead() {}
func (b *bytesTransport) PollWrite(_ *future.Context, p []byte) (future.Result[int], bool) {
	b.out.Write(p)
	return future.Ok(len(p)), true
}
func (b *bytesTransport) CancelWrite() {}
func (b *bytesTransport) Close() error { return nil }

// The blocking API from net/http, through Hijack, against our client on
// the runtime.
func TestNetHTTPHijack(t *testing.T) {
	up := &Upgrader{Subprotocols: []string{"chat"}}
	done := make(chan error, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			done <- err
			return
		}
		ctx := context.Background()
		for {
			typ, p, err := c.Read(ctx)
			if err != nil {
				_ = c.CloseContext(ctx, StatusNormalClosure, "")
				if CloseStatus(err) == StatusNormalClosure {
					err = nil
				}
				done <- err
				return
			}
			if err := c.Write(ctx, typ, p); err != nil {
				done <- err
				return
			}
		}
	}))
	defer hs.Close()
	rt, err := blitz.New(blitz.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rt.Shutdown(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := DialContext(ctx, rt.Handle(), "ws"+strings.TrimPrefix(hs.URL, "http"), &DialOptions{Subprotocols: []string{"x", "chat"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Subprotocol() != "chat" {
		t.Fatalf("subprotocol %q", c.Subprotocol())
	}
	for i := range 5 {
		msg := bytes.Repeat([]byte{byte(i)}, 1000*i)
		if err := c.Write(ctx, BinaryMessage, msg); err != nil {
			t.Fatal(err)
		}
		_, got, err := c.Read(ctx)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("echo %d: %v", i, err)
		}
	}
	if err := c.CloseContext(ctx, StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server: %v", err)
	}
}

// A blocking Read whose context ends returns its error and leaves the
// runtime connection usable.
func TestReadContextCancel(t *testing.T) {
	ts := startEcho(t, nil)
	c := dialTest(t, ts, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, _, err := c.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	bg := context.Background()
	if err := c.Write(bg, TextMessage, []byte("still here")); err != nil {
		t.Fatal(err)
	}
	if _, p, err := c.Read(bg); err != nil || string(p) != "still here" {
		t.Fatalf("%q %v", p, err)
	}
	if err := c.CloseContext(bg, StatusGoingAway, ""); err != nil {
		t.Fatal(err)
	}
}

// Close refuses codes that may not be sent.
func TestCloseCodes(t *testing.T) {
	for _, code := range []StatusCode{StatusNoStatusRcvd, StatusAbnormalClosure, 1015, 999, 5000} {
		if err := checkCloseArgs(code, ""); !errors.Is(err, ErrBadCloseCode) {
			t.Errorf("code %d: %v", code, err)
		}
	}
	if err := checkCloseArgs(StatusNormalClosure, strings.Repeat("x", 124)); !errors.Is(err, ErrBadCloseCode) {
		t.Errorf("long reason: %v", err)
	}
	if err := checkCloseArgs(4000, "ok"); err != nil {
		t.Error(err)
	}
}

// NextWriter sends a message in fragments, which the server gathers.
func TestNextWriter(t *testing.T) {
	ts := startEcho(t, nil)
	c := dialTest(t, ts, nil)
	ctx := context.Background()
	w, err := c.NextWriter(ctx, TextMessage)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"stream", "ed ", strings.Repeat("x", 5000)} {
		if _, err := io.WriteString(w, part); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// A message without a Write is one empty frame.
	w, _ = c.NextWriter(ctx, BinaryMessage)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, p, err := c.Read(ctx); err != nil || string(p) != "streamed "+strings.Repeat("x", 5000) {
		t.Fatalf("%.20q %v", p, err)
	}
	if typ, p, err := c.Read(ctx); err != nil || typ != BinaryMessage || len(p) != 0 {
		t.Fatalf("%v %q %v", typ, p, err)
	}
	if err := c.CloseContext(ctx, StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
}
