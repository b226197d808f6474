package wsinterop

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// peerClient is another library's client, driven by the checks of
// TestMatrix against our server.
type peerClient interface {
	send(binary bool, p []byte) error
	// sendFragments sends p as one message in fragments of fragChunk
	// bytes; errNA if the library cannot.
	sendFragments(binary bool, p []byte) error
	recv() (binary bool, p []byte, err error)
	// ping sends a ping with p and waits for the pong with the same
	// payload (reading on); errNA if the library cannot tell.
	ping(p []byte) error
	// pings are the payloads of the pings the library received and
	// answered (nil if it cannot tell).
	pings() <-chan string
	// closeHandshake sends a close frame with code and reason and returns
	// the server's answer, as the library tells it.
	closeHandshake(code int, reason string) (closeInfo, error)
	// recvClose reads until the server's close frame, which the library
	// answers, and returns it.
	recvClose() (closeInfo, error)
	// extensions is the Sec-WebSocket-Extensions the handshake agreed.
	extensions() string
	abort()
}

// peer is another library: its client and its echo server (which obeys
// the commands of common_test.go and reports to ev).
type peer struct {
	name    string
	deflate bool   // the library speaks permessage-deflate
	noFrag  string // why it cannot send fragmented messages, "" if it can
	dial    func(t *testing.T, url string, m mode, cnt *counter) (peerClient, error)
	serve   func(t *testing.T, m mode, ev *events, cnt *counter) string
}

var peers []peer // registered by the peer files' init

// The outcome of each cell, for WS_MATRIX.
var (
	resultsMu sync.Mutex
	results   = map[string]string{}
)

// noteExt records the extension a cell negotiated.
func noteExt(key, ext string) {
	resultsMu.Lock()
	negotiated[key] = ext
	resultsMu.Unlock()
}

var negotiated = map[string]string{}

func record(t *testing.T, key string) {
	t.Cleanup(func() {
		out := "pass"
		switch {
		case t.Failed():
			out = "FAIL"
		case t.Skipped():
			out = "n.a."
		}
		resultsMu.Lock()
		results[key] = out
		resultsMu.Unlock()
	})
}

// check runs one check as a subtest whose outcome is recorded.
func check(t *testing.T, key, name string, f func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		record(t, key+"|"+name)
		f(t)
	})
}

func TestMain(m *testing.M) {
	code := m.Run()
	if path := os.Getenv("WS_MATRIX"); path != "" {
		var keys []string
		for k := range results {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		b.WriteString("| peer | direction | compression | check | result |\n|---|---|---|---|---|\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "| %s | %s |\n", strings.ReplaceAll(k, "|", " | "), results[k])
		}
		keys = keys[:0]
		for k := range negotiated {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("\n| peer | direction | compression | Sec-WebSocket-Extensions |\n|---|---|---|---|\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "| %s | `%s` |\n", strings.ReplaceAll(k, "|", " | "), negotiated[k])
		}
		_ = os.WriteFile(path, []byte(b.String()), 0o644)
	}
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreCurrent()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// TestMatrix runs every check of every peer, both directions, with and
// without compression.
func TestMatrix(t *testing.T) {
	for _, p := range peers {
		t.Run(p.name, func(t *testing.T) {
			for _, m := range []mode{plain, deflate, takeover} {
				name := m.String()
				t.Run("their_client/"+name, func(t *testing.T) {
					key := p.name + "|their client → our server|" + name
					if m != plain && !p.deflate {
						record(t, key+"|all")
						t.Skip("the library has no permessage-deflate")
					}
					theirClientOurServer(t, p, m, key)
				})
				t.Run("our_client/"+name, func(t *testing.T) {
					key := p.name + "|our client → their server|" + name
					if m != plain && !p.deflate {
						record(t, key+"|all")
						t.Skip("the library has no permessage-deflate")
					}
					ourClientTheirServer(t, p, m, key)
				})
			}
		})
	}
}

// wireCheck fails when compression was on but the bytes on the wire were
// not well under the payload's.
func wireCheck(t *testing.T, deflate bool, cnt *counter, payloadBytes int) {
	t.Helper()
	// A side counts a write when it returns, which may be after the peer
	// read it all: let the last one be counted.
	time.Sleep(20 * time.Millisecond)
	r, w := cnt.read.Load(), cnt.written.Load()
	t.Logf("on the wire: %d read, %d written, for %d bytes of payload each way", r, w, payloadBytes)
	if deflate && (r > int64(payloadBytes)/2 || w > int64(payloadBytes)/2) {
		t.Fatalf("compression on, yet %d read and %d written for %d bytes of payload", r, w, payloadBytes)
	}
}

func theirClientOurServer(t *testing.T, p peer, m mode, key string) {
	deflate := m != plain
	ev := newEvents()
	url := startOurServer(t, m, ev)
	var cnt counter
	dial := func(t *testing.T) peerClient {
		c, err := p.dial(t, url, m, &cnt)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		t.Cleanup(c.abort)
		return c
	}
	c := dial(t)
	check(t, key, "handshake", func(t *testing.T) {
		ext := c.extensions()
		noteExt(key, ext)
		if hasDeflate(ext) != deflate {
			t.Fatalf("Sec-WebSocket-Extensions %q, deflate %v", ext, deflate)
		}
	})
	check(t, key, "echo 0-300KB text+binary", func(t *testing.T) {
		total := 0
		for _, n := range testSizes() {
			for _, bin := range []bool{false, true} {
				msg := payload(n, bin)
				total += n
				if err := c.send(bin, msg); err != nil {
					t.Fatalf("%d bytes: send: %v", n, err)
				}
				gb, got, err := c.recv()
				if err != nil {
					t.Fatalf("%d bytes: recv: %v", n, err)
				}
				if gb != bin || string(got) != string(msg) {
					t.Fatalf("%d bytes binary=%v: got binary=%v, %d bytes", n, bin, gb, len(got))
				}
			}
		}
		wireCheck(t, deflate, &cnt, total)
	})
	check(t, key, "fragmented from client", func(t *testing.T) {
		if p.noFrag != "" {
			t.Skip(p.noFrag)
		}
		for _, n := range []int{0, 1000, 2500, big()} {
			for _, bin := range []bool{false, true} {
				msg := payload(n, bin)
				if err := c.sendFragments(bin, msg); err != nil {
					t.Fatalf("sendFragments: %v", err)
				}
				gb, got, err := c.recv()
				if err != nil || gb != bin || string(got) != string(msg) {
					t.Fatalf("%d bytes: got binary=%v, %d bytes, %v", n, gb, len(got), err)
				}
			}
		}
	})
	check(t, key, "fragmented from server", func(t *testing.T) {
		for _, n := range []int{1, 2500, big()} {
			msg := payload(n, false)
			if err := c.send(false, append([]byte(cmdFrag), msg...)); err != nil {
				t.Fatal(err)
			}
			gb, got, err := c.recv()
			if err != nil || gb || string(got) != string(msg) {
				t.Fatalf("%d bytes: got binary=%v, %d bytes, %v", n, gb, len(got), err)
			}
		}
	})
	check(t, key, "ping from client", func(t *testing.T) {
		if err := c.ping([]byte("client-ping")); err != nil {
			if errors.Is(err, errNA) {
				t.Skip(err)
			}
			t.Fatal(err)
		}
	})
	check(t, key, "ping from server", func(t *testing.T) {
		ch := c.pings()
		if ch == nil {
			t.Skip("the library does not tell its pings")
		}
		if err := c.send(false, []byte(cmdPing+"server-ping")); err != nil {
			t.Fatal(err)
		}
		// The library sees the ping while it reads: read an echo after it.
		if err := c.send(false, []byte("after ping")); err != nil {
			t.Fatal(err)
		}
		if _, got, err := c.recv(); err != nil || string(got) != "after ping" {
			t.Fatalf("echo after the ping: %q, %v", got, err)
		}
		if got := waitFor(t, ch, "the ping"); got != "server-ping" {
			t.Fatalf("ping payload %q", got)
		}
	})
	check(t, key, "close from client", func(t *testing.T) {
		got, err := c.closeHandshake(clientCode, clientReason)
		switch {
		case errors.Is(err, errNoAnswer):
			t.Logf("client: %v; checking the server's side only", err)
		case err != nil:
			t.Fatalf("close: %v", err)
		case got.code != clientCode:
			t.Fatalf("server answered close code %d, want %d", got.code, clientCode)
		}
		if seen := waitFor(t, ev.closes, "the server's read of the close"); seen != (closeInfo{clientCode, clientReason}) {
			t.Fatalf("server saw %+v", seen)
		}
	})
	check(t, key, "close from server", func(t *testing.T) {
		c := dial(t)
		if err := c.send(false, []byte(cmdClose)); err != nil {
			t.Fatal(err)
		}
		got, err := c.recvClose()
		if err != nil {
			t.Fatalf("recvClose: %v", err)
		}
		if got != (closeInfo{serverCode, serverReason}) {
			t.Fatalf("client saw close %+v", got)
		}
		if err := waitFor(t, ev.closeDone, "the server's close handshake"); err != nil {
			t.Fatal(err)
		}
		if seen := waitFor(t, ev.closes, "the client's answer"); seen.code != serverCode {
			t.Fatalf("client answered %+v, want code %d", seen, serverCode)
		}
	})
}

func ourClientTheirServer(t *testing.T, p peer, m mode, key string) {
	deflate := m != plain
	ev := newEvents()
	var cnt counter
	url := p.serve(t, m, ev, &cnt)
	rt := ourRuntime(t)
	c := dialOurs(t, rt, url, m)
	check(t, key, "handshake", func(t *testing.T) {
		ext := c.c.Extensions()
		noteExt(key, ext)
		if isOurExt(ext) != deflate {
			t.Fatalf("Extensions() = %q, deflate %v", ext, deflate)
		}
	})
	check(t, key, "echo 0-300KB text+binary", func(t *testing.T) {
		total := 0
		for _, n := range testSizes() {
			for _, bin := range []bool{false, true} {
				total += n
				c.echo(t, bin, false, payload(n, bin))
			}
		}
		wireCheck(t, deflate, &cnt, total)
	})
	check(t, key, "fragmented from client", func(t *testing.T) {
		for _, n := range []int{0, 1000, 2500, big()} {
			for _, bin := range []bool{false, true} {
				c.echo(t, bin, true, payload(n, bin))
			}
		}
	})
	check(t, key, "fragmented from server", func(t *testing.T) {
		if p.noFrag != "" {
			t.Skip(p.noFrag)
		}
		for _, n := range []int{1, 2500, big()} {
			msg := payload(n, false)
			if err := c.c.Write(c.ctx, 1, append([]byte(cmdFrag), msg...)); err != nil {
				t.Fatal(err)
			}
			c.expect(t, 1, msg)
		}
	})
	check(t, key, "ping from client", func(t *testing.T) {
		if err := c.c.PingContext(c.ctx, []byte("client-ping")); err != nil {
			t.Fatal(err)
		}
		if got := waitFor(t, ev.pings, "the server's ping handler"); got != "client-ping" {
			t.Fatalf("server saw ping %q", got)
		}
		c.echo(t, false, false, []byte("after ping")) // the pong was read and dropped
	})
	check(t, key, "ping from server", func(t *testing.T) {
		// Our reader answers the ping as it reads the echo after it; the
		// server's library checks the pong's payload (see its serve).
		if err := c.c.Write(c.ctx, 1, []byte(cmdPing+"server-ping")); err != nil {
			t.Fatal(err)
		}
		// The ping may arrive after the echo: read on until the server
		// tells it had its pong.
		for i := 0; ; i++ {
			c.echo(t, false, false, []byte("after ping"))
			select {
			case got := <-ev.pings:
				if got != "pong:server-ping" {
					t.Fatalf("server saw %q", got)
				}
				return
			case <-time.After(50 * time.Millisecond):
			}
			if i == 100 {
				t.Fatal("the server had no pong")
			}
		}
	})
	check(t, key, "close from client", func(t *testing.T) {
		got := c.closeHandshake(t)
		if got.code != clientCode {
			t.Fatalf("server answered %+v, want code %d", got, clientCode)
		}
		if seen := waitFor(t, ev.closes, "the server's close"); seen != (closeInfo{clientCode, clientReason}) {
			t.Fatalf("server saw %+v", seen)
		}
	})
	check(t, key, "close from server", func(t *testing.T) {
		c := dialOurs(t, rt, url, m)
		if err := c.c.Write(c.ctx, 1, []byte(cmdClose)); err != nil {
			t.Fatal(err)
		}
		if got := c.readClose(t); got != (closeInfo{serverCode, serverReason}) {
			t.Fatalf("client saw %+v", got)
		}
		select {
		case err := <-ev.closeDone:
			if errors.Is(err, errNoAnswer) {
				t.Logf("server: %v", err)
			} else if err != nil {
				t.Fatal(err)
			}
		case <-time.After(ioTimeout):
			t.Fatal("server's close handshake did not end")
		}
	})
}

// pongBeforeEcho is the end of a client's ping check for libraries whose
// pong handler runs inside a read: it sends a message, reads its echo, and
// requires the pong of the ping with payload p to have come before it.
func pongBeforeEcho(c peerClient, pongs <-chan string, p []byte) error {
	if err := c.send(false, []byte("after ping")); err != nil {
		return err
	}
	if _, _, err := c.recv(); err != nil {
		return err
	}
	select {
	case got := <-pongs:
		if got != string(p) {
			return fmt.Errorf("pong %q", got)
		}
		return nil
	default:
		return errors.New("no pong before the echo")
	}
}
