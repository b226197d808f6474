package websocket

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/httpserver"
)

// netHTTPServer runs handler on each connection upgraded from a net/http
// server (a goroutine per connection, the blocking API).
func netHTTPServer(t *testing.T, up *Upgrader, handler func(c *Conn)) *testServer {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		handler(c)
	}))
	t.Cleanup(srv.Close)
	return &testServer{addr: srv.Listener.Addr().String()}
}

// runtimeServer runs handler on a goroutine of its own for each
// connection upgraded from an httpserver on a runtime: the blocking API
// over the runtime's streams, whose pooled reads give the reader's state
// back while the connection waits.
func runtimeServer(t *testing.T, up *Upgrader, handler func(c *Conn)) *testServer {
	t.Helper()
	rt := newRuntime(t)
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	srv := &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			defer c.CloseNow()
			handler(c)
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
	return &testServer{rt: rt, addr: l.AddrPort().String()}
}

// TestNextReaderStreamsFragments: a fragmented message's payload is
// handed out as its fragments arrive: the server reads the first
// fragment before the client has sent the second.
func TestNextReaderStreamsFragments(t *testing.T) {
	firstRead := make(chan string, 1)
	rest := make(chan string, 1)
	ts := netHTTPServer(t, &Upgrader{}, func(c *Conn) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		typ, r, err := c.NextReader(ctx)
		if err != nil || typ != TextMessage {
			firstRead <- "error: " + err.Error()
			return
		}
		buf := make([]byte, 64)
		n, err := r.Read(buf)
		firstRead <- string(buf[:n])
		if err != nil {
			return
		}
		b, err := io.ReadAll(r)
		if err != nil {
			rest <- "error: " + err.Error()
			return
		}
		rest <- string(b)
	})
	rc := openRaw(t, ts)
	defer rc.nc.Close()
	rc.send(fr(0x01, "hello, ")) // text, not FIN
	select {
	case got := <-firstRead:
		if got != "hello, " {
			t.Fatalf("first Read = %q, want the first fragment", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first fragment was not handed out before the message's end")
	}
	rc.send(fr(0x89, "are you there?"), fr(0x00, "wor"), fr(0x80, "ld")) // a ping between fragments
	if f, ok := rc.next(); !ok || f.op != opPong || f.payload != "are you there?" {
		t.Fatalf("got %#x %q, want the pong", f.op, f.payload)
	}
	if got := <-rest; got != "world" {
		t.Fatalf("rest of the message = %q, want %q", got, "world")
	}
}

// TestNextReaderInvalidUTF8: invalid text fails the Read as it arrives
// and closes the connection with 1007.
func TestNextReaderInvalidUTF8(t *testing.T) {
	errc := make(chan error, 1)
	ts := netHTTPServer(t, &Upgrader{}, func(c *Conn) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, r, err := c.NextReader(ctx)
		if err == nil {
			_, err = io.ReadAll(r)
		}
		errc <- err
	})
	rc := openRaw(t, ts)
	defer rc.nc.Close()
	rc.send(frame(0x01, []byte("ok so far ")), frame(0x80, []byte{0xff, 0xfe}))
	if f, ok := rc.next(); !ok || closeCodeOf(f) != 1007 {
		t.Fatalf("got %#x %q, want a close with 1007", f.op, f.payload)
	}
	if err := <-errc; !errors.Is(err, ErrProtocol) {
		t.Fatalf("read: %v, want an error wrapping ErrProtocol", err)
	}
}

// TestNextReaderDiscardsTheRest: a read after a reader left its message
// unfinished gets the next message; the old reader then reads io.EOF.
// Whole messages, empty messages and compressed ones go through it too.
func TestNextReaderDiscardsTheRest(t *testing.T) {
	type result struct {
		first string
		next  []string
		stale error
	}
	done := make(chan result, 1)
	ts := netHTTPServer(t, &Upgrader{Compression: &CompressionOptions{}}, func(c *Conn) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var res result
		_, r, err := c.NextReader(ctx)
		if err != nil {
			done <- res
			return
		}
		buf := make([]byte, 5)
		n, _ := io.ReadFull(r, buf)
		res.first = string(buf[:n])
		for range 3 { // the rest of the first is skipped
			_, r2, err := c.NextReader(ctx)
			if err != nil {
				res.next = append(res.next, "error: "+err.Error())
				break
			}
			b, err := io.ReadAll(r2)
			if err != nil {
				res.next = append(res.next, "error: "+err.Error())
				break
			}
			res.next = append(res.next, string(b))
		}
		_, res.stale = r.Read(buf)
		done <- res
	})
	rc, resp := dialRaw(t, ts, goodHeaders+"Sec-WebSocket-Extensions: permessage-deflate\r\n")
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", resp.StatusCode)
	}
	defer rc.nc.Close()
	z := newZpeer(resp)
	rc.send(fr(0x01, "first part, "), fr(0x00, "more of it, "), fr(0x80, "the end"))
	rc.send(fr(0x81, "")) // an empty message
	rc.sendMessage(z, opText, []byte(strings.Repeat("compressed ", 20)), 0)
	rc.send(fr(0x82, "whole"))
	got := <-done
	want := []string{"", strings.Repeat("compressed ", 20), "whole"}
	if got.first != "first" || len(got.next) != 3 || got.next[0] != want[0] || got.next[1] != want[1] || got.next[2] != want[2] {
		t.Fatalf("got first %q, then %q; want \"first\", then %q", got.first, got.next, want)
	}
	if got.stale != io.EOF {
		t.Fatalf("the abandoned reader's Read = %v, want io.EOF", got.stale)
	}
}

// TestNextReaderOnTheRuntime: our client, on the runtime's stream, reads
// the echo of a message written in fragments (NextWriter) in small
// reads, and a ReadMessage after an unfinished reader gets the next
// message.
func TestNextReaderOnTheRuntime(t *testing.T) {
	ts := startEcho(t, &Upgrader{})
	c := dialTest(t, ts, nil)
	defer c.CloseNow()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	payload := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	w, err := c.NextWriter(ctx, BinaryMessage)
	if err != nil {
		t.Fatal(err)
	}
	for p := payload; len(p) > 0; p = p[min(len(p), 10000):] {
		if _, err := w.Write(p[:min(len(p), 10000)]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	typ, r, err := c.NextReader(ctx)
	if err != nil || typ != BinaryMessage {
		t.Fatalf("NextReader = %v, %v", typ, err)
	}
	var got bytes.Buffer
	reads := 0
	buf := make([]byte, 777)
	for {
		n, err := r.Read(buf)
		got.Write(buf[:n])
		if n > 0 {
			reads++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got.Bytes(), payload) {
		t.Fatalf("read %d bytes back, want the %d written", got.Len(), len(payload))
	}
	if reads < len(payload)/len(buf) {
		t.Errorf("%d reads for %d bytes in a %d-byte buffer", reads, len(payload), len(buf))
	}
	// An unfinished reader, then ReadMessage through the blocking Read.
	for _, m := range []string{"abandoned in the middle", "next"} {
		if err := c.Write(ctx, TextMessage, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	_, r, err = c.NextReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(buf[:4]); err != nil {
		t.Fatal(err)
	}
	if _, p, err := c.Read(ctx); err != nil || string(p) != "next" {
		t.Fatalf("Read after an unfinished reader = %q, %v; want \"next\"", p, err)
	}
}

// TestReadDuringCloseHandshake: a goroutine that reads on while another
// runs the close handshake (CloseContext reads the peer's answer, holding
// the reader role) gets the close's error instead of waiting or
// panicking, and the two never touch the reader's state at once (the
// race detector watches). With Read and with NextReader, on net/http and
// on the runtime's streams.
func TestReadDuringCloseHandshake(t *testing.T) {
	rounds := 30
	if testing.Short() {
		rounds = 10
	}
	for _, server := range []string{"net/http", "runtime"} {
		for _, how := range []string{"Read", "NextReader"} {
			t.Run(server+"/"+how, func(t *testing.T) {
				readDuringCloseHandshake(t, server == "runtime", how == "NextReader", rounds)
			})
		}
	}
}

// readDuringCloseHandshake is a case of TestReadDuringCloseHandshake.
func readDuringCloseHandshake(t *testing.T, onRuntime, parts bool, rounds int) {
	readErrs := make(chan error, rounds)
	closeErrs := make(chan error, rounds)
	serve := netHTTPServer
	if onRuntime {
		serve = runtimeServer
	}
	ts := serve(t, &Upgrader{}, func(c *Conn) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var closing sync.WaitGroup
		defer closing.Wait()
		for {
			var p []byte
			var err error
			if parts {
				var r *MessageReader
				if _, r, err = c.NextReader(ctx); err == nil {
					p, err = io.ReadAll(r)
				}
			} else {
				_, p, err = c.Read(ctx)
			}
			if err != nil {
				readErrs <- err
				return
			}
			if string(p) == "close" {
				closing.Add(1)
				go func() {
					defer closing.Done()
					closeErrs <- c.CloseContext(ctx, StatusNormalClosure, "bye")
				}()
			}
		}
	})
	if ts.rt == nil {
		ts.rt = newRuntime(t)
	}
	for i := range rounds {
		c := dialTest(t, ts, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := c.Write(ctx, TextMessage, []byte("close")); err != nil {
			t.Fatalf("round %d: write: %v", i, err)
		}
		_, _, err := c.Read(ctx) // answers the server's close
		cancel()
		var ce *CloseError
		if !errors.As(err, &ce) || ce.Code != StatusNormalClosure || ce.Reason != "bye" {
			t.Fatalf("round %d: the client read %v, want the server's close", i, err)
		}
		_ = c.CloseNow()
		if err := <-closeErrs; err != nil {
			t.Fatalf("round %d: CloseContext: %v", i, err)
		}
		if err := <-readErrs; err == nil {
			t.Fatalf("round %d: the server's read ended without an error", i)
		}
	}
}
