package httpserver

// The request parser: the request line and the header block of HTTP/1.0
// and HTTP/1.1 (RFC 9112), strict and bounded. It works on bytes the
// connection task already holds and allocates only what the *http.Request
// keeps (the strings of the header).

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
)

// protoError is a request the server refuses: the status it answers with
// (400, 413, 417, 431, 501, 505) and why. The connection is closed after
// the answer.
type protoError struct {
	status int
	msg    string
}

func (e *protoError) Error() string { return "httpserver: " + e.msg }

func badRequest(msg string) *protoError { return &protoError{status: http.StatusBadRequest, msg: msg} }

// errHeaderTooLarge is a header block longer than MaxHeaderBytes.
var errHeaderTooLarge = &protoError{status: http.StatusRequestHeaderFieldsTooLarge, msg: "request header fields too large"}

// maxLeadingCRLF is how many empty lines before a request line are skipped
// (RFC 9112 section 2.2: a server SHOULD ignore at least one).
const maxLeadingCRLF = 4

// findHeaderEnd returns the length of the header block that starts buf,
// through the empty line that ends it, or -1 if buf does not hold it all
// yet. from is where the search may resume: the bytes before it were
// searched already (pass the length of the previous, shorter buf), so a
// client that sends its headers a byte at a time costs linear time.
func findHeaderEnd(buf []byte, from int) int {
	if from > 3 {
		from -= 3
	} else {
		from = 0
	}
	// Skip the empty lines a request may start with: the first line must
	// not be taken for the end of the header block.
	start := 0
	for i := 0; i < maxLeadingCRLF && bytes.HasPrefix(buf[start:], crlf); i++ {
		start += 2
	}
	if from < start {
		from = start
	}
	i := bytes.Index(buf[from:], crlfcrlf)
	if i < 0 {
		return -1
	}
	return from + i + 4
}

var (
	crlf     = []byte("\r\n")
	crlfcrlf = []byte("\r\n\r\n")
)

// parsedRequest is what parseRequest makes of a header block: the request
// without its body, and how the body is framed. The connection task keeps
// it on its stack; the request handed to the handler is a copy (made by
// Request.WithContext).
type parsedRequest struct {
	req http.Request
	// bodyKind and contentLength say how the body is framed.
	bodyKind      bodyKind
	contentLength int64
	// expectContinue is set for an HTTP/1.1 request with Expect:
	// 100-continue.
	expectContinue bool
	// keepAlive is whether the client lets the connection carry another
	// request after this one.
	keepAlive bool
	// url and strs, when the caller sets them, are where parseRequest
	// makes the request's URL and the backing array of its header values
	// (those of a request whose header has more lines than strs get one
	// of their own): the caller's exchange holds them, one allocation for
	// the lot.
	url  *url.URL
	strs []string
}

// bodyKind is how a request's body is delimited.
type bodyKind uint8

const (
	bodyNone    bodyKind = iota // no body
	bodyLength                  // Content-Length bytes
	bodyChunked                 // chunked transfer coding
)

// parseRequest parses the header block hdr (as findHeaderEnd delimits it:
// it ends with an empty line) into *p. A request the server must refuse
// is a *protoError with the status to answer.
func parseRequest(hdr []byte, p *parsedRequest) *protoError {
	for i := 0; i < maxLeadingCRLF && bytes.HasPrefix(hdr, crlf); i++ {
		hdr = hdr[2:]
	}
	eol := bytes.Index(hdr, crlf)
	if eol < 0 {
		return badRequest("malformed request line")
	}
	line := hdr[:eol]
	rest := hdr[eol+2:]

	// request-line = method SP request-target SP HTTP-version
	sp1 := bytes.IndexByte(line, ' ')
	if sp1 <= 0 {
		return badRequest("malformed request line")
	}
	method := line[:sp1]
	if !validToken(method) {
		return badRequest("invalid method")
	}
	rl := line[sp1+1:]
	sp2 := bytes.IndexByte(rl, ' ')
	if sp2 <= 0 {
		return badRequest("malformed request line")
	}
	target, version := rl[:sp2], rl[sp2+1:]
	for _, b := range target {
		if b <= ' ' || b == 0x7f {
			return badRequest("invalid request target")
		}
	}
	major, minor, perr := parseVersion(version)
	if perr != nil {
		return perr
	}

	// One string holds the whole header block: the request target and
	// every header value are slices of it (one allocation where a string
	// per value took one each).
	block := string(hdr)
	str := func(b []byte) string { // b is a slice of hdr
		i := cap(hdr) - cap(b)
		return block[i : i+len(b)]
	}

	*p = parsedRequest{url: p.url, strs: p.strs}
	req := &p.req
	*req = http.Request{
		Method:     internMethod(method),
		Proto:      protoString(major, minor),
		ProtoMajor: major,
		ProtoMinor: minor,
		Header:     make(http.Header, 8),
		RequestURI: str(target),
	}

	// The header fields. The values of Header share one backing array,
	// one element per line (the lines less the Host line and repeats of
	// a name waste an element each); a repeated name appends past its
	// slice's capacity, which copies.
	var strs []string
	var lengths, encodings, connection, expects []string
	hosts, host := 0, ""
	for len(rest) > 2 {
		eol := bytes.Index(rest, crlf)
		if eol < 0 {
			return badRequest("malformed header line")
		}
		fl := rest[:eol]
		rest = rest[eol+2:]
		colon := bytes.IndexByte(fl, ':')
		if colon <= 0 {
			// No name, or a line that starts with white space (obsolete
			// line folding, which RFC 9112 lets a server reject).
			return badRequest("malformed header line")
		}
		name := fl[:colon]
		if !validToken(name) {
			return badRequest("invalid header name")
		}
		value := trimOWS(fl[colon+1:])
		for _, b := range value {
			if (b < ' ' && b != '\t') || b == 0x7f {
				return badRequest("invalid header value")
			}
		}
		key := canonicalKey(name)
		v := str(value)
		switch key {
		case "Host":
			hosts++
			host = v
			continue // net/http leaves Host out of Header
		case "Content-Length":
			lengths = append(lengths, v)
		case "Transfer-Encoding":
			encodings = append(encodings, v)
		case "Connection":
			connection = append(connection, v)
		case "Expect":
			expects = append(expects, v)
		}
		if vs, ok := req.Header[key]; ok {
			req.Header[key] = append(vs, v)
			continue
		}
		if len(strs) == 0 {
			n := bytes.Count(rest, crlf) // the lines left, and the final CRLF for this one
			if n <= len(p.strs) {
				strs, p.strs = p.strs[:n:n], nil
			} else {
				strs = make([]string, n)
			}
		}
		strs[0] = v
		req.Header[key] = strs[:1:1]
		strs = strs[1:]
	}
	if len(rest) != 2 || rest[0] != '\r' || rest[1] != '\n' {
		return badRequest("malformed header block")
	}

	// Host: exactly one in HTTP/1.1 (RFC 9112 section 3.2), at most one
	// in HTTP/1.0.
	if hosts > 1 || (hosts == 0 && minor == 1) {
		return badRequest("missing or repeated Host header")
	}
	if hosts == 1 && !validHost(host) {
		return badRequest("invalid Host header")
	}

	// The target: origin-form, absolute-form, authority-form (CONNECT),
	// asterisk-form (OPTIONS).
	rawTarget := req.RequestURI
	switch {
	case req.Method == http.MethodConnect && !strings.HasPrefix(rawTarget, "/"):
		if !validHost(rawTarget) || rawTarget == "" {
			return badRequest("invalid CONNECT target")
		}
		req.URL = &url.URL{Host: rawTarget}
	case rawTarget == "*":
		if req.Method != http.MethodOptions {
			return badRequest("asterisk target for a method other than OPTIONS")
		}
		req.URL = &url.URL{Path: "*"}
	default:
		if !strings.HasPrefix(rawTarget, "/") && !hasHTTPScheme(rawTarget) {
			return badRequest("invalid request target")
		}
		u := p.url
		if u == nil {
			u = new(url.URL)
		}
		if !simpleURLInto(rawTarget, u) {
			var err error
			if u, err = url.ParseRequestURI(rawTarget); err != nil {
				return badRequest("invalid request target")
			}
		}
		req.URL = u
	}
	if req.URL.Host != "" {
		host = req.URL.Host // absolute-form wins over Host (RFC 9112 3.2.2)
	}
	req.Host = host

	// Connection and keep-alive.
	closeTok, keepTok := false, false
	for _, v := range connection {
		for tok := range strings.SplitSeq(v, ",") {
			tok = strings.TrimSpace(tok)
			switch {
			case strings.EqualFold(tok, "close"):
				closeTok = true
			case strings.EqualFold(tok, "keep-alive"):
				keepTok = true
			}
		}
	}
	if minor == 1 {
		p.keepAlive = !closeTok
	} else {
		p.keepAlive = keepTok && !closeTok
	}
	req.Close = !p.keepAlive

	// Expect.
	for _, v := range expects {
		if strings.EqualFold(strings.TrimSpace(v), "100-continue") {
			if minor == 1 {
				p.expectContinue = true
			}
			continue
		}
		return &protoError{status: http.StatusExpectationFailed, msg: "unsupported Expect"}
	}

	// The body's framing (RFC 9112 section 6.3).
	if len(encodings) > 0 {
		if minor == 0 {
			return badRequest("Transfer-Encoding in an HTTP/1.0 request")
		}
		if len(lengths) > 0 {
			// Both framings: a smuggling attempt or a broken proxy.
			return badRequest("both Transfer-Encoding and Content-Length")
		}
		if len(encodings) != 1 || !strings.EqualFold(strings.TrimSpace(encodings[0]), "chunked") {
			if len(encodings) == 1 && !strings.Contains(encodings[0], ",") && validToken([]byte(strings.TrimSpace(encodings[0]))) {
				return &protoError{status: http.StatusNotImplemented, msg: "unsupported Transfer-Encoding"}
			}
			return &protoError{status: http.StatusNotImplemented, msg: "unsupported Transfer-Encoding list"}
		}
		p.bodyKind = bodyChunked
		p.contentLength = -1
		req.ContentLength = -1
		req.TransferEncoding = []string{"chunked"}
		delete(req.Header, "Transfer-Encoding")
		return nil
	}
	if len(lengths) > 0 {
		n, ok := parseContentLength(lengths[0])
		if !ok {
			return badRequest("invalid Content-Length")
		}
		for _, v := range lengths[1:] {
			if m, ok := parseContentLength(v); !ok || m != n {
				return badRequest("conflicting Content-Length")
			}
		}
		if len(lengths) > 1 {
			req.Header["Content-Length"] = lengths[:1]
		}
		req.ContentLength = n
		p.contentLength = n
		if n > 0 {
			p.bodyKind = bodyLength
		}
	}
	return nil
}

// pathSafe marks the bytes url.URL keeps in a path as they are (no
// escaping, so RawPath stays empty): unreserved bytes and the sub-delims
// and separators that url.URL leaves unescaped in a path.
var pathSafe = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "-._~$&+,/:;=@" {
		t[c] = true
	}
	return t
}()

// simpleURL is url.ParseRequestURI for the common origin-form target:
// a path of pathSafe bytes, starting with one slash, and an optional
// non-empty query of printable bytes other than '#' and '%'. It reports
// false for anything else, which the caller parses with url.ParseRequestURI;
// where it reports true, the URL is the one ParseRequestURI makes.
func simpleURL(t string) (*url.URL, bool) {
	u := new(url.URL)
	if !simpleURLInto(t, u) {
		return nil, false
	}
	return u, true
}

// simpleURLInto is simpleURL making the URL in *u (which it leaves alone
// where it reports false).
func simpleURLInto(t string, u *url.URL) bool {
	if len(t) == 0 || t[0] != '/' || strings.HasPrefix(t, "//") {
		return false
	}
	path, query, hasQuery := t, "", false
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c == '?' {
			path, query, hasQuery = t[:i], t[i+1:], true
			break
		}
		if !pathSafe[c] {
			return false
		}
	}
	if hasQuery {
		if query == "" {
			return false // ForceQuery: let url decide
		}
		for i := 0; i < len(query); i++ {
			if c := query[i]; c <= ' ' || c >= 0x7f || c == '#' || c == '%' {
				return false
			}
		}
	}
	*u = url.URL{Path: path, RawQuery: query}
	return true
}

// parseVersion parses "HTTP/1.1" or "HTTP/1.0"; another well-formed
// version is 505, anything else 400.
func parseVersion(v []byte) (major, minor int, err *protoError) {
	if len(v) != 8 || string(v[:5]) != "HTTP/" || v[6] != '.' || !isDigit(v[5]) || !isDigit(v[7]) {
		return 0, 0, badRequest("malformed HTTP version")
	}
	major, minor = int(v[5]-'0'), int(v[7]-'0')
	if major != 1 || minor > 1 {
		return 0, 0, &protoError{status: http.StatusHTTPVersionNotSupported, msg: "unsupported HTTP version"}
	}
	return major, minor, nil
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

func protoString(major, minor int) string {
	if major == 1 && minor == 0 {
		return "HTTP/1.0"
	}
	return "HTTP/1.1"
}

// parseContentLength parses a Content-Length value: decimal digits only,
// at most 18 of them (no sign, no space, no overflow).
func parseContentLength(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n, true
}

func hasHTTPScheme(s string) bool {
	return len(s) > 7 && (strings.EqualFold(s[:7], "http://") || (len(s) > 8 && strings.EqualFold(s[:8], "https://")))
}

// trimOWS trims optional white space (SP, HTAB) from both ends.
func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// tokenTable marks the bytes of an RFC 9110 token (tchar).
var tokenTable = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

func validToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !tokenTable[c] {
			return false
		}
	}
	return true
}

// validHost reports whether h may be a Host header's value: the bytes of
// a reg-name, an IP literal and a port (as net/http's check, without its
// dependency).
func validHost(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if tokenTable[c] || c == ':' || c == '[' || c == ']' || c == '@' || c == '(' || c == ')' || c == ',' || c == ';' || c == '=' {
			continue
		}
		return false
	}
	return true
}

// commonMethods are returned without allocating.
var commonMethods = []string{"GET", "POST", "PUT", "HEAD", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE"}

func internMethod(b []byte) string {
	for _, m := range commonMethods {
		if string(b) == m {
			return m
		}
	}
	return string(b)
}

// commonKeys are the canonical header names returned without allocating.
var commonKeys = func() map[string]string {
	m := make(map[string]string)
	for _, k := range []string{
		"Accept", "Accept-Charset", "Accept-Encoding", "Accept-Language", "Authorization",
		"Cache-Control", "Connection", "Content-Encoding", "Content-Length", "Content-Type",
		"Cookie", "Date", "Expect", "Host", "If-Match", "If-Modified-Since", "If-None-Match",
		"Origin", "Pragma", "Range", "Referer", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
		"User-Agent", "Via", "X-Forwarded-For", "X-Forwarded-Proto", "X-Request-Id",
	} {
		m[k] = k
	}
	return m
}()

// canonicalKey returns the canonical form of a header name (a valid
// token), as textproto.CanonicalMIMEHeaderKey does, without allocating for
// common names.
func canonicalKey(name []byte) string {
	var buf [64]byte
	if len(name) > len(buf) {
		return http.CanonicalHeaderKey(string(name))
	}
	b := buf[:len(name)]
	upper := true
	for i, c := range name {
		switch {
		case upper && 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		case !upper && 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		b[i] = c
		upper = c == '-'
	}
	if k, ok := commonKeys[string(b)]; ok {
		return k
	}
	return string(b)
}
