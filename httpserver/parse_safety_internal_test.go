package httpserver

import (
	"net/http"
	"reflect"
	"strconv"
	"testing"
)

// parseRaw runs findHeaderEnd and parseRequest over raw, as the server
// does; status is 0 when the request is accepted.
func parseRaw(t *testing.T, raw string) (p parsedRequest, status int) {
	t.Helper()
	data := []byte(raw)
	end := findHeaderEnd(data, 0)
	if end < 0 {
		t.Fatalf("%q: no end of the header block found", raw)
	}
	if perr := parseRequest(data[:end], &p); perr != nil {
		return p, perr.status
	}
	return p, 0
}

// The tokens that decide framing, reuse and Expect are ASCII: a Unicode
// case fold (U+212A KELVIN SIGN for k) or Unicode white space around them
// (U+00A0, U+0085, U+2028, U+3000, U+FEFF) makes another value, refused as
// net/http refuses it (501 for a transfer coding, 400 for a length, 417
// for an expectation), or not a close/keep-alive token.
func TestFramingTokensAreASCII(t *testing.T) {
	const host = "Host: x\r\n"
	for _, c := range []struct {
		name, fields string
		status       int
	}{
		{"TE kelvin", "Transfer-Encoding: chun\u212aed\r\n", 501},
		{"TE trailing nbsp", "Transfer-Encoding: chunked\u00a0\r\n", 501},
		{"TE leading nel", "Transfer-Encoding: \u0085chunked\r\n", 501},
		{"TE fullwidth", "Transfer-Encoding: \uff43hunked\r\n", 501},
		{"TE line separator", "Transfer-Encoding: chunked\u2028\r\n", 501},
		{"TE upper", "Transfer-Encoding: CHUNKED\r\n", 0},
		{"TE tab", "Transfer-Encoding:\tchunked\t\r\n", 0},
		{"TE list", "Transfer-Encoding: gzip, chunked\r\n", 501},
		{"TE twice", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", 501},
		{"TE quoted", "Transfer-Encoding: \"chunked\"\r\n", 501},
		{"TE space before colon", "Transfer-Encoding : chunked\r\n", 400},
		{"CL nbsp after", "Content-Length: 0\u00a0\r\n", 400},
		{"CL nel before", "Content-Length: \u00850\r\n", 400},
		{"CL ideographic space", "Content-Length: 5\u3000\r\n", 400},
		{"CL bom", "Content-Length: \ufeff5\r\n", 400},
		{"CL arabic-indic digit", "Content-Length: \u0665\r\n", 400},
		{"CL plus", "Content-Length: +5\r\n", 400},
		{"CL hex", "Content-Length: 0x5\r\n", 400},
		{"CL list", "Content-Length: 5, 5\r\n", 400},
		{"CL same twice", "Content-Length: 5\r\nContent-Length: 5\r\n", 0},
		{"CL 5 and 05", "Content-Length: 5\r\nContent-Length: 05\r\n", 400},
		{"CL max", "Content-Length: 9223372036854775807\r\n", 0},
		{"CL past max", "Content-Length: 9223372036854775808\r\n", 400},
		{"CL past uint64", "Content-Length: 99999999999999999999\r\n", 400},
		{"CL and TE", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", 400},
		{"Expect nbsp", "Expect: 100-continue\u00a0\r\nContent-Length: 1\r\n", 417},
		{"Expect kelvin-free fold", "Expect: 100-CONTINUE\r\nContent-Length: 1\r\n", 0},
		{"Expect other", "Expect: 200-ok\r\n", 417},
	} {
		p, status := parseRaw(t, "POST / HTTP/1.1\r\n"+host+c.fields+"\r\n")
		if status != c.status {
			t.Errorf("%s: status %d, want %d", c.name, status, c.status)
			continue
		}
		if status == 0 && c.name == "TE upper" && p.bodyKind != bodyChunked {
			t.Errorf("%s: not chunked", c.name)
		}
		if status == 0 && c.name == "CL max" && p.contentLength != 1<<63-1 {
			t.Errorf("%s: length %d", c.name, p.contentLength)
		}
	}

	// Connection tokens: only ASCII close and keep-alive count. Whether
	// the connection is kept follows net/http's server (the first
	// Connection line, for HTTP/1.0 keep-alive), Request.Close its
	// reading of all the lines: the two differ for "keep-alive, close".
	for _, c := range []struct {
		version, conn    string
		keepAlive, close bool
	}{
		{"HTTP/1.1", "close", false, true},
		{"HTTP/1.1", "CLOSE", false, true},
		{"HTTP/1.1", "clo\u017fe", true, false}, // U+017F LONG S folds to s
		{"HTTP/1.1", "close\u00a0", true, false},
		{"HTTP/1.1", "foo, close", false, true},
		{"HTTP/1.1", "foo close", false, false}, // net/http's wantsClose finds it between spaces
		{"HTTP/1.0", "keep-alive", true, false},
		{"HTTP/1.0", "Keep-Alive", true, false},
		{"HTTP/1.0", "\u212aeep-Alive", false, true},
		{"HTTP/1.0", "keep-alive\u00a0", false, true},
		{"HTTP/1.0", "\u0085keep-alive", false, true},
		{"HTTP/1.0", "keep-alive, close", true, true},
		{"HTTP/1.0", "foo keep-alive", true, true},
		{"HTTP/1.2", "", true, false},
	} {
		p, status := parseRaw(t, "GET / "+c.version+"\r\nHost: x\r\nConnection: "+c.conn+"\r\n\r\n")
		if status != 0 || p.keepAlive != c.keepAlive || p.req.Close != c.close {
			t.Errorf("%s Connection %q: status %d, keepAlive %v, Close %v; want %v, %v", c.version, c.conn, status, p.keepAlive, p.req.Close, c.keepAlive, c.close)
		}
	}
}

// Host is checked with net/http's set of bytes.
func TestHostValidatedAsNetHTTP(t *testing.T) {
	for _, h := range []string{"a@b", "a#b", "a^b", "a|b", "a`b", "a b", "a/b", "a\\b", "<a>", "a\"b", "{a}", "\u00e9", "a?b"} {
		if _, status := parseRaw(t, "GET / HTTP/1.1\r\nHost: "+h+"\r\n\r\n"); status != 400 {
			t.Errorf("Host %q: status %d, want 400", h, status)
		}
	}
	for _, h := range []string{"", "a", "a:80", "[::1]:80", "[fe80::1%25eth0]", "xn--bcher-kva.example", "a_b", "a.b.", "a!$&'()*+,;=~-b"} {
		p, status := parseRaw(t, "GET / HTTP/1.1\r\nHost: "+h+"\r\n\r\n")
		if status != 0 || p.req.Host != h {
			t.Errorf("Host %q: status %d, Host %q", h, status, p.req.Host)
		}
	}
	// CONNECT needs no Host (net/http's exception); another HTTP/1.1 request does.
	if _, status := parseRaw(t, "CONNECT a:443 HTTP/1.1\r\n\r\n"); status != 0 {
		t.Errorf("CONNECT without Host: status %d", status)
	}
	if _, status := parseRaw(t, "GET / HTTP/1.1\r\n\r\n"); status != 400 {
		t.Errorf("GET without Host: status %d", status)
	}
	// An absolute-form target wins, but a malformed Host line is still refused.
	if _, status := parseRaw(t, "GET http://a/ HTTP/1.1\r\nHost: a@b\r\n\r\n"); status != 400 {
		t.Errorf("absolute-form with a malformed Host: status %d", status)
	}
}

// Bare LF line ends are served as net/http serves them; a CR elsewhere is
// refused; the end of the header block is found in every mix.
func TestBareLFRequests(t *testing.T) {
	for _, raw := range []string{
		"GET /a HTTP/1.1\nHost: x\nX: 1\n\n",
		"GET /a HTTP/1.1\r\nHost: x\nX: 1\r\n\n",
		"GET /a HTTP/1.1\nHost: x\r\nX: 1\n\r\n",
	} {
		p, status := parseRaw(t, raw)
		if status != 0 || p.req.URL.Path != "/a" || p.req.Host != "x" || !reflect.DeepEqual(p.req.Header, http.Header{"X": {"1"}}) {
			t.Errorf("%q: status %d, %v %q %v", raw, status, p.req.URL, p.req.Host, p.req.Header)
		}
	}
	for _, raw := range []string{
		"GET /a HTTP/1.1\rHost: x\r\n\r\n",
		"GET /a HTTP/1.1\r\nHost: x\rX: 1\r\n\r\n",
		"GET /a HTTP/1.1\r\nHost: x\r\nX\r: 1\r\n\r\n",
		"GET /a\r HTTP/1.1\r\nHost: x\r\n\r\n",
		// An empty line before the request line (skipped by the
		// connection only after a POST, as net/http does).
		"\nGET /a HTTP/1.1\nHost: x\nX: 1\n\n",
		"\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		if _, status := parseRaw(t, raw); status != 400 {
			t.Errorf("%q: status %d, want 400", raw, status)
		}
	}
	// Resumed searches find the same end as one search, a byte at a time.
	for _, raw := range []string{"GET / HTTP/1.1\nHost: x\n\n", "GET / HTTP/1.1\r\nHost: x\n\r\n", "GET / HTTP/1.1\r\nHost: x\r\nA: b\r\r\n\r\n"} {
		want := findHeaderEnd([]byte(raw), 0)
		got, from := -1, 0
		for n := 1; n <= len(raw) && got < 0; n++ {
			got, from = findHeaderEnd([]byte(raw[:n]), from), n
		}
		if got != want || want != len(raw) {
			t.Errorf("%q: end %d a byte at a time, %d at once, want %d", raw, got, want, len(raw))
		}
	}
}

// HTTP/1.x minors past 1 are served as HTTP/1.1 with the version as sent;
// other majors are 505 after the checks net/http makes first; malformed
// versions are 400.
func TestVersions(t *testing.T) {
	for _, c := range []struct {
		version string
		status  int
	}{
		{"HTTP/1.0", 0}, {"HTTP/1.1", 0}, {"HTTP/1.2", 0}, {"HTTP/1.9", 0},
		{"HTTP/2.0", 505}, {"HTTP/0.9", 505}, {"HTTP/9.9", 505},
		{"HTTP/1.10", 400}, {"http/1.1", 400}, {"HTTP/1", 400}, {"HTTP/1.1 ", 400}, {"HTTP/a.b", 400},
	} {
		p, status := parseRaw(t, "GET / "+c.version+"\r\nHost: x\r\n\r\n")
		if status != c.status {
			t.Errorf("%q: status %d, want %d", c.version, status, c.status)
			continue
		}
		if status == 0 && (p.req.Proto != c.version || p.req.ProtoMajor != 1 || p.req.ProtoMinor != int(c.version[7]-'0')) {
			t.Errorf("%q: Proto %q %d.%d", c.version, p.req.Proto, p.req.ProtoMajor, p.req.ProtoMinor)
		}
	}
	// A framing error comes before the version's 505, as in net/http.
	if _, status := parseRaw(t, "GET / HTTP/2.0\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"); status != 501 {
		t.Errorf("HTTP/2.0 with gzip: status %d, want 501", status)
	}
}

// A chunked request's Trailer names become Request.Trailer's keys and leave
// Header; framing names are refused; the fields that arrive are merged in.
func TestTrailerDeclaration(t *testing.T) {
	p, status := parseRaw(t, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: x-sum, X-Other\r\nTrailer: ,\r\n\r\n")
	if status != 0 || !reflect.DeepEqual(p.req.Trailer, http.Header{"X-Sum": nil, "X-Other": nil}) || p.req.Header["Trailer"] != nil {
		t.Fatalf("status %d, Trailer %v, Header %v", status, p.req.Trailer, p.req.Header)
	}
	var d bodyDecoder
	d.reset(bodyChunked, -1)
	in := []byte("3\r\nabc\r\n0\r\nX-Sum: 42 \r\nX-Undeclared: u\r\nX-Sum: 43\r\n\r\n")
	out := make([]byte, 8)
	for len(in) > 0 && !d.done {
		c, _, err := d.decode(in, out)
		if err != nil {
			t.Fatal(err)
		}
		in = in[c:]
	}
	d.mergeTrailer(&p.req.Trailer)
	want := http.Header{"X-Sum": {"42", "43"}, "X-Other": nil, "X-Undeclared": {"u"}}
	if !d.done || !reflect.DeepEqual(p.req.Trailer, want) {
		t.Errorf("done %v, Trailer %v, want %v", d.done, p.req.Trailer, want)
	}
	for _, key := range []string{"Content-Length", "transfer-encoding", "Trailer"} {
		if _, status := parseRaw(t, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: a, "+key+"\r\n\r\n"); status != 400 {
			t.Errorf("Trailer declaring %s: status %d, want 400", key, status)
		}
	}
	// Without chunked framing, Trailer stays an ordinary field.
	p, status = parseRaw(t, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTrailer: X-Sum\r\n\r\n")
	if status != 0 || p.req.Trailer != nil || p.req.Header.Get("Trailer") != "X-Sum" {
		t.Errorf("status %d, Trailer %v, Header %v", status, p.req.Trailer, p.req.Header)
	}
}

// Content-Length takes what strconv.ParseUint(s, 10, 63) takes, as
// net/http's does.
func TestContentLengthAsParseUint(t *testing.T) {
	for _, s := range []string{"0", "5", "0005", "00000000000000000000000005", "9223372036854775807", "09223372036854775807",
		"9223372036854775808", "18446744073709551616", "", "-1", "+1", "1_0", "0x1", "1 ", " 1", "1e3", "\u0661"} {
		n, ok := parseContentLength(s)
		want, err := strconv.ParseUint(s, 10, 63)
		if ok != (err == nil) || (ok && uint64(n) != want) {
			t.Errorf("%q: %d %v, ParseUint %d %v", s, n, ok, want, err)
		}
	}
}

// A chunk-size line is read as net/http reads it: white space may follow
// a size, but not come between a size and its extensions.
func TestChunkSizeLine(t *testing.T) {
	for _, c := range []struct {
		line string
		size int64
		ok   bool
	}{
		{"5", 5, true}, {"5 ", 5, true}, {"5\t", 5, true}, {"5;a=b", 5, true}, {"a;x", 10, true},
		{"5 ;a", 0, false}, {"5\t;a", 0, false}, {"5 5", 0, false}, {"0x5", 0, false}, {"-5", 0, false},
		{"", 0, false}, {";a", 0, false}, {"5;a\x00", 0, false},
		{"0000000000000005", 5, true}, {"7fffffffffffffff", 1<<63 - 1, true}, {"8000000000000000", 0, false}, {"00000000000000005", 0, false},
	} {
		size, err := parseChunkSize([]byte(c.line))
		if (err == nil) != c.ok || (c.ok && size != c.size) {
			t.Errorf("%q: %d, %v", c.line, size, err)
		}
	}
}

// A header of as many lines as the exchange holds values for (the Host
// line aside) keeps them in the exchange, with no array of its own.
func TestHeaderValuesFitTheExchange(t *testing.T) {
	raw := "GET / HTTP/1.1\r\nHost: x\r\n"
	for i := 0; i < exchangeHeaderValues; i++ {
		raw += "H" + strconv.Itoa(i) + ": v\r\n"
	}
	data := []byte(raw + "\r\n")
	ex := new(exchange)
	p := parsedRequest{url: &ex.url, strs: ex.strs[:]}
	if perr := parseRequest(data, &p); perr != nil {
		t.Fatal(perr.msg)
	}
	if &p.req.Header["H0"][0] != &ex.strs[0] || &p.req.Header["H5"][0] != &ex.strs[5] {
		t.Errorf("the header's values are not in the exchange")
	}
}
