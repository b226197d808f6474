package wsinterop

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/httpserver"
	"github.com/blitz-go/blitz/websocket"
)

// ourRuntime starts a runtime for a test.
func ourRuntime(t *testing.T) *blitz.Runtime {
	t.Helper()
	rt, err := blitz.New(blitz.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Errorf("runtime Shutdown: %v", err)
		}
	})
	return rt
}

// ourOptions are the connection options of both our sides: no read limit
// below the largest message, a short close timeout.
var ourOptions = websocket.Options{CloseTimeout: 3 * time.Second}

// startOurServer starts a blitz httpserver whose handler upgrades (with
// permessage-deflate when deflate) and echoes on a goroutine with the
// blocking methods, obeying the commands of the test (see cmdFrag).
func startOurServer(t *testing.T, m mode, ev *events) string {
	t.Helper()
	rt := ourRuntime(t)
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up := &websocket.Upgrader{Options: ourOptions, CheckOrigin: func(*http.Request) bool { return true }}
	up.Compression = m.options()
	var conns sync.WaitGroup
	srv := &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			ourEcho(c, ev)
		}()
	})}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(rt.Handle(), l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
		conns.Wait()
	})
	return "ws://" + l.AddrPort().String() + "/ws"
}

// ourEcho is our server's side of one connection. A close frame read is
// reported to ev: the client's own close, or its answer to ours.
func ourEcho(c *websocket.Conn, ev *events) {
	defer c.CloseNow()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var closing sync.WaitGroup
	defer closing.Wait()
	for {
		typ, p, err := c.Read(ctx)
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				ev.closed(int(ce.Code), ce.Reason)
			} else {
				ev.closed(-1, err.Error())
			}
			return
		}
		bin := typ == websocket.BinaryMessage
		switch {
		case isCmdClose(bin, p):
			// The close handshake runs while this goroutine reads on, so
			// that the read returns the client's answer.
			closing.Add(1)
			go func() {
				defer closing.Done()
				start := time.Now()
				err := c.CloseContext(ctx, serverCode, serverReason)
				if err == nil && time.Since(start) > ourOptions.CloseTimeout/2 {
					err = errors.New("the client did not answer the close frame")
				}
				ev.handshakeDone(err)
			}()
			continue
		}
		if rest, ok := splitCmd(bin, p, cmdPing); ok {
			if err := c.PingContext(ctx, rest); err != nil {
				return
			}
			continue
		}
		if rest, ok := splitCmd(bin, p, cmdFrag); ok {
			w, err := c.NextWriter(ctx, websocket.TextMessage)
			if err != nil {
				return
			}
			for _, ch := range chunks(rest, fragChunk) {
				if _, err := w.Write(ch); err != nil {
					return
				}
			}
			if err := w.Close(); err != nil {
				return
			}
			continue
		}
		if err := c.Write(ctx, typ, p); err != nil {
			return
		}
	}
}

// ourClient is our client as a peerClient, for the checks against the
// other libraries' servers.
type ourClient struct {
	c   *websocket.Conn
	ctx context.Context
}

func dialOurs(t *testing.T, rt *blitz.Runtime, url string, m mode) *ourClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	o := &websocket.DialOptions{Options: ourOptions}
	o.Compression = m.options()
	c, _, err := websocket.DialContext(ctx, rt.Handle(), url, o)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	return &ourClient{c: c, ctx: ctx}
}

func (o *ourClient) echo(t *testing.T, binary, fragmented bool, p []byte) {
	t.Helper()
	typ := websocket.TextMessage
	if binary {
		typ = websocket.BinaryMessage
	}
	if fragmented {
		w, err := o.c.NextWriter(o.ctx, typ)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range chunks(p, fragChunk) {
			if _, err := w.Write(ch); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	} else if err := o.c.Write(o.ctx, typ, p); err != nil {
		t.Fatalf("%d bytes: Write: %v", len(p), err)
	}
	o.expect(t, typ, p)
}

func (o *ourClient) expect(t *testing.T, typ websocket.MessageType, p []byte) {
	t.Helper()
	gt, got, err := o.c.Read(o.ctx)
	if err != nil {
		t.Fatalf("%d bytes: Read: %v", len(p), err)
	}
	if gt != typ || string(got) != string(p) {
		t.Fatalf("%d bytes: echo of type %v, %d bytes, want %v, %d bytes", len(p), gt, len(got), typ, len(p))
	}
}

// readClose reads until the server's close frame and returns it.
func (o *ourClient) readClose(t *testing.T) closeInfo {
	t.Helper()
	for {
		_, _, err := o.c.Read(o.ctx)
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("read: %v, want a close frame", err)
		}
		return closeInfo{int(ce.Code), ce.Reason}
	}
}

// closeHandshake starts the close handshake with clientCode and
// clientReason while a read goes on, and returns the server's answer as
// the read saw it.
func (o *ourClient) closeHandshake(t *testing.T) closeInfo {
	t.Helper()
	got := make(chan closeInfo, 1)
	go func() {
		for {
			_, _, err := o.c.Read(o.ctx)
			if err == nil {
				continue
			}
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				got <- closeInfo{int(ce.Code), ce.Reason}
			} else {
				got <- closeInfo{-1, err.Error()}
			}
			return
		}
	}()
	time.Sleep(10 * time.Millisecond) // let the read start
	start := time.Now()
	if err := o.c.CloseContext(o.ctx, clientCode, clientReason); err != nil {
		t.Fatalf("CloseContext: %v", err)
	}
	if d := time.Since(start); d > ourOptions.CloseTimeout/2 {
		t.Fatalf("the server did not answer the close frame (%v)", d)
	}
	return waitFor(t, got, "the read to end")
}

func isOurExt(ext string) bool { return strings.HasPrefix(ext, "permessage-deflate") }

// mode is a column of the matrix: no compression, permessage-deflate
// without context takeover, or with it asked for both ways (a peer that
// cannot keep a context falls back to none).
type mode int

const (
	plain mode = iota
	deflate
	takeover
)

func (m mode) String() string { return [...]string{"plain", "deflate", "deflate+takeover"}[m] }

// options are our side's CompressionOptions for m.
func (m mode) options() *websocket.CompressionOptions {
	switch m {
	case deflate:
		return &websocket.CompressionOptions{}
	case takeover:
		return &websocket.CompressionOptions{ContextTakeover: true, PeerContextTakeover: true}
	}
	return nil
}
