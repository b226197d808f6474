package websocket

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// referenceAnswer is how UpgradeStream answered every request before the
// raw checks: http.ReadRequest, then prepare.
func referenceAnswer(u *Upgrader, head []byte, extra http.Header) (resp []byte, proto string, dfl *deflater, ref *refusal) {
	req, ok := readRequest(head)
	if !ok {
		return nil, "", nil, notHTTP11()
	}
	return u.prepare(req, extra)
}

// handshakeUpgraders are the Upgraders the raw checks are compared under:
// the zero one, one with subprotocols, one with compression, and one with
// a CheckOrigin (which takes the general path for every request).
func handshakeUpgraders() map[string]*Upgrader {
	return map[string]*Upgrader{
		"zero":         {},
		"subprotocols": {Subprotocols: []string{"v2.chat", "chat", "superchat"}},
		"compression":  {Compression: &CompressionOptions{}},
		"checkorigin":  {CheckOrigin: func(r *http.Request) bool { return !strings.Contains(r.Header.Get("Origin"), "evil") }},
	}
}

// compareAnswers fails t if answerHead's answer to head differs from the
// reference's under u.
func compareAnswers(t *testing.T, name string, u *Upgrader, head []byte) {
	t.Helper()
	extra := http.Header{"X-Served-By": {"test"}}
	resp, proto, dfl, _, ref := u.answerHead(nil, head, extra)
	wantResp, wantProto, wantDfl, wantRef := referenceAnswer(u, head, extra)
	switch {
	case (ref == nil) != (wantRef == nil):
		t.Errorf("%s: %q: refusal %v, want %v", name, head, describe(ref), describe(wantRef))
	case ref != nil:
		if ref.status != wantRef.status || ref.msg != wantRef.msg {
			t.Errorf("%s: %q: refused %d %q, want %d %q", name, head, ref.status, ref.msg, wantRef.status, wantRef.msg)
		}
	default:
		if !bytes.Equal(resp, wantResp) || proto != wantProto || (dfl == nil) != (wantDfl == nil) || dfl != nil && dfl.ext != wantDfl.ext {
			t.Errorf("%s: %q: answered %q (%q), want %q (%q)", name, head, resp, proto, wantResp, wantProto)
		}
	}
}

func describe(r *refusal) string {
	if r == nil {
		return "none (101)"
	}
	return fmt.Sprintf("%d %s", r.status, r.msg)
}

// handshakeCorpus returns request heads around a valid opening handshake:
// the shapes browsers and libraries send, and each check's failures, in
// the raw checks' shape and just outside it.
func handshakeCorpus() []string {
	const key = "dGhlIHNhbXBsZSBub25jZQ=="
	base := func(fields ...string) string {
		return "GET /chat HTTP/1.1\r\n" + strings.Join(fields, "\r\n") + "\r\n\r\n"
	}
	std := []string{"Host: example.com", "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: " + key, "Sec-WebSocket-Version: 13"}
	with := func(extra ...string) string { return base(append(append([]string{}, std...), extra...)...) }
	without := func(drop string, extra ...string) string {
		var fs []string
		for _, f := range std {
			if !strings.HasPrefix(f, drop+":") {
				fs = append(fs, f)
			}
		}
		return base(append(fs, extra...)...)
	}
	out := []string{
		with(),
		// A browser's.
		"GET /ws?room=1&x=%20y HTTP/1.1\r\nHost: localhost:8080\r\nConnection: Upgrade\r\nPragma: no-cache\r\nCache-Control: no-cache\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36\r\nUpgrade: websocket\r\nOrigin: http://localhost:8080\r\nSec-WebSocket-Version: 13\r\nAccept-Encoding: gzip, deflate, br, zstd\r\nAccept-Language: en-US,en;q=0.9\r\nSec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n",
		// Firefox's Connection.
		with("Origin: http://example.com", "Sec-WebSocket-Protocol: chat, superchat"),
		base("Host: example.com", "Upgrade: websocket", "Connection: keep-alive, Upgrade", "Sec-WebSocket-Key: "+key, "Sec-WebSocket-Version: 13"),
		base("host: EXAMPLE.com", "upgrade: WebSocket", "connection: upgrade", "sec-websocket-key: "+key, "sec-websocket-version: 13", "origin: HTTP://Example.COM"),
		base("Host: example.com", "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key:"+key, "Sec-WebSocket-Version:13"),
		base("Host: example.com", "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: \t"+key+" \t", "Sec-WebSocket-Version: 13 "),
		// Tokens over several lines and lists.
		base("Host: example.com", "Upgrade: h2c", "Upgrade: websocket", "Connection: keep-alive", "Connection: , Upgrade ,", "Sec-WebSocket-Key: "+key, "Sec-WebSocket-Version: 13"),
		without("Upgrade"), without("Connection"), with("Connection: close"),
		base("Host: example.com", "Upgrade: websocketx", "Connection: Upgrade", "Sec-WebSocket-Key: "+key, "Sec-WebSocket-Version: 13"),
		base("Host: example.com", "Upgrade: websocket", "Connection: Upgradex", "Sec-WebSocket-Key: "+key, "Sec-WebSocket-Version: 13"),
		// Version.
		without("Sec-WebSocket-Version"), without("Sec-WebSocket-Version", "Sec-WebSocket-Version: 8"),
		without("Sec-WebSocket-Version", "Sec-WebSocket-Version: 13, 8"), without("Sec-WebSocket-Version", "Sec-WebSocket-Version: 8", "Sec-WebSocket-Version: 13"),
		without("Sec-WebSocket-Version", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Version: 8"),
		// Key.
		without("Sec-WebSocket-Key"), with("Sec-WebSocket-Key: " + key), without("Sec-WebSocket-Key", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ="),
		without("Sec-WebSocket-Key", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ!="), without("Sec-WebSocket-Key", "Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAAAAAA"),
		without("Sec-WebSocket-Key", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZSEh"), without("Sec-WebSocket-Key", "Sec-WebSocket-Key: "),
		// Origins.
		with("Origin: null"), with("Origin: http://evil.example"), with("Origin: https://example.com:443"), with("Origin: http://example.com:"),
		with("Origin: http://user@example.com"), with("Origin: http://example.com/path"), with("Origin: http://[::1]:80"), with("Origin: http://example.com:8x"),
		with("Origin: example.com"), with("Origin: ://example.com"), with("Origin: 1http://example.com"), with("Origin: ht+tp://example.com"),
		with("Origin: http://exa%6dple.com"), with("Origin: http://example.com", "Origin: http://evil.example"), with("Origin: "),
		without("Host", "Origin: http://example.com"), without("Host", "Host: a.example", "Host: example.com", "Origin: http://a.example"),
		// Subprotocols and extensions.
		with("Sec-WebSocket-Protocol: superchat, chat"), with("Sec-WebSocket-Protocol: superchat", "Sec-WebSocket-Protocol: v2.chat"),
		with("Sec-WebSocket-Protocol: Chat"), with("Sec-WebSocket-Protocol: ,,chat,,"),
		with("Sec-WebSocket-Extensions: permessage-deflate"), with("Sec-WebSocket-Extensions: x-webkit-deflate-frame, permessage-deflate; server_no_context_takeover"),
		with("Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=10", "Sec-WebSocket-Extensions: permessage-deflate"),
		with("Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits=\"15\""), with("Sec-WebSocket-Extensions: permessage-deflate;;"),
		// Outside the raw checks' shape: the general path answers.
		"POST /chat HTTP/1.1\r\nHost: example.com\r\n\r\n", "get /chat HTTP/1.1\r\nHost: example.com\r\n\r\n",
		strings.Replace(with(), "HTTP/1.1", "HTTP/1.0", 1), strings.Replace(with(), "HTTP/1.1", "HTTP/2.0", 1),
		strings.Replace(with(), "/chat", "http://example.com/chat", 1), strings.Replace(with(), "/chat", "*", 1),
		strings.Replace(with(), "/chat", "/c%zzhat", 1), strings.Replace(with(), "/chat", "/ch at", 1), strings.Replace(with(), "/chat", "/chat#frag", 1),
		strings.Replace(with(), "GET /chat", "GET  /chat", 1),
		with("Content-Length: 0"), with("Transfer-Encoding: chunked"), with("X-Odd Name: 1"), with("X-Tab:\tvalue\t"),
		with("X-Fold: a", " b"), with("X-Bytes: caf\xc3\xa9"), with("X-Ctl: a\x01b"), with("Bad-Line-Without-Colon"), with(": empty name"),
		strings.Replace(with(), "\r\n", "\n", 2),
	}
	return out
}

// TestRawHandshakeMatchesReadRequest: on every request of the corpus, under
// every Upgrader of handshakeUpgraders, UpgradeStream's checks (raw where
// the head is plain) answer exactly as http.ReadRequest and prepare do:
// the same refusal status and message, or the same 101 response.
func TestRawHandshakeMatchesReadRequest(t *testing.T) {
	plain := 0
	for _, head := range handshakeCorpus() {
		if _, ok := plainHead([]byte(head)); ok {
			plain++
		}
		for name, u := range handshakeUpgraders() {
			compareAnswers(t, name, u, []byte(head))
		}
	}
	t.Logf("%d requests, %d of them checked on their raw bytes", len(handshakeCorpus()), plain)
	if plain < len(handshakeCorpus())/2 {
		t.Errorf("only %d requests of %d took the raw checks", plain, len(handshakeCorpus()))
	}
}

// FuzzRawHandshake compares the raw checks with http.ReadRequest and
// prepare on arbitrary request heads (see TestRawHandshakeMatchesReadRequest).
func FuzzRawHandshake(f *testing.F) {
	for _, head := range handshakeCorpus() {
		f.Add([]byte(head))
	}
	ups := handshakeUpgraders()
	f.Fuzz(func(t *testing.T, head []byte) {
		end := headEnd(head)
		if end < 0 {
			head = append(head, "\r\n\r\n"...)
			end = headEnd(head)
		}
		head = head[:end]
		for name, u := range ups {
			compareAnswers(t, name, u, head)
		}
	})
}

// TestRawHandshakeAllocations: answering a browser's handshake on its raw
// bytes allocates only the response, and nothing when it is given room
// for it (the general path took about 20 allocations and 6 KB).
func TestRawHandshakeAllocations(t *testing.T) {
	head := []byte(handshakeCorpus()[1])
	u := &Upgrader{}
	var room [answerRoom]byte
	for _, tc := range []struct {
		dst  []byte
		want float64
	}{{nil, 1}, {room[:0], 0}} {
		allocs := testing.AllocsPerRun(100, func() {
			resp, _, _, _, ref := u.answerHead(tc.dst, head, nil)
			if ref != nil || len(resp) == 0 {
				t.Fatal("refused")
			}
		})
		if allocs > tc.want {
			t.Errorf("with room for %d bytes, the raw checks allocate %.0f times; want %.0f", cap(tc.dst), allocs, tc.want)
		}
	}
	general := testing.AllocsPerRun(100, func() { _, _, _, _ = referenceAnswer(u, head, nil) })
	t.Logf("http.ReadRequest and prepare: %.0f allocations", general)
}

// TestNewConnAllocations: a connection is its Conn, one allocation: its
// settings are interned without allocating (a sync.Map's interface key
// cost 48 bytes per connection).
func TestNewConnAllocations(t *testing.T) {
	opts := &Options{}
	newConn(nil, false, "chat", opts, nil) // interns the settings
	if n := testing.AllocsPerRun(100, func() { newConn(nil, false, "chat", opts, nil) }); n != 1 {
		t.Errorf("newConn: %.0f allocations; want 1", n)
	}
	a, b := newConn(nil, false, "chat", opts, nil), newConn(nil, true, "chat", opts, nil)
	if a.cfg == b.cfg || a.cfg != newConn(nil, false, "chat", opts, nil).cfg {
		t.Error("settings not interned by value")
	}
}
