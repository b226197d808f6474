package httpserver

import (
	"fmt"
	"net/http"
	"testing"
)

// FuzzParseRequest feeds arbitrary bytes to the request parser and the
// body decoder: they must not panic or loop, and they must either refuse
// the request with a 4xx or 5xx status or return a request that is whole.
// The seed corpus (testdata/fuzz/FuzzParseRequest) holds malformed
// requests; TestMalformedCorpusLive sends each to a live server.
func FuzzParseRequest(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Add([]byte("POST /p?q=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"))
	f.Add([]byte("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;e=1\r\nhello\r\n0\r\nT: v\r\n\r\n"))
	f.Add([]byte("GET / HTTP/2.0\r\nHost: x\r\n\r\n"))
	f.Add([]byte("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"))
	f.Add([]byte("\r\n\r\nOPTIONS * HTTP/1.0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		end := findHeaderEnd(data, 0)
		// Resuming the search from any earlier point finds the same end.
		if half := findHeaderEnd(data, len(data)/2); end >= 0 && half != end && findHeaderEnd(data[:len(data)/2], 0) < 0 {
			t.Fatalf("findHeaderEnd resumed at %d found %d, from the start %d", len(data)/2, half, end)
		}
		if end < 0 {
			return
		}
		var p parsedRequest
		perr := parseRequest(data[:end], &p)
		if perr != nil {
			if perr.status < 400 || perr.status > 599 {
				t.Fatalf("refused with status %d", perr.status)
			}
			return
		}
		req := &p.req
		switch {
		case req.Method == "" || req.URL == nil:
			t.Fatalf("incomplete request %+v", req)
		case req.ProtoMajor != 1 || req.ProtoMinor > 9 || req.Proto != fmt.Sprintf("HTTP/1.%d", req.ProtoMinor):
			// HTTP/1.x is served (as 1.1 for x above 1), Proto as sent.
			t.Fatalf("version %d.%d (%q) accepted", req.ProtoMajor, req.ProtoMinor, req.Proto)
		case p.bodyKind == bodyChunked && p.contentLength != -1:
			t.Fatalf("chunked body with a length %d", p.contentLength)
		case p.bodyKind == bodyLength && p.contentLength <= 0:
			t.Fatalf("length body of %d", p.contentLength)
		case req.Header.Get("Host") != "":
			t.Fatalf("Host left in Header")
		}
		if _, ok := req.Header["Transfer-Encoding"]; ok && p.bodyKind == bodyChunked {
			t.Fatalf("Transfer-Encoding left in Header")
		}
		// The body: decode what follows in small steps, checking that
		// every step makes progress.
		var d bodyDecoder
		d.reset(p.bodyKind, p.contentLength)
		in := data[end:]
		out := make([]byte, 7)
		total := 0
		for !d.done && len(in) > 0 {
			step := min(len(in), 3)
			c, n, err := d.decode(in[:step], out)
			if err != nil {
				return
			}
			if c == 0 && n == 0 && !d.done {
				t.Fatalf("decode made no progress at %q", in[:step])
			}
			total += n
			in = in[c:]
		}
		if d.done && p.bodyKind == bodyLength && int64(total) != p.contentLength {
			t.Fatalf("length body gave %d bytes, want %d", total, p.contentLength)
		}
		_ = http.StatusOK
	})
}
