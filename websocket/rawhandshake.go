package websocket

// The opening handshake read from a stream (UpgradeStream), checked on its
// raw bytes: the request head of the shape every client sends goes through
// here without an http.Request, an http.Header or a bufio.Reader (several
// kilobytes of garbage per connection, which a server accepting many
// connections keeps in its resident set). Any other head, and every head
// when the Upgrader has a CheckOrigin (which takes the *http.Request), goes
// through http.ReadRequest and prepare, as Upgrade's do; the answers are
// the same (TestRawHandshakeMatchesReadRequest, FuzzRawHandshake).

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

var (
	crlf     = []byte("\r\n")
	crlfcrlf = []byte("\r\n\r\n")
)

// headEnd returns the length of the request head at the start of b,
// through the empty line that ends it, or -1 if b holds no whole head.
func headEnd(b []byte) int {
	if i := bytes.Index(b, crlfcrlf); i >= 0 {
		return i + len(crlfcrlf)
	}
	return -1
}

// plainHead reports whether head (as headEnd delimits it) has the shape
// the raw checks take, and returns its field lines (each ending with
// CRLF): the request line "GET target HTTP/1.1", with an origin-form
// target of characters that need no decoding beyond percent-escapes; field
// lines "name: value" with a token for name and visible ASCII, spaces and
// tabs for value; no Content-Length or Transfer-Encoding, at most one
// Host. http.ReadRequest accepts every such head, and reads its fields as
// the raw checks do.
func plainHead(head []byte) (fields []byte, ok bool) {
	line, rest, _ := bytes.Cut(head, crlf)
	target, found := bytes.CutPrefix(line, []byte("GET "))
	if !found {
		return nil, false
	}
	if target, found = bytes.CutSuffix(target, []byte(" HTTP/1.1")); !found || !plainTarget(target) {
		return nil, false
	}
	fields = rest[:len(rest)-len(crlf)] // the head's last CRLF ends the empty line
	hosts := 0
	for f := fields; len(f) > 0; {
		var l []byte
		l, f, _ = bytes.Cut(f, crlf)
		name, value, found := bytes.Cut(l, []byte(":"))
		if !found || len(name) == 0 || !isToken(name) ||
			bytes.EqualFold(name, []byte("Content-Length")) || bytes.EqualFold(name, []byte("Transfer-Encoding")) {
			return nil, false
		}
		if bytes.EqualFold(name, []byte("Host")) {
			if hosts++; hosts > 1 {
				return nil, false // http.ReadRequest refuses it
			}
		}
		for _, c := range value {
			if c != '\t' && (c < ' ' || c > '~') {
				return nil, false
			}
		}
	}
	return fields, true
}

// plainTarget reports whether t is an origin-form target ("/" and path
// characters, then an optional query) of unreserved characters,
// sub-delimiters, ':', '@', '/', '?' and well-formed percent-escapes.
func plainTarget(t []byte) bool {
	if len(t) == 0 || t[0] != '/' {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~!$&'()*+,;=:@/?", c) >= 0:
		case c == '%' && i+2 < len(t) && isHex(t[i+1]) && isHex(t[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isToken reports whether b is a token (RFC 9110 section 5.6.2).
func isToken(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 || !tokenChar[c] {
			return false
		}
	}
	return true
}

// tokenChar holds the tchar of RFC 9110.
var tokenChar = func() (t [0x80]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// fieldIter walks the field lines of a plain head, one field at a time.
type fieldIter struct{ rest []byte }

// next returns the next field, its value trimmed of spaces and tabs, or
// ok false at the end.
func (it *fieldIter) next() (name, value []byte, ok bool) {
	if len(it.rest) == 0 {
		return nil, nil, false
	}
	var l []byte
	l, it.rest, _ = bytes.Cut(it.rest, crlf)
	name, value, _ = bytes.Cut(l, []byte(":"))
	return name, bytes.Trim(value, " \t"), true
}

// rawFirst returns the first value of the field name in fields, and how
// many lines the field has (http.Header's Get, and the length of its
// values).
func rawFirst(fields []byte, name string) (first []byte, lines int) {
	it := fieldIter{fields}
	for n, v, ok := it.next(); ok; n, v, ok = it.next() {
		if bytes.EqualFold(n, []byte(name)) {
			if lines == 0 {
				first = v
			}
			lines++
		}
	}
	return first, lines
}

// rawHasToken is hasToken on the field lines of a plain head.
func rawHasToken(fields []byte, name, token string) bool {
	it := fieldIter{fields}
	for n, v, ok := it.next(); ok; n, v, ok = it.next() {
		if !bytes.EqualFold(n, []byte(name)) {
			continue
		}
		for t := range bytes.SplitSeq(v, []byte(",")) {
			if bytes.EqualFold(bytes.Trim(t, " \t"), []byte(token)) {
				return true
			}
		}
	}
	return false
}

// rawOffers reports whether the client offered subprotocol p (an element
// of its Sec-WebSocket-Protocol lists).
func rawOffers(fields []byte, p string) bool {
	it := fieldIter{fields}
	for n, v, ok := it.next(); ok; n, v, ok = it.next() {
		if !bytes.EqualFold(n, []byte(hdrProtocol)) {
			continue
		}
		for t := range bytes.SplitSeq(v, []byte(",")) {
			if string(bytes.Trim(t, " \t")) == p {
				return true
			}
		}
	}
	return false
}

// rawLines returns the values of the field name, as http.Header holds
// them (strings: the extension parser's input).
func rawLines(fields []byte, name string) []string {
	var out []string
	it := fieldIter{fields}
	for n, v, ok := it.next(); ok; n, v, ok = it.next() {
		if bytes.EqualFold(n, []byte(name)) {
			out = append(out, string(v))
		}
	}
	return out
}

// rawSameOrigin is SameOrigin on a plain head's first Origin and Host
// values. An origin of the usual shape, scheme "://" host [":" port] with
// a host of letters, digits, dots and hyphens, is compared as it is (as
// url.Parse would split it); any other goes through url.Parse.
func rawSameOrigin(origin, host []byte) bool {
	if len(origin) == 0 {
		return true
	}
	if hp, ok := plainOriginHost(origin); ok {
		return bytes.EqualFold(hp, host)
	}
	u, err := url.Parse(string(origin))
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Host, string(host))
}

// plainOriginHost returns the host and port of an origin of the shape
// scheme "://" host [":" digits], with a non-empty host of letters,
// digits, dots and hyphens, or ok false for any other.
func plainOriginHost(origin []byte) (hostport []byte, ok bool) {
	i := bytes.Index(origin, []byte("://"))
	if i <= 0 {
		return nil, false
	}
	for j, c := range origin[:i] {
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (j == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return nil, false
		}
	}
	hostport = origin[i+3:]
	host, port, hasPort := bytes.Cut(hostport, []byte(":"))
	if len(host) == 0 {
		return nil, false
	}
	for _, c := range host {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			return nil, false
		}
	}
	if hasPort {
		for _, c := range port {
			if c < '0' || c > '9' {
				return nil, false
			}
		}
	}
	return hostport, true
}

// prepareRaw is prepare on the field lines of a plain head of a GET, for
// an Upgrader without CheckOrigin: the same checks in the same order, the
// same answers.
func (u *Upgrader) prepareRaw(dst, fields []byte, responseHeader http.Header) ([]byte, string, *deflater, *refusal) {
	if !rawHasToken(fields, "Connection", "upgrade") || !rawHasToken(fields, "Upgrade", "websocket") {
		return nil, "", nil, refuse(http.StatusUpgradeRequired, "not a WebSocket upgrade request")
	}
	if v, _ := rawFirst(fields, hdrVersion); string(v) != "13" {
		return nil, "", nil, refuse(http.StatusUpgradeRequired, "unsupported Sec-WebSocket-Version")
	}
	key, keys := rawFirst(fields, hdrKey)
	if keys != 1 || !validKey(key) {
		return nil, "", nil, refuse(http.StatusBadRequest, "invalid Sec-WebSocket-Key")
	}
	origin, _ := rawFirst(fields, "Origin")
	host, _ := rawFirst(fields, "Host")
	if !rawSameOrigin(origin, host) {
		return nil, "", nil, refuse(http.StatusForbidden, "origin not allowed")
	}
	proto := ""
	for _, p := range u.Subprotocols {
		if rawOffers(fields, p) {
			proto = p
			break
		}
	}
	var lines []string
	if u.Compression != nil {
		lines = rawLines(fields, hdrExtensions)
	}
	dfl, err := u.negotiate(lines)
	if err != nil {
		return nil, "", nil, &refusal{status: http.StatusInternalServerError, err: err}
	}
	return switchingProtocols(dst, key, proto, dfl, responseHeader), proto, dfl, nil
}

// answerHead checks the request head (as headEnd delimits it) as an
// opening handshake: on its raw bytes when it is plain and the Upgrader
// has no CheckOrigin, else through http.ReadRequest (req is then the
// request read, nil if it is not one). The result is prepare's; a 101
// response to a head checked on its raw bytes is made in dst's room when
// it fits.
func (u *Upgrader) answerHead(dst, head []byte, responseHeader http.Header) (resp []byte, proto string, dfl *deflater, req *http.Request, ref *refusal) {
	if fields, ok := plainHead(head); ok && u.CheckOrigin == nil {
		resp, proto, dfl, ref = u.prepareRaw(dst, fields, responseHeader)
		return resp, proto, dfl, nil, ref
	}
	req, ok := readRequest(head)
	if !ok {
		return nil, "", nil, nil, notHTTP11()
	}
	resp, proto, dfl, ref = u.prepare(req, responseHeader)
	return resp, proto, dfl, req, ref
}

// readRequest reads head as net/http does; ok is false when it is not an
// HTTP/1.1 request.
func readRequest(head []byte) (*http.Request, bool) {
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
	if err != nil || req.ProtoMajor != 1 || req.ProtoMinor != 1 {
		return nil, false
	}
	return req, true
}

// notHTTP11 is the refusal of a head that is not an HTTP/1.1 request.
func notHTTP11() *refusal {
	return &refusal{status: http.StatusBadRequest, msg: "not an HTTP/1.1 request",
		err: fmt.Errorf("%w: not an HTTP/1.1 request", ErrBadHandshake)}
}
