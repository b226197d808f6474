package httpserver

// The request parser: the request line and the header block of HTTP/1.0
// and HTTP/1.1 (RFC 9112), strict and bounded. It works on bytes the
// connection task already holds and allocates only what the *http.Request
// keeps (the strings of the header).

import (
	"bytes"
	"math"
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

// A line of the request line and header block ends with LF, CRLF being
// the usual form: RFC 9112 section 2.2 lets a recipient take a bare LF as a
// line end (net/http does). A CR anywhere else in a line is refused by the
// checks of the line's content (a CR is no token byte, no target byte and
// no field-value byte). Chunked bodies are stricter: see takeLine.

// maxLeadingCRLF is how many CR or LF bytes before the request line that
// follows a POST are skipped (net/http's tolerance of clients that end a
// POST body with an extra CRLF). Elsewhere an empty line before a request
// line is a malformed request, as in net/http.
const maxLeadingCRLF = 4

// findHeaderEnd returns the length of the header block that starts buf,
// through the empty line that ends it, or -1 if buf does not hold it all
// yet. from is where the search may resume: the bytes before it were
// searched already (pass the length of the previous, shorter buf), so a
// client that sends its headers a byte at a time costs linear time.
func findHeaderEnd(buf []byte, from int) int {
	// An end is an LF followed by an empty line (LF, or CRLF): at most 3
	// bytes, which may straddle from. An empty first line is taken for
	// the end: parseRequest refuses the request it makes.
	from = max(from-2, 0)
	if len(buf) > 0 && buf[0] == '\n' {
		return 1
	}
	if len(buf) > 1 && buf[0] == '\r' && buf[1] == '\n' {
		return 2
	}
	for {
		i := bytes.IndexByte(buf[from:], '\n')
		if i < 0 {
			return -1
		}
		j := from + i + 1 // just past the LF
		switch {
		case j < len(buf) && buf[j] == '\n':
			return j + 1
		case j+1 < len(buf) && buf[j] == '\r' && buf[j+1] == '\n':
			return j + 2
		}
		from = j
	}
}

// cutLine returns the line that starts b without its line end (LF or
// CRLF), and the rest of b after it; ok is false if b holds no LF.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return nil, b, false
	}
	line, rest = b[:i], b[i+1:]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, rest, true
}

var crlf = []byte("\r\n")

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
//
// The checks run in net/http's order, so that a request wrong in two ways
// gets net/http's status: the request line, the header fields, the body's
// framing (400, 501), the version (505), Host (400), then Expect (417).
// Every token that decides framing, reuse of the connection or Expect is
// compared in ASCII only, trimmed of spaces and tabs only: a Unicode case
// fold (U+212A KELVIN SIGN for k) or Unicode white space (U+00A0, U+0085)
// makes a value that is not the token.
func parseRequest(hdr []byte, p *parsedRequest) *protoError {
	line, rest, _ := cutLine(hdr)
	method, target, version, perr := splitRequestLine(line)
	if perr != nil {
		return perr
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
		Proto:      protoString(major, minor, version),
		ProtoMajor: major,
		ProtoMinor: minor,
		Header:     make(http.Header, 8),
		RequestURI: str(target),
	}
	var f framingFields
	if perr := p.parseFields(rest, str, &f); perr != nil {
		return perr
	}
	if f.hosts > 1 {
		return badRequest("too many Host headers")
	}
	if perr := p.parseTarget(); perr != nil {
		return perr
	}
	fixPragmaCacheControl(req.Header)
	p.keepAlive = keepAlive(major, minor, f.connection)
	req.Close = requestClose(major, minor, f.connection)
	if perr := p.parseFraming(&f); perr != nil {
		return perr
	}
	if major != 1 {
		return &protoError{status: http.StatusHTTPVersionNotSupported, msg: "unsupported protocol version"}
	}
	if f.hosts == 0 && minor >= 1 && req.Method != http.MethodConnect {
		return badRequest("missing required Host header")
	}
	if f.hosts == 1 && !validHost(f.host) {
		return badRequest("malformed Host header")
	}
	req.Host = req.URL.Host // absolute-form wins over Host (RFC 9112 3.2.2)
	if req.Host == "" {
		req.Host = f.host
	}
	return p.parseExpect(f.expect)
}

// splitRequestLine splits request-line = method SP request-target SP
// HTTP-version (RFC 9112 section 3), checking the method and the target's
// bytes.
func splitRequestLine(line []byte) (method, target, version []byte, err *protoError) {
	sp1 := bytes.IndexByte(line, ' ')
	if sp1 <= 0 {
		return nil, nil, nil, badRequest("malformed HTTP request")
	}
	method = line[:sp1]
	rl := line[sp1+1:]
	sp2 := bytes.IndexByte(rl, ' ')
	if sp2 <= 0 {
		return nil, nil, nil, badRequest("malformed HTTP request")
	}
	target, version = rl[:sp2], rl[sp2+1:]
	if !validToken(method) {
		return nil, nil, nil, badRequest("invalid method")
	}
	for _, b := range target {
		if b <= ' ' || b == 0x7f {
			return nil, nil, nil, badRequest("invalid request target")
		}
	}
	return method, target, version, nil
}

// framingFields are the header fields parseFields sets aside for the
// checks that follow: the values of each line of these names, in order.
type framingFields struct {
	// hosts counts the Host lines; host is the first one's value.
	hosts                          int
	host                           string
	lengths, encodings, connection []string
	// expect is the first Expect line's value; hasExpect whether there
	// is one.
	expect    string
	hasExpect bool
}

// parseFields parses the header field lines in rest (the block after the
// request line, through its final empty line) into p.req.Header, checking
// each name and value (RFC 9110 section 5), and sets aside in f what
// decides framing.
func (p *parsedRequest) parseFields(rest []byte, str func([]byte) string, f *framingFields) *protoError {
	req := &p.req
	// The values of Header share one backing array, one element per line
	// (the lines less the Host line and repeats of a name waste an
	// element each); a repeated name appends past its slice's capacity,
	// which copies.
	var strs []string
	for {
		fl, next, ok := cutLine(rest)
		if !ok {
			return badRequest("malformed header block")
		}
		rest = next
		if len(fl) == 0 {
			break
		}
		colon := bytes.IndexByte(fl, ':')
		if colon <= 0 {
			// No name, or a line that starts with white space (obsolete
			// line folding, which RFC 9112 section 5.2 lets a server
			// reject).
			return badRequest("malformed header line")
		}
		name := fl[:colon]
		if !validToken(name) {
			return badRequest("invalid header name")
		}
		value := trimOWS(fl[colon+1:])
		if !validFieldValue(value) {
			return badRequest("invalid header value")
		}
		key := canonicalKey(name)
		v := str(value)
		switch key {
		case "Host":
			if f.hosts == 0 {
				f.host = v
			}
			f.hosts++
			continue // net/http leaves Host out of Header
		case "Content-Length":
			f.lengths = append(f.lengths, v)
		case "Transfer-Encoding":
			f.encodings = append(f.encodings, v)
		case "Connection":
			f.connection = append(f.connection, v)
		case "Expect":
			if !f.hasExpect {
				f.expect, f.hasExpect = v, true
			}
		}
		if vs, ok := req.Header[key]; ok {
			req.Header[key] = append(vs, v)
			continue
		}
		if len(strs) == 0 {
			n := bytes.Count(rest, []byte{'\n'}) // the lines left (the empty line's LF stands for this one)
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
	if len(rest) != 0 {
		return badRequest("malformed header block")
	}
	return nil
}

// parseTarget makes the request's URL from its target: origin-form,
// absolute-form, authority-form (CONNECT), asterisk-form (OPTIONS).
func (p *parsedRequest) parseTarget() *protoError {
	req := &p.req
	rawTarget := req.RequestURI
	switch {
	case req.Method == http.MethodConnect && !strings.HasPrefix(rawTarget, "/"):
		// authority-form, read as net/http reads it: as the authority
		// of an http URL.
		u, err := url.ParseRequestURI("http://" + rawTarget)
		if err != nil {
			return badRequest("invalid CONNECT target")
		}
		u.Scheme = ""
		req.URL = u
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
			if u.Scheme != "" && u.Host == "" {
				// RFC 9110 section 4.2.1: an http URI with an empty
				// host is invalid.
				return badRequest("invalid request target")
			}
		}
		req.URL = u
	}
	return nil
}

// fixPragmaCacheControl adds Cache-Control: no-cache to a request that
// says only Pragma: no-cache (RFC 9111 section 5.4), as net/http does.
func fixPragmaCacheControl(h http.Header) {
	if hp, ok := h["Pragma"]; ok && len(hp) > 0 && hp[0] == "no-cache" {
		if _, ok := h["Cache-Control"]; !ok {
			h["Cache-Control"] = []string{"no-cache"}
		}
	}
}

// keepAlive reports whether the client lets the connection carry another
// request (RFC 9112 section 9.3), as net/http's server reads it before the
// handler runs (its wantsClose and wantsHttp10KeepAlive): HTTP/1.1 unless
// Request.Close is set or the first Connection line holds close between
// boundaries; HTTP/1.0 only if the first Connection line holds keep-alive
// between boundaries, whatever the other lines say (net/http reads that
// one only). The response may still close the connection (an HTTP/1.0
// body with no length, the handler's Connection: close).
func keepAlive(major, minor int, connection []string) bool {
	if major < 1 {
		return false
	}
	first := ""
	if len(connection) > 0 {
		first = connection[0]
	}
	if major == 1 && minor == 0 {
		return containsToken(first, "keep-alive")
	}
	return !requestClose(major, minor, connection) && !containsToken(first, "close")
}

// requestClose is Request.Close as net/http sets it from the request: an
// HTTP/1.1 request whose Connection lines list close, an HTTP/1.0 one
// unless they list keep-alive and not close.
func requestClose(major, minor int, connection []string) bool {
	if major < 1 {
		return true
	}
	hasClose := hasToken(connection, "close")
	if major == 1 && minor == 0 {
		return hasClose || !hasToken(connection, "keep-alive")
	}
	return hasClose
}

// parseFraming decides how the body is framed (RFC 9112 section 6.3) from
// the Transfer-Encoding and Content-Length lines.
func (p *parsedRequest) parseFraming(f *framingFields) *protoError {
	req := &p.req
	if len(f.encodings) > 0 {
		if p.req.ProtoMajor == 1 && p.req.ProtoMinor == 0 {
			// RFC 9112 section 6.1: the framing of an HTTP/1.0 message
			// with Transfer-Encoding is faulty.
			return badRequest("Transfer-Encoding in an HTTP/1.0 request")
		}
		if len(f.encodings) != 1 || !asciiEqualFold(f.encodings[0], "chunked") {
			return &protoError{status: http.StatusNotImplemented, msg: "unsupported transfer encoding"}
		}
		if len(f.lengths) > 0 {
			// Both framings (RFC 9112 section 6.1): a smuggling attempt
			// or a broken proxy.
			return badRequest("both Transfer-Encoding and Content-Length")
		}
		p.bodyKind = bodyChunked
		p.contentLength = -1
		req.ContentLength = -1
		req.TransferEncoding = []string{"chunked"}
		delete(req.Header, "Transfer-Encoding")
		return p.parseTrailerDecl()
	}
	if len(f.lengths) > 0 {
		// As net/http: every line says the same (after trimming), one
		// decimal number, 0 to 2^63-1.
		first := f.lengths[0]
		for _, v := range f.lengths[1:] {
			if v != first {
				return badRequest("conflicting Content-Length")
			}
		}
		n, ok := parseContentLength(first)
		if !ok {
			return badRequest("bad Content-Length")
		}
		if len(f.lengths) > 1 {
			req.Header["Content-Length"] = f.lengths[:1]
		}
		req.ContentLength = n
		p.contentLength = n
		if n > 0 {
			p.bodyKind = bodyLength
		}
	}
	return nil
}

// parseTrailerDecl reads a chunked request's Trailer lines, as net/http
// does: the declared names become the keys of Request.Trailer (their
// values arrive after the body), the Trailer field leaves Header, and a
// declared framing field is refused.
func (p *parsedRequest) parseTrailerDecl() *protoError {
	req := &p.req
	vv, ok := req.Header["Trailer"]
	if !ok {
		return nil
	}
	delete(req.Header, "Trailer")
	var trailer http.Header
	for _, v := range vv {
		for key := range strings.SplitSeq(v, ",") {
			key = trimOWS(key)
			if key == "" {
				continue
			}
			key = http.CanonicalHeaderKey(key)
			switch key {
			case "Transfer-Encoding", "Trailer", "Content-Length":
				return badRequest("bad trailer key")
			}
			if trailer == nil {
				trailer = make(http.Header)
			}
			trailer[key] = nil
		}
	}
	req.Trailer = trailer
	return nil
}

// parseExpect reads the Expect field as net/http does: its first line
// listing 100-continue (an ASCII token, bounded by space, tab or comma)
// asks for 100 Continue, which HTTP/1.1 gets before a body is read; any
// other non-empty first line is an expectation the server cannot meet.
func (p *parsedRequest) parseExpect(expect string) *protoError {
	if containsToken(expect, "100-continue") {
		p.expectContinue = p.req.ProtoAtLeast(1, 1) && p.req.ContentLength != 0
		return nil
	}
	if expect != "" {
		return &protoError{status: http.StatusExpectationFailed, msg: "unsupported Expect"}
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

// parseVersion parses HTTP-version = "HTTP/" DIGIT "." DIGIT (RFC 9112
// section 2.3); anything else is 400. The caller refuses a major version
// other than 1 with 505, after the checks net/http makes before that one;
// HTTP/1.x with x above 1 is served as HTTP/1.1 (RFC 9110 section 6.2).
func parseVersion(v []byte) (major, minor int, err *protoError) {
	if len(v) != 8 || string(v[:5]) != "HTTP/" || v[6] != '.' || !isDigit(v[5]) || !isDigit(v[7]) {
		return 0, 0, badRequest("malformed HTTP version")
	}
	return int(v[5] - '0'), int(v[7] - '0'), nil
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// protoString returns the request's Proto: the version as the client sent
// it, without an allocation for HTTP/1.0 and HTTP/1.1.
func protoString(major, minor int, version []byte) string {
	switch {
	case major == 1 && minor == 0:
		return "HTTP/1.0"
	case major == 1 && minor == 1:
		return "HTTP/1.1"
	}
	return string(version)
}

// parseContentLength parses a Content-Length value (already trimmed of
// spaces and tabs) as net/http does: decimal digits only (leading zeros
// allowed), 0 to 2^63-1 (no sign, no inner space, no overflow).
func parseContentLength(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		d := int64(s[i] - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

func hasHTTPScheme(s string) bool {
	return len(s) > 7 && (strings.EqualFold(s[:7], "http://") || (len(s) > 8 && strings.EqualFold(s[:8], "https://")))
}

// trimOWS trims optional white space (SP, HTAB) from both ends.
func trimOWS[S []byte | string](b S) S {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// asciiEqualFold reports whether s equals the lower-case ASCII token tok,
// ASCII case-insensitively: a byte outside ASCII never matches (unlike
// strings.EqualFold, which takes U+212A KELVIN SIGN for a k).
func asciiEqualFold(s, tok string) bool {
	if len(s) != len(tok) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != tok[i] {
			return false
		}
	}
	return true
}

// hasToken reports whether one of the comma-separated lists vs holds the
// lower-case token tok (RFC 9110 section 5.6.1), elements trimmed of
// spaces and tabs and compared in ASCII only.
func hasToken(vs []string, tok string) bool {
	for _, v := range vs {
		for elem := range strings.SplitSeq(v, ",") {
			if asciiEqualFold(trimOWS(elem), tok) {
				return true
			}
		}
	}
	return false
}

// containsToken reports whether v holds the lower-case token tok between
// boundaries (start or end of v, space, tab, comma), ASCII
// case-insensitively: net/http's test of the Expect field.
func containsToken(v, tok string) bool {
	for i := 0; i+len(tok) <= len(v); i++ {
		if i > 0 && !isTokenBoundary(v[i-1]) {
			continue
		}
		if end := i + len(tok); end != len(v) && !isTokenBoundary(v[end]) {
			continue
		}
		if asciiEqualFold(v[i:i+len(tok)], tok) {
			return true
		}
	}
	return false
}

func isTokenBoundary(b byte) bool { return b == ' ' || b == ',' || b == '\t' }

// validFieldValue reports whether b holds only the bytes of a field value
// (RFC 9110 section 5.5): visible ASCII, obs-text, space and tab; no
// control byte (CR, LF and NUL among them) and no DEL.
func validFieldValue(b []byte) bool {
	for _, c := range b {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
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

// hostTable marks the bytes a Host value may hold: those of a reg-name,
// an IP literal (with a zone) and a port. It is net/http's set, so that
// the values net/http refuses with "malformed Host header" (a@b, a#b,
// a^b, a|b, a backtick, ...) are refused here too.
var hostTable = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!$%&'()*+,-.:;=[]_~" {
		t[c] = true
	}
	return t
}()

// validHost reports whether h may be a Host header's value (or a CONNECT
// target).
func validHost(h string) bool {
	for i := 0; i < len(h); i++ {
		if !hostTable[h[i]] {
			return false
		}
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
		// A WebSocket opening handshake's, and those browsers send.
		"Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Extensions", "Sec-Websocket-Protocol",
		"Sec-Fetch-Dest", "Sec-Fetch-Mode", "Sec-Fetch-Site", "Sec-Fetch-User", "Sec-Ch-Ua",
		"Sec-Ch-Ua-Mobile", "Sec-Ch-Ua-Platform", "Upgrade-Insecure-Requests", "Dnt", "Priority",
		"If-Range", "Keep-Alive", "Forwarded", "X-Real-Ip",
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
