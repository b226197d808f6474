package websocket

// Interoperability of permessage-deflate with gorilla/websocket, which
// negotiates it without context takeover either way.

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gorilla "github.com/gorilla/websocket"
)

// countConn counts the bytes that cross a net.Conn.
type countConn struct {
	net.Conn
	read, written *atomic.Int64
}

func (c countConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

func (c countConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written.Add(int64(n))
	return n, err
}

// countListener wraps the connections it accepts in countConns.
type countListener struct {
	net.Listener
	read, written atomic.Int64
}

func (l *countListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countConn{Conn: c, read: &l.read, written: &l.written}, nil
}

// interopSizes are the sizes of the messages exchanged; the large ones
// compress to a small fraction on the wire.
var interopSizes = []int{0, 10, 127, 128, 1000, 64 << 10, 300 << 10}

// interop returns interopSizes, short of the largest in -short mode.
func interop() []int {
	if testing.Short() {
		return interopSizes[:len(interopSizes)-1]
	}
	return interopSizes
}

// gorilla's client, compression enabled, against our server.
func TestGorillaClientOurServer(t *testing.T) {
	for _, o := range []CompressionOptions{{}, {ContextTakeover: true, PeerContextTakeover: true, Level: 9}} {
		ts := startEcho(t, &Upgrader{Compression: &o})
		var read, written atomic.Int64
		d := gorilla.Dialer{
			EnableCompression: true,
			HandshakeTimeout:  5 * time.Second,
			NetDial: func(network, addr string) (net.Conn, error) {
				c, err := net.Dial(network, addr)
				if err != nil {
					return nil, err
				}
				return countConn{Conn: c, read: &read, written: &written}, nil
			},
		}
		c, resp, err := d.Dial(ts.url("/ws"), nil)
		if err != nil {
			t.Fatalf("gorilla Dial: %v", err)
		}
		if ext := resp.Header.Get("Sec-WebSocket-Extensions"); ext != "permessage-deflate; server_no_context_takeover; client_no_context_takeover" {
			t.Fatalf("extension %q", ext)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		total := 0
		for i, n := range interop() {
			p := zPayload([]int{1, 3, 4}[i%3], n, i) // text kinds
			total += 2 * n
			for _, typ := range []int{gorilla.TextMessage, gorilla.BinaryMessage} {
				if err := c.WriteMessage(typ, p); err != nil {
					t.Fatal(err)
				}
				gt, got, err := c.ReadMessage()
				if err != nil {
					t.Fatalf("%d bytes: %v", n, err)
				}
				if gt != typ || !bytes.Equal(got, p) {
					t.Fatalf("%d bytes: got type %d, %d bytes", n, gt, len(got))
				}
			}
		}
		// Both ways compressed: well under half the payloads on the wire.
		t.Logf("gorilla client: read %d, wrote %d bytes for %d bytes of payload each way", read.Load(), written.Load(), total)
		if r, w := read.Load(), written.Load(); r > int64(total)/2 || w > int64(total)/2 {
			t.Fatalf("on the wire: read %d, written %d, of %d bytes of payload each way", r, w, total)
		}
		_ = c.WriteControl(gorilla.CloseMessage, gorilla.FormatCloseMessage(gorilla.CloseNormalClosure, ""), time.Now().Add(time.Second))
		if _, _, err := c.ReadMessage(); !gorilla.IsCloseError(err, gorilla.CloseNormalClosure) {
			t.Fatalf("close: %v", err)
		}
		_ = c.Close()
	}
}

// Our client, compression enabled, against gorilla's server (an echo on
// net/http).
func TestOurClientGorillaServer(t *testing.T) {
	up := gorilla.Upgrader{EnableCompression: true}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			typ, p, err := c.ReadMessage()
			if err != nil {
				return
			}
			if err := c.WriteMessage(typ, p); err != nil {
				return
			}
		}
	}))
	cl := &countListener{Listener: srv.Listener}
	srv.Listener = cl
	srv.Start()
	defer srv.Close()

	ts := startEcho(t, nil) // for its runtime
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	url := "ws://" + strings.TrimPrefix(srv.URL, "http://") + "/"
	c, _, err := DialContext(ctx, ts.rt.Handle(), url, &DialOptions{Compression: &CompressionOptions{ContextTakeover: true, PeerContextTakeover: true}})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	if got := c.Extensions(); got != "permessage-deflate; server_no_context_takeover; client_no_context_takeover" {
		t.Fatalf("Extensions() = %q", got)
	}
	total := 0
	for i, n := range interop() {
		p := zPayload([]int{1, 3, 4}[i%3], n, i) // text kinds
		total += 3 * n
		echoCheck(t, ctx, c, TextMessage, p, false)
		echoCheck(t, ctx, c, BinaryMessage, p, false)
		echoCheck(t, ctx, c, TextMessage, p, true) // fragments, through NextWriter
	}
	t.Logf("gorilla server: read %d, wrote %d bytes for %d bytes of payload each way", cl.read.Load(), cl.written.Load(), total)
	if r, w := cl.read.Load(), cl.written.Load(); r > int64(total)/2 || w > int64(total)/2 {
		t.Fatalf("on the wire: server read %d, wrote %d, of %d bytes of payload each way", r, w, total)
	}
	if err := c.CloseContext(ctx, StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
}
