package websocket

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The server's answers to requests that are not valid opening handshakes.
func TestHandshakeRefused(t *testing.T) {
	ts := startEcho(t, &Upgrader{Subprotocols: []string{"v2", "v1"}})
	const (
		up   = "Upgrade: websocket\r\n"
		conn = "Connection: keep-alive, Upgrade\r\n"
		ver  = "Sec-WebSocket-Version: 13\r\n"
		key  = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
	)
	for _, tc := range []struct {
		name    string
		headers string
		status  int
		header  string // a header the answer must carry
	}{
		{"ok", up + conn + ver + key, 101, "Sec-WebSocket-Accept"},
		{"missing_upgrade", conn + ver + key, 426, "Upgrade"},
		{"missing_connection", up + ver + key, 426, "Upgrade"},
		{"wrong_version", up + conn + "Sec-WebSocket-Version: 8\r\n" + key, 426, "Sec-WebSocket-Version"},
		{"missing_version", up + conn + key, 426, "Sec-WebSocket-Version"},
		{"missing_key", up + conn + ver, 400, ""},
		{"bad_key_length", up + conn + ver + "Sec-WebSocket-Key: c2hvcnQ=\r\n", 400, ""},
		{"bad_key_base64", up + conn + ver + "Sec-WebSocket-Key: !!!!!!!!!!!!!!!!!!!!!!==\r\n", 400, ""},
		{"cross_origin", up + conn + ver + key + "Origin: http://evil.example\r\n", 403, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, resp := dialRaw(t, ts, tc.headers)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.header != "" && resp.Header.Get(tc.header) == "" {
				t.Fatalf("no %s in %v", tc.header, resp.Header)
			}
			if tc.status == 101 && resp.Header.Get("Sec-WebSocket-Accept") != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
				t.Fatalf("accept %q", resp.Header.Get("Sec-WebSocket-Accept"))
			}
		})
	}
	t.Run("same_origin", func(t *testing.T) {
		_, resp := dialRaw(t, ts, up+conn+ver+key+"Origin: http://"+ts.addr+"\r\n")
		if resp.StatusCode != 101 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
	t.Run("post", func(t *testing.T) {
		_, r2 := dialRawMethod(t, ts, "POST", up+conn+ver+key+"Content-Length: 0\r\n")
		if r2.StatusCode != http.StatusMethodNotAllowed {
			t.Fatalf("status %d", r2.StatusCode)
		}
	})
}

// Subprotocols: the server's first choice among the client's offers.
func TestSubprotocols(t *testing.T) {
	ts := startEcho(t, &Upgrader{Subprotocols: []string{"v2", "v1"}})
	for _, tc := range []struct {
		offer []string
		want  string
	}{
		{nil, ""},
		{[]string{"v1"}, "v1"},
		{[]string{"v1", "v2"}, "v2"},
		{[]string{"v3"}, ""},
	} {
		c := dialTest(t, ts, &DialOptions{Subprotocols: tc.offer})
		if c.Subprotocol() != tc.want {
			t.Errorf("offer %v: got %q, want %q", tc.offer, c.Subprotocol(), tc.want)
		}
		_ = c.CloseContext(context.Background(), StatusNormalClosure, "")
	}
}

// The client refuses a server that does not upgrade, and a custom
// CheckOrigin decides.
func TestDialRefused(t *testing.T) {
	ts := startEcho(t, &Upgrader{CheckOrigin: func(r *http.Request) bool { return r.Header.Get("Origin") == "http://ok" }})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, resp, err := DialContext(ctx, ts.rt.Handle(), ts.url("/"), &DialOptions{Header: http.Header{"Origin": {"http://bad"}}})
	if !errors.Is(err, ErrBadHandshake) || resp == nil || resp.StatusCode != 403 {
		t.Fatalf("err %v resp %v", err, resp)
	}
	c, _, err := DialContext(ctx, ts.rt.Handle(), ts.url("/"), &DialOptions{Header: http.Header{"Origin": {"http://ok"}}})
	if err != nil {
		t.Fatal(err)
	}
	_ = c.CloseContext(ctx, StatusNormalClosure, "")
	// A TLS client at a plain server: the server may never answer a ClientHello that holds no line end,
	// so the dial can only fail by its deadline. A short one keeps the test short; the dial must fail.
	tlsCtx, tlsCancel := context.WithTimeout(ctx, time.Second)
	defer tlsCancel()
	if _, _, err := DialContext(tlsCtx, ts.rt.Handle(), "wss://"+ts.addr, nil); err == nil {
		t.Fatal("wss dialled")
	}
}

func TestAcceptKey(t *testing.T) {
	// RFC 6455 section 1.3.
	if got := AcceptKey("dGhlIHNhbXBsZSBub25jZQ=="); got != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Fatal(got)
	}
	// Against the formula, for keys of every length around the valid one
	// (a key of another length is refused, but AcceptKey is public).
	rnd := rand.New(rand.NewPCG(1, 2))
	for n := range 40 {
		for range 20 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(' ' + rnd.IntN(95))
			}
			key := string(b)
			sum := sha1.Sum([]byte(key + acceptGUID))
			if got, want := AcceptKey(key), base64.StdEncoding.EncodeToString(sum[:]); got != want {
				t.Fatalf("AcceptKey(%q) = %q, want %q", key, got, want)
			}
		}
	}
}

// The 101 response is made in one allocation of its exact size, with
// every optional line.
func TestUpgradeResponseExactSize(t *testing.T) {
	r, err := http.NewRequest(http.MethodGet, "http://example.com/chat", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Connection", "Upgrade")
	r.Header.Set("Upgrade", "websocket")
	r.Header.Set("Sec-WebSocket-Version", "13")
	r.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	r.Header.Set("Sec-WebSocket-Protocol", "v1, v2")
	r.Header.Set("Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits")
	u := &Upgrader{Subprotocols: []string{"v2"}, Compression: &CompressionOptions{}}
	extra := http.Header{"X-One": {"a", "bc"}, "X-Two": {""}}
	resp, proto, dfl, ref := u.prepare(r, extra)
	if ref != nil {
		t.Fatal(ref.err)
	}
	if proto != "v2" || dfl == nil {
		t.Fatalf("proto %q, deflate %v", proto, dfl)
	}
	if len(resp) != cap(resp) {
		t.Errorf("response of %d bytes in a buffer of %d", len(resp), cap(resp))
	}
	got := string(resp)
	for _, line := range []string{
		"HTTP/1.1 101 Switching Protocols\r\n", "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n",
		"Sec-WebSocket-Protocol: v2\r\n", "Sec-WebSocket-Extensions: " + dfl.ext + "\r\n",
		"X-One: a\r\n", "X-One: bc\r\n", "X-Two: \r\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("response lacks %q:\n%s", line, got)
		}
	}
	if !strings.HasSuffix(got, "\r\n\r\n") || strings.Count(got, "\r\n\r\n") != 1 {
		t.Errorf("response does not end its header once:\n%s", got)
	}
}
