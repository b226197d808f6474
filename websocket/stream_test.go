package websocket

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// UpgradeStream on the runtime's TCP streams (pooled reads): a handshake
// that arrives a byte at a time, one that arrives with the client's first
// frame in the same segment, and our client with a subprotocol and
// compression; each connection then echoes. A stream that ends within the
// request fails with ErrBadHandshake and io.ErrUnexpectedEOF.
func TestUpgradeStreamOnTCP(t *testing.T) {
	rt := newRuntime(t)
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	up := &Upgrader{Subprotocols: []string{"chat"}, Compression: &CompressionOptions{}}
	errc := serveStreams(t, rt, l, up)
	req := "GET /ws HTTP/1.1\r\nHost: " + l.Addr().String() + "\r\n" + goodHeaders + "\r\n"
	msg := frame(0x81, []byte("hello"))

	for _, tc := range []struct {
		name   string
		chunks [][]byte
	}{
		{"byte at a time", split(append([]byte(req), msg...), 1)},
		{"head and frame in one write", [][]byte{append([]byte(req), msg...)}},
		{"head, then frame", [][]byte{[]byte(req), msg}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
			if tcp, ok := nc.(*net.TCPConn); ok {
				_ = tcp.SetNoDelay(true)
			}
			go func() {
				for _, c := range tc.chunks {
					if _, err := nc.Write(c); err != nil {
						return
					}
					if len(tc.chunks) > 1 {
						time.Sleep(100 * time.Microsecond)
					}
				}
			}()
			br := bufio.NewReader(nc)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("X-Served-By") != "UpgradeStream" ||
				resp.Header.Get("Sec-WebSocket-Accept") != AcceptKey("dGhlIHNhbXBsZSBub25jZQ==") {
				t.Fatalf("response %d %v", resp.StatusCode, resp.Header)
			}
			if err := <-errc; err != nil {
				t.Fatalf("UpgradeStream: %v", err)
			}
			echo := make([]byte, 7)
			if _, err := io.ReadFull(br, echo); err != nil {
				t.Fatal(err)
			}
			if string(echo) != "\x81\x05hello" {
				t.Fatalf("echo %q", echo)
			}
		})
	}

	t.Run("our client", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, resp, err := DialContext(ctx, rt.Handle(), "ws://"+l.Addr().String()+"/ws", &DialOptions{Subprotocols: []string{"chat"}, Compression: &CompressionOptions{}})
		if err != nil {
			t.Fatal(err)
		}
		if err := <-errc; err != nil {
			t.Fatalf("UpgradeStream: %v", err)
		}
		if resp.Header.Get("X-Served-By") != "UpgradeStream" || c.Subprotocol() != "chat" || c.Extensions() == "" {
			t.Fatalf("subprotocol %q, extensions %q, header %v", c.Subprotocol(), c.Extensions(), resp.Header)
		}
		echoCheck(t, ctx, c, TextMessage, []byte("compressed hello, compressed hello, compressed hello"), false)
		if err := c.CloseContext(ctx, StatusNormalClosure, ""); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("end within the request", func(t *testing.T) {
		nc, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(nc, req[:len(req)/2])
		time.Sleep(10 * time.Millisecond)
		_ = nc.Close()
		err = <-errc
		if !errors.Is(err, ErrBadHandshake) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("UpgradeStream: %v", err)
		}
	})
}

// split cuts b into chunks of n bytes.
func split(b []byte, n int) [][]byte {
	var out [][]byte
	for len(b) > n {
		out = append(out, b[:n])
		b = b[n:]
	}
	return append(out, b)
}

// Request returns the request of a handshake checked on its raw bytes,
// read when asked, and the one read by the general path.
func TestUpgradeFutureRequest(t *testing.T) {
	for _, tc := range []struct {
		up   *Upgrader
		path string
	}{{&Upgrader{}, "raw"}, {&Upgrader{CheckOrigin: func(*http.Request) bool { return true }}, "general"}} {
		f := tc.up.UpgradeStream(nil, nil)
		f.answer([]byte("GET /ws?q=1 HTTP/1.1\r\nHost: example.com\r\nX-Token: abc\r\n" + goodHeaders + "\r\n"))
		if f.err != nil || f.c == nil {
			t.Fatalf("%s: refused: %v", tc.path, f.err)
		}
		r := f.Request()
		if r == nil || r.URL.Path != "/ws" || r.URL.RawQuery != "q=1" || r.Host != "example.com" || r.Header.Get("X-Token") != "abc" {
			t.Fatalf("%s: Request() = %+v", tc.path, r)
		}
	}
	// A refused request is read too (here: no Sec-WebSocket-Key).
	f := (&Upgrader{}).UpgradeStream(nil, nil)
	f.answer([]byte("GET /ws HTTP/1.1\r\nHost: example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n"))
	if f.err == nil || f.Request() == nil || f.Request().URL.Path != "/ws" {
		t.Fatalf("refused request: err %v, Request() %v", f.err, f.Request())
	}
}

// TestUpgradeStreamAllocations: answering a browser's handshake read
// whole takes three allocations: the future, the copy of the head that
// Request reads, and the Conn. The 101 answer is written from a pooled
// buffer, which goes back to the pool once written.
func TestUpgradeStreamAllocations(t *testing.T) {
	head := []byte(handshakeCorpus()[1])
	u := &Upgrader{}
	n := testing.AllocsPerRun(100, func() {
		f := u.UpgradeStream(nil, nil)
		f.answer(head)
		if f.c == nil || !f.pooled {
			t.Fatalf("refused, or answered from a buffer of its own (%v)", f.pooled)
		}
		answerBufs.Put((*[answerRoom]byte)(f.buf[:answerRoom])) // as the write's end does
	})
	if n > 3 {
		t.Errorf("%.0f allocations to answer a handshake; want 3", n)
	}
	f := u.UpgradeStream(nil, nil)
	f.answer(head)
	if r := f.Request(); r == nil || r.Header.Get("Origin") != "http://localhost:8080" {
		t.Fatalf("Request() = %v", r)
	}
}

// An answer longer than the pooled buffers is an allocation of its own,
// whole, and the buffer it did not fit in goes back to the pool.
func TestUpgradeStreamLongAnswer(t *testing.T) {
	head := []byte(handshakeCorpus()[1])
	long := http.Header{"X-Long": {strings.Repeat("v", answerRoom)}}
	f := (&Upgrader{}).UpgradeStream(nil, long)
	f.answer(head)
	if f.c == nil || f.pooled {
		t.Fatalf("refused, or answered from a pooled buffer (%v)", f.pooled)
	}
	want, _, _, _ := referenceAnswer(&Upgrader{}, head, long)
	if !bytes.Equal(f.buf, want) {
		t.Fatalf("answer\n%q\nwant\n%q", f.buf, want)
	}
}

// pooledConn accepts one connection on a runtime TCP listener and returns
// a server Conn over it (the handshake skipped) and the client's end.
func pooledConn(t *testing.T, rt *blitz.Runtime) (*Conn, net.Conn) {
	t.Helper()
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	nc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	s, err := blitz.BlockOn(context.Background(), rt.Handle(), future.Future[future.Result[*blitz.TCPStream]](l.Accept()))
	if err != nil || s.Err != nil {
		t.Fatalf("accept: %v %v", err, s.Err)
	}
	return newConn(s.Value, false, "", nil, nil), nc
}

// A message read from a pooled read is handed out in the pool's buffer,
// which the connection gives back at the next read, and when it is closed
// without another read, or closed after a read that failed: a closed
// connection keeps no buffer of the runtime's pool.
func TestPooledBufferGivenBack(t *testing.T) {
	rt := newRuntime(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	inPool := func(c *Conn) bool {
		if !c.reading.CompareAndSwap(readFree, readHeld) {
			t.Fatal("a reader is active")
		}
		defer c.reading.Store(readFree)
		return c.rs != nil && c.rs.inPool()
	}

	t.Run("next read", func(t *testing.T) {
		c, nc := pooledConn(t, rt)
		_, _ = nc.Write(append(frame(0x82, []byte("one")), frame(0x82, []byte("two"))...))
		for _, want := range []string{"one", "two"} {
			_, p, err := c.Read(ctx)
			if err != nil || string(p) != want {
				t.Fatalf("read %q, %v; want %q", p, err, want)
			}
			if !inPool(c) {
				t.Fatalf("%q was not read in place", want)
			}
		}
		_, _ = nc.Write(frame(0x82, []byte("three")))
		if _, p, err := c.Read(ctx); err != nil || string(p) != "three" {
			t.Fatalf("read %q, %v", p, err)
		}
		_ = c.CloseNow()
		if inPool(c) {
			t.Fatal("the closed connection holds a pool buffer")
		}
	})

	t.Run("frame across reads", func(t *testing.T) {
		c, nc := pooledConn(t, rt)
		f := frame(0x82, bytes.Repeat([]byte("x"), 3000))
		go func() {
			_, _ = nc.Write(f[:5])
			time.Sleep(20 * time.Millisecond)
			_, _ = nc.Write(f[5:])
		}()
		if _, p, err := c.Read(ctx); err != nil || len(p) != 3000 || p[2999] != 'x' {
			t.Fatalf("read %d bytes, %v", len(p), err)
		}
		_ = c.CloseNow()
		if inPool(c) {
			t.Fatal("the closed connection holds a pool buffer")
		}
	})

	t.Run("failed read", func(t *testing.T) {
		c, nc := pooledConn(t, rt)
		bad := frame(0x82, []byte("ok"))
		bad = append(bad, 0x82, 0x05, 'u', 'n', 'm', 'a', 's') // unmasked: a protocol error
		_, _ = nc.Write(bad)
		if _, p, err := c.Read(ctx); err != nil || string(p) != "ok" {
			t.Fatalf("read %q, %v", p, err)
		}
		if _, _, err := c.Read(ctx); err == nil {
			t.Fatal("the unmasked frame was accepted")
		}
		_ = nc.Close()
		_ = c.CloseContext(ctx, StatusNormalClosure, "") // the peer is gone: an error, or not

		if inPool(c) {
			t.Fatal("the failed and closed connection holds a pool buffer")
		}
	})
}

// Random messages (one frame or several, small and over the read buffer,
// with pings between the fragments) sent over TCP in random pieces, some
// split inside a header: a server reading through pooled reads, in the
// pool's buffer and in buffers of its own, receives each message whole
// and in order, answers every ping, and holds no pool buffer once closed.
func TestPooledReadsRandomSegments(t *testing.T) {
	rt := newRuntime(t)
	rng := rand.New(rand.NewPCG(3, 5))
	rounds := 6
	if testing.Short() {
		rounds = 2
	}
	for round := range rounds {
		c, nc := pooledConn(t, rt)
		var stream []byte
		var want [][]byte
		pings := 0
		for range 40 {
			size := []int{0, 1, 125, 126, 1000, 5000, 70000}[rng.IntN(7)]
			msg := make([]byte, size)
			for i := range msg {
				msg[i] = byte(rng.Uint32())
			}
			want = append(want, msg)
			parts := 1 + rng.IntN(3)
			if size < parts {
				parts = 1
			}
			for p := range parts {
				op := byte(0x00)
				if p == 0 {
					op = 0x02
				}
				if p == parts-1 {
					op |= 0x80
				}
				stream = append(stream, frame(op, msg[p*size/parts:(p+1)*size/parts])...)
				if p < parts-1 && rng.IntN(3) == 0 {
					stream = append(stream, frame(0x89, []byte("ping"))...)
					pings++
				}
			}
		}
		go func() {
			r := rand.New(rand.NewPCG(uint64(round), 9))
			for len(stream) > 0 {
				n := min(len(stream), 1+r.IntN(3000))
				if _, err := nc.Write(stream[:n]); err != nil {
					return
				}
				stream = stream[n:]
				if r.IntN(4) == 0 {
					time.Sleep(time.Duration(r.IntN(300)) * time.Microsecond)
				}
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		for i, w := range want {
			_, p, err := c.Read(ctx)
			if err != nil || !bytes.Equal(p, w) {
				cancel()
				t.Fatalf("round %d, message %d: %d bytes, %v; want %d bytes", round, i, len(p), err, len(w))
			}
		}
		cancel()
		pongs := 0
		_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(nc)
		for pongs < pings {
			var hdr [2]byte
			if _, err := io.ReadFull(br, hdr[:]); err != nil {
				t.Fatalf("round %d: %d pongs of %d: %v", round, pongs, pings, err)
			}
			if hdr[0] != 0x8a || hdr[1] != 4 {
				t.Fatalf("round %d: frame %x, want a pong of 4 bytes", round, hdr)
			}
			if _, err := io.ReadFull(br, make([]byte, 4)); err != nil {
				t.Fatal(err)
			}
			pongs++
		}
		_ = c.CloseNow()
		if !c.reading.CompareAndSwap(readFree, readHeld) {
			t.Fatal("a reader is active after the reads")
		}
		if c.rs != nil && c.rs.inPool() {
			t.Fatalf("round %d: the closed connection holds a pool buffer", round)
		}
		c.reading.Store(readFree)
	}
}

// A connection that broke on its own (its transport closed under it, as a
// failed write closes it) keeps the last message's Data valid: the pool's
// buffer goes back only at the user's next read or close.
func TestPooledBufferKeptUntilTheUsersClose(t *testing.T) {
	rt := newRuntime(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, nc := pooledConn(t, rt)
	_, _ = nc.Write(frame(0x82, []byte("the last words")))
	_, p, err := c.Read(ctx)
	if err != nil || string(p) != "the last words" {
		t.Fatalf("read %q, %v", p, err)
	}
	c.closeTransport() // as a failed write does
	if string(p) != "the last words" || !c.rs.inPool() {
		t.Fatalf("Data after the transport closed: %q (held: %v)", p, c.rs.inPool())
	}
	_ = c.CloseNow()
	if c.rs != nil && c.rs.inPool() {
		t.Fatal("CloseNow left the pool buffer held")
	}
}

// A MessageReader left inside its message does not keep the connection's
// reader role from its close: CloseNow gives the pool's buffer back, and
// a CloseContext skips the rest of the message, reads the peer's answer
// and returns without waiting out CloseTimeout; the abandoned reader's
// next Read fails with ErrClosed. Before the close, its Read takes up the
// message where it left it.
func TestAbandonedMessageReaderAndClose(t *testing.T) {
	rt := newRuntime(t)
	for _, how := range []string{"CloseNow", "CloseContext"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, nc := pooledConn(t, rt)
			c.cfg.closeTimeout = 5 * time.Second
			_, _ = nc.Write(frame(0x01, []byte("hello "))) // text, not final
			typ, r, err := c.NextReader(ctx)
			if err != nil || typ != TextMessage {
				t.Fatalf("NextReader: %v, %v", typ, err)
			}
			buf := make([]byte, 3)
			if n, err := r.Read(buf); err != nil || string(buf[:n]) != "hel" {
				t.Fatalf("first Read: %q, %v", buf[:n], err)
			}
			if n, err := r.Read(buf); err != nil || string(buf[:n]) != "lo " {
				t.Fatalf("second Read: %q, %v", buf[:n], err)
			}
			// The reader now waits for the next fragment: left, not held.
			switch how {
			case "CloseNow":
				_ = c.CloseNow()
				if !c.reading.CompareAndSwap(readFree, readHeld) {
					t.Fatal("the reader role is still held after CloseNow")
				}
				if c.rs != nil && c.rs.inPool() {
					t.Fatal("the closed connection holds a pool buffer")
				}
				c.reading.Store(readFree)
			case "CloseContext":
				answered := make(chan error, 1)
				go func() {
					// The peer finishes its message, then answers the close.
					_, _ = nc.Write(frame(0x80, []byte("world")))
					br := bufio.NewReader(nc)
					var hdr [2]byte
					if _, err := io.ReadFull(br, hdr[:]); err != nil {
						answered <- err
						return
					}
					if hdr[0] != 0x88 {
						answered <- fmt.Errorf("frame %x, want a close", hdr)
						return
					}
					_, err := nc.Write(closeFrame(int(StatusNormalClosure), ""))
					answered <- err
				}()
				start := time.Now()
				if err := c.CloseContext(ctx, StatusNormalClosure, "bye"); err != nil {
					t.Fatalf("CloseContext: %v", err)
				}
				if d := time.Since(start); d > 2*time.Second {
					t.Fatalf("CloseContext took %v: it waited for the abandoned reader", d)
				}
				if err := <-answered; err != nil {
					t.Fatalf("peer: %v", err)
				}
				if c.rs != nil && c.rs.inPool() {
					t.Fatal("the closed connection holds a pool buffer")
				}
			}
			if n, err := r.Read(buf); n != 0 || !errors.Is(err, ErrClosed) {
				t.Fatalf("the abandoned reader's Read after the close: %d, %v; want ErrClosed", n, err)
			}
		})
	}
}

// A MessageReader whose message a later read took over reads io.EOF, and
// the later read gets the next message; a reader that goes on reading
// its own message after another reader was left gets io.EOF too.
func TestMessageReaderTakenOver(t *testing.T) {
	rt := newRuntime(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, nc := pooledConn(t, rt)
	_, _ = nc.Write(frame(0x02, []byte("first part "))) // binary, not final
	_, r1, err := c.NextReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if n, err := r1.Read(buf); err != nil || string(buf[:n]) != "first" {
		t.Fatalf("Read: %q, %v", buf[:n], err)
	}
	_, _ = nc.Write(append(frame(0x80, []byte("and the end")), frame(0x82, []byte("second"))...))
	_, p, err := c.Read(ctx)
	if err != nil || string(p) != "second" {
		t.Fatalf("the next Read: %q, %v", p, err)
	}
	if n, err := r1.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("the taken-over reader: %d, %v; want io.EOF", n, err)
	}

	// r2 is left inside its message, then r3's NextReader takes it over
	// and is left inside its own: r2's Read must not take r3's message.
	_, _ = nc.Write(frame(0x02, []byte("two ")))
	_, r2, err := c.NextReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := r2.Read(buf[:2]); err != nil || n != 2 {
		t.Fatalf("r2: %d, %v", n, err)
	}
	_, _ = nc.Write(append(frame(0x80, []byte("ends")), frame(0x02, []byte("three "))...))
	_, r3, err := c.NextReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := r3.Read(buf); err != nil || string(buf[:n]) != "three" {
		t.Fatalf("r3: %q, %v", buf[:n], err)
	}
	if n, err := r2.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("r2 after r3 took over: %d, %v; want io.EOF", n, err)
	}
	_, _ = nc.Write(frame(0x80, []byte("end")))
	rest, err := io.ReadAll(r3)
	if err != nil || string(rest) != " end" {
		t.Fatalf("the rest of r3: %q, %v", rest, err)
	}
	_ = c.CloseNow()
}

// A MessageReader's Read that gives up (its context ends) while the next
// fragment has not come leaves the reader role to the message: the
// connection's next read skips the rest of it and gets the next message.
func TestMessageReaderReadCancelled(t *testing.T) {
	rt := newRuntime(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, nc := pooledConn(t, rt)
	_, _ = nc.Write(frame(0x01, []byte("part one, "))) // text, not final
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	_, r, err := c.NextReader(short)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(r); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ReadAll: %v; want the context's deadline", err)
	}
	if c.reading.Load() != readLeft {
		t.Fatalf("reader role %d after the cancelled Read; want left to the message", c.reading.Load())
	}
	_, _ = nc.Write(append(frame(0x80, []byte("part two")), frame(0x81, []byte("next"))...))
	typ, p, err := c.Read(ctx)
	if err != nil || typ != TextMessage || string(p) != "next" {
		t.Fatalf("the next Read: %v %q, %v", typ, p, err)
	}
	_ = c.CloseNow()
}
