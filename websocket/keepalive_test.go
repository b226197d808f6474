package websocket

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
)

// openKeepAlive opens a raw connection to ts, with permessage-deflate
// offered when zip is set, and bounds it by a deadline.
func openKeepAlive(t *testing.T, ts *testServer, zip bool) *rawConn {
	t.Helper()
	h := goodHeaders
	if zip {
		h += "Sec-WebSocket-Extensions: permessage-deflate\r\n"
	}
	rc, resp := dialRaw(t, ts, h)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", resp.StatusCode)
	}
	_ = rc.nc.SetDeadline(time.Now().Add(20 * time.Second))
	return rc
}

// nextPing reads the server's next frame, which must be the policy's
// ping (empty), and returns how long it took.
func nextPing(t *testing.T, rc *rawConn) time.Duration {
	t.Helper()
	start := time.Now()
	f, ok := rc.next()
	if !ok {
		t.Fatal("the stream ended before the keep-alive ping")
	}
	if f.op != opPing || f.payload != "" {
		t.Fatalf("got frame %#x %q, want the keep-alive ping (an empty ping)", f.op, f.payload)
	}
	return time.Since(start)
}

// TestKeepAlivePingsAndFailsASilentPeer: a server connection with a
// keep-alive policy pings a peer that has sent nothing for KeepAlive,
// pings again KeepAlive after the peer's pong, and closes the connection
// KeepAliveTimeout after a ping that nothing answers. Both servers, with
// and without permessage-deflate (which keeps its connection record from
// the start).
func TestKeepAlivePingsAndFailsASilentPeer(t *testing.T) {
	const interval, timeout = 60 * time.Millisecond, 90 * time.Millisecond
	for _, zip := range []bool{false, true} {
		up := &Upgrader{Options: Options{KeepAlive: interval, KeepAliveTimeout: timeout}}
		if zip {
			up.Compression = &CompressionOptions{}
		}
		t.Run("deflate="+strconv.FormatBool(zip), func(t *testing.T) {
			bothServers(t, up, func(t *testing.T, ts *testServer) {
				rc := openKeepAlive(t, ts, zip)
				defer rc.nc.Close()
				// The server's read began before the handshake's answer
				// reached us, so the first ping may come a little sooner
				// than interval after this point; the later ones are
				// measured from our own frames.
				if d := nextPing(t, rc); d > interval+5*time.Second {
					t.Fatalf("first ping after %v", d)
				}
				rc.send(frame(0x8A, nil)) // the pong
				if d := nextPing(t, rc); d < interval-10*time.Millisecond {
					t.Errorf("second ping %v after the pong, want at least %v", d, interval)
				}
				start := time.Now()
				rc.expectEnd() // no pong this time: the server gives up
				if d := time.Since(start); d < timeout-10*time.Millisecond {
					t.Errorf("the server closed %v after its unanswered ping, want at least %v", d, timeout)
				}
			})
		})
	}
}

// TestKeepAliveQuietWhileTheyTalk: a peer that keeps sending is not
// pinged while it talks. A loaded machine may hold the client back longer
// than the interval; a ping is then answered, and allowed only if the
// client had been silent that long.
func TestKeepAliveQuietWhileTheyTalk(t *testing.T) {
	const interval = 80 * time.Millisecond
	talk := 400 * time.Millisecond
	if testing.Short() {
		talk = 200 * time.Millisecond
	}
	up := &Upgrader{Options: Options{KeepAlive: interval}}
	bothServers(t, up, func(t *testing.T, ts *testServer) {
		rc := openKeepAlive(t, ts, false)
		defer rc.nc.Close()
		echoes := 0
		for end := time.Now().Add(talk); time.Now().Before(end); {
			sent := time.Now()
			rc.send(fr(0x81, "still here"))
			for {
				f, ok := rc.next()
				if !ok {
					t.Fatal("the stream ended")
				}
				if f.op == opPing {
					if d := time.Since(sent); d < interval {
						t.Fatalf("pinged %v after the client's last frame, want no ping before %v of silence", d, interval)
					}
					rc.send(frame(0x8A, nil))
					continue
				}
				if f.op != opText || f.payload != "still here" {
					t.Fatalf("got frame %#x %q, want the echo", f.op, f.payload)
				}
				echoes++
				break
			}
			time.Sleep(interval / 8)
		}
		if echoes == 0 {
			t.Fatal("no echo")
		}
		rc.send(closeFrame(1000, ""))
		for {
			f, ok := rc.next()
			if !ok {
				t.Fatal("the stream ended before the close's echo")
			}
			if f.op == opPing {
				continue
			}
			if closeCodeOf(f) != 1000 {
				t.Fatalf("got %#x %q; want the close echoed", f.op, f.payload)
			}
			break
		}
	})
}

// TestKeepAliveBlockingReadOnNetHTTP: the policy on a connection upgraded
// from net/http (a goroutine blocked in Read): the read fails with an
// error that wraps ErrKeepAliveTimeout and os.ErrDeadlineExceeded, and
// carries no close status (the peer sent none).
func TestKeepAliveBlockingReadOnNetHTTP(t *testing.T) {
	const interval = 50 * time.Millisecond
	up := &Upgrader{Options: Options{KeepAlive: interval}}
	errc := make(chan error, 1)
	ts := netHTTPServer(t, up, func(c *Conn) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, _, err := c.Read(ctx)
		errc <- err
	})
	rc := openKeepAlive(t, ts, false)
	defer rc.nc.Close()
	nextPing(t, rc)
	start := time.Now()
	rc.expectEnd()
	if d := time.Since(start); d < interval-10*time.Millisecond {
		t.Errorf("closed %v after the ping, want at least %v (KeepAliveTimeout defaults to KeepAlive)", d, interval)
	}
	err := <-errc
	if !errors.Is(err, ErrKeepAliveTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read: %v, want an error wrapping ErrKeepAliveTimeout and os.ErrDeadlineExceeded", err)
	}
	if s := CloseStatus(err); s != -1 {
		t.Errorf("CloseStatus = %d, want -1: the peer sent no close frame", s)
	}
}

// TestKeepAliveClientAnswersServer: our client and our server, both with
// the policy, stay connected across many intervals without a message:
// each side's reader answers the other's pings.
func TestKeepAliveClientAnswersServer(t *testing.T) {
	// The pings come often; a failure would need two seconds without an
	// answer, which not even a loaded machine takes.
	const interval = 30 * time.Millisecond
	opts := Options{KeepAlive: interval, KeepAliveTimeout: 2 * time.Second}
	ts := startEcho(t, &Upgrader{Options: opts})
	c := dialTest(t, ts, &DialOptions{Options: opts})
	defer c.CloseNow()
	ctx, cancel := context.WithTimeout(context.Background(), 10*interval)
	defer cancel()
	if _, _, err := c.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Read: %v, want the context's deadline (no message, no keep-alive failure)", err)
	}
	if err := c.Write(context.Background(), TextMessage, []byte("after the silence")); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	typ, p, err := c.Read(ctx2)
	if err != nil || typ != TextMessage || string(p) != "after the silence" {
		t.Fatalf("Read = %v %q %v, want the echo", typ, p, err)
	}
}

// TestKeepAliveClientFindsASilentServer: our client's policy pings a
// server that answers the handshake and then says nothing (its ping
// masked, as a client's frames must be), and gives the connection up.
func TestKeepAliveClientFindsASilentServer(t *testing.T) {
	const interval = 50 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pinged := make(chan error, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			pinged <- err
			return
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
		br := bufio.NewReader(nc)
		req, err := http.ReadRequest(br)
		if err != nil {
			pinged <- err
			return
		}
		fmt.Fprintf(nc, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
			AcceptKey(req.Header.Get("Sec-WebSocket-Key")))
		var h [2]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			pinged <- err
			return
		}
		if h[0] != 0x80|opPing || h[1]&0x80 == 0 {
			pinged <- fmt.Errorf("first frame %#x %#x, want a masked ping", h[0], h[1])
			return
		}
		pinged <- nil
		_, _ = io.Copy(io.Discard, br) // and never answer
	}()
	rt, err := blitz.New(blitz.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rt.Shutdown(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, _, err := DialContext(ctx, rt.Handle(), "ws://"+ln.Addr().String()+"/", &DialOptions{Options: Options{KeepAlive: interval}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	_, _, err = c.Read(ctx)
	if perr := <-pinged; perr != nil {
		t.Fatal(perr)
	}
	if !errors.Is(err, ErrKeepAliveTimeout) {
		t.Fatalf("Read: %v, want an error wrapping ErrKeepAliveTimeout", err)
	}
}
