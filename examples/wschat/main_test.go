package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/examples/wschat/room"
	"github.com/blitz-go/blitz/websocket"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startChat serves the chat on a runtime of its own; departures are sent
// to the returned channel.
func startChat(t *testing.T) (*blitz.Runtime, *chatServer, <-chan room.Departure) {
	t.Helper()
	rt, err := blitz.New(blitz.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	left := make(chan room.Departure, 16)
	s, err := start(rt, "127.0.0.1:0", func(d room.Departure) { left <- d })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Errorf("runtime Shutdown: %v", err)
		}
	})
	return rt, s, left
}

func read(t *testing.T, ctx context.Context, c *websocket.Conn) (websocket.MessageType, string) {
	t.Helper()
	typ, p, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return typ, string(p)
}

// Two members with our client: welcomes, text and binary broadcast to
// both, compression agreed, the close code seen by the room.
func TestRoom(t *testing.T) {
	rt, s, left := startChat(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	url := "ws://" + s.addr.String() + "/ws"
	dial := func() *websocket.Conn {
		c, _, err := websocket.DialContext(ctx, rt.Handle(), url, &websocket.DialOptions{Compression: &websocket.CompressionOptions{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.CloseNow() })
		if !strings.HasPrefix(c.Extensions(), "permessage-deflate") {
			t.Fatalf("Extensions() = %q", c.Extensions())
		}
		return c
	}
	a := dial()
	if _, w := read(t, ctx, a); !strings.HasPrefix(w, "welcome, you are 1 (extensions: permessage-deflate") {
		t.Fatalf("welcome %q", w)
	}
	b := dial()
	if _, w := read(t, ctx, b); !strings.HasPrefix(w, "welcome, you are 2") {
		t.Fatalf("welcome %q", w)
	}
	long := strings.Repeat("all work and no play ", 500)
	if err := a.Write(ctx, websocket.TextMessage, []byte(long)); err != nil {
		t.Fatal(err)
	}
	bin := []byte{0, 1, 2, 0xff}
	if err := b.Write(ctx, websocket.BinaryMessage, bin); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*websocket.Conn{a, b} {
		got := map[string]bool{}
		for range 2 {
			typ, p := read(t, ctx, c)
			got[typ.String()+" "+p] = true
		}
		if !got["text 1: "+long] || !got["binary "+string(bin)] {
			t.Fatalf("got %d messages, not the two broadcast", len(got))
		}
	}
	if err := a.CloseContext(ctx, 4000, "bye"); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-left:
		if d.ID != 1 || d.Code != 4000 || d.Reason != "bye" || !strings.HasPrefix(d.Extensions, "permessage-deflate") {
			t.Fatalf("departure %+v", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no departure")
	}
	// b stays; the server's stop closes it.
}

// The page is served, with its script.
func TestPage(t *testing.T) {
	_, s, _ := startChat(t)
	res, err := http.Get("http://" + s.addr.String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !bytes.Contains(body, []byte("new WebSocket(")) {
		t.Fatalf("status %d, %d bytes", res.StatusCode, len(body))
	}
}

// findChromium returns a headless-capable Chromium, or skips the test
// (fails it on Linux when BLITZ_REQUIRE_CHROMIUM=1, which the magefile's
// test target sets after installing Chromium).
func findChromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("BLITZ_REQUIRE_CHROMIUM") == "1" && goruntime.GOOS == "linux" {
		t.Fatal("no chromium on PATH, and BLITZ_REQUIRE_CHROMIUM=1")
	}
	t.Skip("no chromium on PATH (go tool mage test installs it with BLITZ_INSTALL_CHROMIUM=1)")
	return ""
}

// TestBrowser loads the page in headless Chromium with ?selftest: its
// script exchanges a short text, a long compressible text and a binary
// message with the room over a compressed connection, checks what comes
// back, and only then closes with 4000 "browser done". The room's
// departure with that code and reason, over permessage-deflate, is the
// verdict: it needs the page's checks to have passed and the close
// handshake to have reached the server. Chromium runs in real time until
// then (a virtual-time budget would let the page's clock run ahead of a
// server slowed by a loaded machine), and is stopped after.
func TestBrowser(t *testing.T) {
	chromium := findChromium(t)
	_, s, left := startChat(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-dev-shm-usage", "--no-first-run", "--user-data-dir="+t.TempDir(),
		"--remote-debugging-port=0", // keeps the browser up until stopped
		"http://"+s.addr.String()+"/?selftest")
	// Chromium makes its singleton directory (a socket and a cookie) in TMPDIR and leaves it behind when
	// stopped: the test's own temporary directory, removed after it, takes it. SIGTERM lets the browser
	// shut down before that removal; SIGKILL comes 10 s later.
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cancel()
		<-exited
	}()
	select {
	case d := <-left:
		t.Logf("server: %+v", d)
		if d.Code != 4000 || d.Reason != "browser done" || !strings.HasPrefix(d.Extensions, "permessage-deflate") {
			t.Fatalf("departure %+v (the page closes with 4000 \"browser done\" only when its checks passed)", d)
		}
	case err := <-exited:
		t.Fatalf("chromium exited before the page left the room: %v\n%s", err, stderr.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("the page did not leave the room within 2 minutes\n%s", stderr.String())
	}
}
