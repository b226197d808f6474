package websocket

// The opening handshake of RFC 6455 section 4: the server's Upgrade (on
// httpserver or net/http) and the client's Dial.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/httpserver"
)

// acceptGUID is the GUID of RFC 6455 section 1.3.
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// The handshake's header fields, in the canonical form of an http.Header's
// keys ("Sec-Websocket-Key" for the Sec-WebSocket-Key of the RFC): looked
// up in that form, they cost no canonicalization, which allocates.
const (
	hdrKey        = "Sec-Websocket-Key"
	hdrVersion    = "Sec-Websocket-Version"
	hdrProtocol   = "Sec-Websocket-Protocol"
	hdrExtensions = "Sec-Websocket-Extensions"
	hdrAccept     = "Sec-Websocket-Accept"
)

// AcceptKey returns the Sec-WebSocket-Accept value for a
// Sec-WebSocket-Key.
func AcceptKey(key string) string {
	var b [28]byte
	return string(appendAcceptKey(b[:0], key))
}

// appendAcceptKey appends the Sec-WebSocket-Accept value for key (28
// bytes) to dst. It allocates nothing beyond dst's growth for a key of
// the valid length (24 bytes).
func appendAcceptKey[K string | []byte](dst []byte, key K) []byte {
	var in [24 + len(acceptGUID)]byte
	var h [sha1.Size]byte
	if len(key) == 24 {
		copy(in[copy(in[:], key):], acceptGUID)
		h = sha1.Sum(in[:])
	} else {
		h = sha1.Sum(append([]byte(string(key)), acceptGUID...))
	}
	return base64.StdEncoding.AppendEncode(dst, h[:])
}

// validKey reports whether key is the base64 of 16 bytes. It allocates
// nothing.
func validKey[K string | []byte](key K) bool {
	if len(key) != 24 {
		return false
	}
	var b [18]byte // base64's DecodedLen(24)
	n, err := base64.StdEncoding.Decode(b[:], []byte(string(key)))
	return err == nil && n == 16
}

// hasToken reports whether a header field (all its lines, comma-separated
// lists) holds token, compared in ASCII without case.
func hasToken(h http.Header, name, token string) bool {
	for _, v := range h[http.CanonicalHeaderKey(name)] {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.Trim(t, " \t"), token) {
				return true
			}
		}
	}
	return false
}

// tokens returns the tokens of a comma-separated header field.
func tokens(h http.Header, name string) []string {
	var out []string
	for _, v := range h[http.CanonicalHeaderKey(name)] {
		for t := range strings.SplitSeq(v, ",") {
			if t = strings.Trim(t, " \t"); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// Upgrader upgrades HTTP requests to WebSocket connections, on a
// httpserver.Server (the connection then lives on the runtime's futures)
// or on a net/http server (through http.Hijacker; the connection is then
// for the blocking methods only). The zero Upgrader is valid: no
// subprotocols, same-origin requests only.
type Upgrader struct {
	// Subprotocols are the subprotocols the server speaks, in its order of
	// preference: the first one the client offers is selected.
	Subprotocols []string
	// CheckOrigin decides whether a request's Origin may connect; a
	// request it refuses gets 403. Nil allows requests without an Origin
	// header and those whose Origin's host is the request's Host (as
	// gorilla/websocket does), which stops other sites' pages from
	// connecting with their visitors' cookies.
	CheckOrigin func(r *http.Request) bool
	// Compression, when set, accepts the client's first permessage-deflate
	// offer (RFC 7692) that it can honour; see "Compression" in the
	// package doc. Nil negotiates no extension.
	Compression *CompressionOptions
	// Options tune the connections.
	Options Options
}

// SameOrigin is the default CheckOrigin: true without an Origin header or
// when the Origin's host equals r.Host (ASCII case-insensitively).
func SameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// refusal is the answer to a request that cannot be upgraded: its status
// and message, and the error Upgrade returns.
type refusal struct {
	status int
	msg    string
	err    error
}

func refuse(status int, msg string) *refusal {
	return &refusal{status: status, msg: msg, err: fmt.Errorf("%w: %s", ErrBadHandshake, msg)}
}

// header returns the header fields of the refusal's response.
func (f *refusal) header() http.Header {
	h := http.Header{}
	switch f.status {
	case http.StatusInternalServerError:
		return h
	case http.StatusMethodNotAllowed:
		h.Set("Allow", http.MethodGet)
	case http.StatusUpgradeRequired:
		h.Set("Connection", "Upgrade")
		h.Set("Upgrade", "websocket")
	}
	h.Set("Sec-WebSocket-Version", "13")
	return h
}

// body is the refusal's response body.
func (f *refusal) body() string {
	if f.status == http.StatusInternalServerError {
		return http.StatusText(f.status)
	}
	return http.StatusText(f.status) + ": " + f.msg
}

// answer writes the refusal to w and returns its error.
func (f *refusal) answer(w http.ResponseWriter) error {
	for k, vs := range f.header() {
		w.Header()[k] = vs
	}
	http.Error(w, f.body(), f.status)
	return f.err
}

// prepare checks r as an opening handshake and returns the 101 response to
// send, the subprotocol and the permessage-deflate chosen; or the refusal.
func (u *Upgrader) prepare(r *http.Request, responseHeader http.Header) ([]byte, string, *deflater, *refusal) {
	if r.Method != http.MethodGet {
		return nil, "", nil, refuse(http.StatusMethodNotAllowed, "method not GET")
	}
	if !hasToken(r.Header, "Connection", "upgrade") || !hasToken(r.Header, "Upgrade", "websocket") {
		return nil, "", nil, refuse(http.StatusUpgradeRequired, "not a WebSocket upgrade request")
	}
	if r.Header.Get(hdrVersion) != "13" {
		return nil, "", nil, refuse(http.StatusUpgradeRequired, "unsupported Sec-WebSocket-Version")
	}
	key := r.Header.Get(hdrKey)
	if len(r.Header[hdrKey]) != 1 || !validKey(key) {
		return nil, "", nil, refuse(http.StatusBadRequest, "invalid Sec-WebSocket-Key")
	}
	check := u.CheckOrigin
	if check == nil {
		check = SameOrigin
	}
	if !check(r) {
		return nil, "", nil, refuse(http.StatusForbidden, "origin not allowed")
	}
	proto := ""
	offered := tokens(r.Header, hdrProtocol)
pick:
	for _, p := range u.Subprotocols {
		for _, o := range offered {
			if o == p {
				proto = p
				break pick
			}
		}
	}

	dfl, err := u.negotiate(r.Header[hdrExtensions])
	if err != nil {
		return nil, "", nil, &refusal{status: http.StatusInternalServerError, err: err}
	}
	return switchingProtocols(nil, key, proto, dfl, responseHeader), proto, dfl, nil
}

// switchingProtocols returns the 101 response to a handshake with
// Sec-WebSocket-Key key that selected subprotocol proto (none: "") and
// permessage-deflate dfl (none: nil), with the fields of responseHeader,
// appended to dst[:0]: in dst's room when it has enough, otherwise in one
// allocation of its exact size.
func switchingProtocols[K string | []byte](dst []byte, key K, proto string, dfl *deflater, responseHeader http.Header) []byte {
	const head = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "
	size := len(head) + 28 + 2 + 2
	if proto != "" {
		size += len("Sec-WebSocket-Protocol: \r\n") + len(proto)
	}
	if dfl != nil {
		size += len("Sec-WebSocket-Extensions: \r\n") + len(dfl.ext)
	}
	for k, vs := range responseHeader {
		for _, v := range vs {
			size += len(k) + len(": \r\n") + len(v)
		}
	}
	resp := dst[:0]
	if cap(resp) < size {
		resp = make([]byte, 0, size)
	}
	resp = append(resp, head...)
	resp = appendAcceptKey(resp, key)
	resp = append(resp, "\r\n"...)
	if proto != "" {
		resp = appendField(resp, "Sec-WebSocket-Protocol", proto)
	}
	if dfl != nil {
		resp = appendField(resp, "Sec-WebSocket-Extensions", dfl.ext)
	}
	for k, vs := range responseHeader {
		for _, v := range vs {
			resp = appendField(resp, k, v)
		}
	}
	resp = append(resp, "\r\n"...)
	return resp
}

// appendField appends the header line "k: v" to b.
func appendField(b []byte, k, v string) []byte {
	b = append(b, k...)
	b = append(b, ": "...)
	b = append(b, v...)
	return append(b, "\r\n"...)
}

// Upgrade checks r as a WebSocket opening handshake and, if it is one,
// answers 101 Switching Protocols (with responseHeader's fields, which
// must not set the handshake's own) and returns the connection. A request
// that is not one is answered and an error wrapping ErrBadHandshake
// returned: 405 for a method other than GET, 426 (with Upgrade: websocket)
// without the Upgrade and Connection tokens, 426 with
// Sec-WebSocket-Version: 13 for another version, 400 for a bad
// Sec-WebSocket-Key, 403 for an Origin that CheckOrigin refuses; 500 and
// an error wrapping ErrBadOptions for invalid Compression options.
//
// Called from a Handler of a httpserver.Server, the connection is the
// runtime's stream (see httpserver.HijackConn): serve it from a task (see
// Serve) and return from the handler, so that no goroutine waits for it;
// its blocking methods may be used too. Called from a net/http handler,
// it is hijacked as a net.Conn; use the blocking methods, from goroutines.
// On a httpserver.Server over TLS (a blitz.TLSListener) the connection is
// the TLS stream, a wss:// connection.
func (u *Upgrader) Upgrade(w http.ResponseWriter, r *http.Request, responseHeader http.Header) (*Conn, error) {
	resp, proto, dfl, ref := u.prepare(r, responseHeader)
	if ref != nil {
		return nil, ref.answer(w)
	}

	stream, buf, err := httpserver.HijackConn(w)
	switch {
	case err == nil:
		// blitz.WriteAll, through PollWrite as the frames will be written,
		// rather than the stream's own WriteAll, whose reused future the
		// stream would keep for the connection's whole life (48 bytes of
		// every idle connection).
		res, err := future.Block(r.Context(), future.Future[future.Result[int]](blitz.WriteAll(stream, resp)))
		if err == nil {
			err = res.Err
		}
		if err != nil {
			_ = stream.Close()
			return nil, fmt.Errorf("websocket: upgrade: %w", err)
		}
		c := newConn(stream, false, proto, &u.Options, buf)
		c.setDeflate(dfl)
		return c, nil
	case !errors.Is(err, http.ErrNotSupported):
		return nil, fmt.Errorf("websocket: upgrade: %w", err)
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		return nil, fmt.Errorf("websocket: upgrade: %w", http.ErrNotSupported)
	}
	nc, brw, err := hj.Hijack()
	if err != nil {
		return nil, fmt.Errorf("websocket: upgrade: %w", err)
	}
	var pending []byte
	if n := brw.Reader.Buffered(); n > 0 {
		pending, _ = brw.Reader.Peek(n)
	}
	if _, err := nc.Write(resp); err != nil {
		_ = nc.Close()
		return nil, fmt.Errorf("websocket: upgrade: %w", err)
	}
	c := NewNetConn(nc, false, proto, &u.Options, pending)
	c.setDeflate(dfl)
	return c, nil
}

// negotiate chooses the permessage-deflate of a request whose
// Sec-WebSocket-Extensions fields have the values lines: nil when
// Compression is unset or no offer can be honoured, an error wrapping
// ErrBadOptions when Compression is invalid.
func (u *Upgrader) negotiate(lines []string) (*deflater, error) {
	o := u.Compression
	if o == nil {
		return nil, nil
	}
	if err := o.check(); err != nil {
		return nil, fmt.Errorf("websocket: upgrade: %w", err)
	}
	p, ok := serverAccept(lines, o)
	if !ok {
		return nil, nil
	}
	return newDeflater(p, o, false), nil
}

// NewNetConn returns a connection over nc, whose opening handshake is
// done; client says which side this is (a client masks its frames),
// buffered holds bytes already read from nc past the handshake. The
// connection's futures block inside Poll: use its blocking methods, from
// goroutines.
func NewNetConn(nc net.Conn, client bool, subprotocol string, opts *Options, buffered []byte) *Conn {
	return newConn(&netTransport{nc: nc}, client, subprotocol, opts, buffered)
}

// netTransport performs a net.Conn's blocking calls inside PollRead and
// PollWrite, for connections polled by future.Block on a goroutine.
type netTransport struct {
	nc net.Conn
}

func (t *netTransport) PollRead(_ *future.Context, buf []byte) (future.Result[int], bool) {
	n, err := t.nc.Read(buf)
	if n > 0 {
		err = nil // a later read reports it again
	}
	return future.Result[int]{Value: n, Err: err}, true
}

func (t *netTransport) CancelRead() {}

func (t *netTransport) PollWrite(_ *future.Context, buf []byte) (future.Result[int], bool) {
	n, err := t.nc.Write(buf)
	return future.Result[int]{Value: n, Err: err}, true
}

func (t *netTransport) CancelWrite() {}

func (t *netTransport) Close() error { return t.nc.Close() }

// DialOptions tune Dial; the zero DialOptions is valid.
type DialOptions struct {
	// Subprotocols are offered to the server, in order of preference.
	Subprotocols []string
	// Header holds more request header fields (Origin, Authorization...).
	Header http.Header
	// Timeout bounds the TCP connect; 0 means no bound beyond the
	// system's.
	Timeout time.Duration
	// Compression, when set, offers permessage-deflate (RFC 7692); the
	// server may decline it. See "Compression" in the package doc.
	Compression *CompressionOptions
	// TLSConfig is the TLS configuration of a wss:// URL (nil: the zero
	// tls.Config, the system's roots); its ServerName, when empty, is the
	// URL's host (see blitz.DialTLS). Ignored for ws://.
	TLSConfig *tls.Config
	// Options tune the connection.
	Options Options
}

// maxResponseHeader bounds the handshake's response header block.
const maxResponseHeader = 16 << 10

// DialFuture is the future of Dial.
type DialFuture struct {
	h       blitz.Handle
	opts    DialOptions
	err     error
	host    string
	req     []byte
	key     string
	phase   uint8
	tls     bool // wss://
	connect *blitz.ConnectFuture[*blitz.TCPStream]
	tlsDial *blitz.TLSDialFuture
	s       transport
	off     int
	buf     []byte
	n       int
	resp    *http.Response
	// offer is the permessage-deflate offered, when opts.Compression is
	// set.
	offer deflateParams
}

// Dial returns a future that connects to a ws:// URL on h's runtime and
// performs the opening handshake: a random Sec-WebSocket-Key, the
// Sec-WebSocket-Accept checked, a subprotocol accepted only if it was
// offered, an extension only if it was offered (and valid, see
// "Compression" in the package doc). Its value is the connection; a failed
// handshake is an error wrapping ErrBadHandshake, invalid options an
// error wrapping ErrBadOptions, an unsupported URL one wrapping
// ErrBadURL.
func Dial(h blitz.Handle, rawURL string, opts *DialOptions) *DialFuture {
	f := &DialFuture{h: h}
	if opts != nil {
		f.opts = *opts
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		f.err = fmt.Errorf("websocket: dial: %w: %w", ErrBadURL, err)
		return f
	}
	port := "80"
	switch u.Scheme {
	case "ws":
	case "wss":
		f.tls, port = true, "443"
	default:
		f.err = fmt.Errorf("websocket: dial: %w: unsupported scheme %q (ws and wss are)", ErrBadURL, u.Scheme)
		return f
	}
	if u.Hostname() == "" {
		f.err = fmt.Errorf("websocket: dial: %w: no host in %q", ErrBadURL, rawURL)
		return f
	}
	f.host = u.Host
	if u.Port() == "" {
		f.host = net.JoinHostPort(u.Hostname(), port)
	}
	var k [16]byte
	_, _ = rand.Read(k[:])
	f.key = base64.StdEncoding.EncodeToString(k[:])
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n", u.RequestURI(), u.Host, f.key)
	if len(f.opts.Subprotocols) > 0 {
		fmt.Fprintf(&b, "Sec-WebSocket-Protocol: %s\r\n", strings.Join(f.opts.Subprotocols, ", "))
	}
	if o := f.opts.Compression; o != nil {
		if err := o.check(); err != nil {
			f.err = fmt.Errorf("websocket: dial: %w", err)
			return f
		}
		f.offer = clientOffer(o)
		fmt.Fprintf(&b, "Sec-WebSocket-Extensions: %s\r\n", f.offer)
	}
	for k, vs := range f.opts.Header {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("\r\n")
	f.req = []byte(b.String())
	return f
}

// Response returns the server's response to the handshake, once the
// future completed (nil if none was read).
func (f *DialFuture) Response() *http.Response { return f.resp }

// Poll connects and shakes hands; see Dial.
func (f *DialFuture) Poll(cx *future.Context) (future.Result[*Conn], bool) {
	if f.err != nil {
		f.phase = 9
		return future.Fail[*Conn](f.err), true
	}
	for {
		switch f.phase {
		case 0:
			if f.tls {
				f.tlsDial = blitz.DialTLS(f.h, f.host, f.opts.TLSConfig, f.opts.Timeout)
			} else {
				f.connect = blitz.DialTCP(f.h, f.host, f.opts.Timeout)
			}
			f.phase = 1
		case 1:
			if f.tls {
				r, ok := f.tlsDial.Poll(cx)
				if !ok {
					return future.Result[*Conn]{}, false
				}
				f.tlsDial = nil
				if r.Err != nil {
					return f.fail(fmt.Errorf("websocket: dial: %w", r.Err))
				}
				f.s = r.Value
			} else {
				r, ok := f.connect.Poll(cx)
				if !ok {
					return future.Result[*Conn]{}, false
				}
				f.connect = nil
				if r.Err != nil {
					return f.fail(fmt.Errorf("websocket: dial: %w", r.Err))
				}
				_ = r.Value.SetNoDelay(true)
				f.s = r.Value
			}
			f.phase = 2
		case 2:
			for f.off < len(f.req) {
				r, ok := f.s.PollWrite(cx, f.req[f.off:])
				if !ok {
					return future.Result[*Conn]{}, false
				}
				if r.Err != nil {
					return f.fail(fmt.Errorf("websocket: dial: %w", r.Err))
				}
				f.off += r.Value
			}
			f.buf = make([]byte, 4096)
			f.phase = 3
		case 3:
			if f.n == len(f.buf) {
				if len(f.buf) >= maxResponseHeader {
					return f.fail(fmt.Errorf("%w: response header too large", ErrBadHandshake))
				}
				f.buf = append(f.buf, make([]byte, len(f.buf))...)
			}
			r, ok := f.s.PollRead(cx, f.buf[f.n:])
			if !ok {
				return future.Result[*Conn]{}, false
			}
			if r.Err != nil || r.Value == 0 {
				err := r.Err
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return f.fail(fmt.Errorf("%w: reading the response: %w", ErrBadHandshake, err))
			}
			f.n += r.Value
			end := bytes.Index(f.buf[:f.n], []byte("\r\n\r\n"))
			if end < 0 {
				continue
			}
			end += 4
			c, err := f.finish(f.buf[:end], f.buf[end:f.n])
			if err != nil {
				return f.fail(err)
			}
			f.phase = 9
			return future.Ok(c), true
		default:
			panic(future.ErrPolledAfterCompletion)
		}
	}
}

// finish checks the server's response and makes the connection.
func (f *DialFuture) finish(head, rest []byte) (*Conn, error) {
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(head)), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadHandshake, err)
	}
	f.resp = resp
	switch {
	case resp.StatusCode != http.StatusSwitchingProtocols:
		return nil, fmt.Errorf("%w: status %s", ErrBadHandshake, resp.Status)
	case !hasToken(resp.Header, "Upgrade", "websocket"), !hasToken(resp.Header, "Connection", "upgrade"):
		return nil, fmt.Errorf("%w: missing Upgrade or Connection", ErrBadHandshake)
	case resp.Header.Get(hdrAccept) != AcceptKey(f.key):
		return nil, fmt.Errorf("%w: wrong Sec-WebSocket-Accept", ErrBadHandshake)
	}
	proto := resp.Header.Get(hdrProtocol)
	if proto != "" {
		ok := false
		for _, p := range f.opts.Subprotocols {
			ok = ok || p == proto
		}
		if !ok {
			return nil, fmt.Errorf("%w: subprotocol %q not offered", ErrBadHandshake, proto)
		}
	}
	dfl, err := f.checkExtensions(resp.Header)
	if err != nil {
		return nil, err
	}
	s := f.s
	f.s = nil
	c := newConn(s, true, proto, &f.opts.Options, rest)
	c.setDeflate(dfl)
	return c, nil
}

// checkExtensions checks the response's extensions against the offer
// and returns the permessage-deflate in force, nil if none. Without an
// offer, an extension in the response fails the handshake, unless the
// caller sent Sec-WebSocket-Extensions itself in opts.Header (then it is
// the caller's to check).
func (f *DialFuture) checkExtensions(h http.Header) (*deflater, error) {
	o := f.opts.Compression
	if o == nil {
		if len(f.opts.Header.Values(hdrExtensions)) > 0 || strings.Trim(strings.Join(h.Values(hdrExtensions), ""), " \t,") == "" {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: extension %q not offered", ErrBadHandshake, h.Get(hdrExtensions))
	}
	p, on, err := clientCheck(h, f.offer)
	if err != nil || !on {
		return nil, err
	}
	return newDeflater(p, o, true), nil
}

func (f *DialFuture) fail(err error) (future.Result[*Conn], bool) {
	f.phase = 9
	if f.s != nil {
		_ = f.s.Close()
		f.s = nil
	}
	return future.Fail[*Conn](err), true
}

// Cancel abandons the dial and closes the connection it made.
func (f *DialFuture) Cancel() {
	if f.phase == 9 {
		return
	}
	f.phase = 9
	if f.connect != nil {
		f.connect.Cancel()
	}
	if f.tlsDial != nil {
		f.tlsDial.Cancel()
	}
	if f.s != nil {
		f.s.CancelRead()
		f.s.CancelWrite()
		_ = f.s.Close()
		f.s = nil
	}
}

// DialContext dials on the calling goroutine: Dial, waited for with
// BlockOn on h's runtime, bounded by ctx.
func DialContext(ctx context.Context, h blitz.Handle, rawURL string, opts *DialOptions) (*Conn, *http.Response, error) {
	f := Dial(h, rawURL, opts)
	r, err := blitz.BlockOn(ctx, h, future.Future[future.Result[*Conn]](f))
	if err != nil {
		return nil, nil, fmt.Errorf("websocket: dial: %w", err)
	}
	return r.Value, f.resp, r.Err
}
