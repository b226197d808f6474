package httpserver

import (
	"bufio"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// simpleURL, where it takes a target, makes the URL url.ParseRequestURI
// makes of it; the targets it leaves to ParseRequestURI include every
// form that needs escaping or has a fragment or an empty query.
func TestSimpleURLMatchesParseRequestURI(t *testing.T) {
	targets := []string{
		"/", "/hello", "/a/b/c.txt", "/a?b=c", "/a?b=c&d=e", "/x;y=1", "/p:q@r", "/$&+,=",
		"/a%20b", "/a b", "//host/path", "/a?", "/a?b#c", "/a#frag", "/é", "/a?b=%41",
		"/a!b", "/(x)", "/a*", "/a?b=c d", "*", "http://x/y", "", "/a?b=c?d",
	}
	simple := 0
	for _, tg := range targets {
		got, ok := simpleURL(tg)
		if !ok {
			continue
		}
		simple++
		want, err := url.ParseRequestURI(tg)
		if err != nil {
			t.Errorf("simpleURL(%q) took a target ParseRequestURI refuses: %v", tg, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("simpleURL(%q) = %#v, ParseRequestURI %#v", tg, got, want)
		}
		if got.String() != tg || got.RequestURI() != tg {
			t.Errorf("simpleURL(%q) does not give back the target: %q, %q", tg, got.String(), got.RequestURI())
		}
	}
	if simple < 8 {
		t.Errorf("simpleURL took only %d targets", simple)
	}
	for _, tg := range []string{"/a%20b", "/a b", "//host/path", "/a?", "/a#frag", "/é", "/a?b=%41", "/a!b", "*", ""} {
		if _, ok := simpleURL(tg); ok {
			t.Errorf("simpleURL(%q) took a target it should leave to ParseRequestURI", tg)
		}
	}
}

// FuzzSimpleURL: wherever simpleURL takes a target, ParseRequestURI takes
// it too and makes the same URL.
func FuzzSimpleURL(f *testing.F) {
	for _, s := range []string{"/", "/a?b=c", "/x;y", "/a%20b", "//h/p", "/a?"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tg string) {
		got, ok := simpleURL(tg)
		if !ok {
			return
		}
		want, err := url.ParseRequestURI(tg)
		if err != nil {
			t.Fatalf("simpleURL(%q) took a target ParseRequestURI refuses: %v", tg, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("simpleURL(%q) = %#v, ParseRequestURI %#v", tg, got, want)
		}
	})
}

// The header values, which share one string and one backing array, are
// those net/http's parser makes, in order, also where a name repeats
// between others (an append to a shared array would overwrite the value
// of the name after it); with the exchange's room for the URL and the
// values (as the server parses) and without (a header of more lines than
// the room takes an array of its own).
func TestParseHeaderMatchesReadRequest(t *testing.T) {
	for _, inExchange := range []bool{false, true} {
		t.Run(map[bool]string{false: "alone", true: "in exchange"}[inExchange], func(t *testing.T) {
			testParseHeaderMatchesReadRequest(t, inExchange)
		})
	}
}

func testParseHeaderMatchesReadRequest(t *testing.T, inExchange bool) {
	for _, raw := range []string{
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /a?b=c HTTP/1.1\r\nHost: x\r\nAccept: */*\r\nUser-Agent: u\r\n\r\n",
		"GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nA: 3\r\nHost: x\r\nB: 4\r\nC: 5\r\nA:  6 \r\n\r\n",
		"GET / HTTP/1.1\r\nCookie: a=1\r\nCookie: b=2\r\nCookie: c=3\r\nHost: x\r\nX-Empty:\r\n\r\n",
		"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\n",
		"GET / HTTP/1.0\r\nconnection: keep-alive\r\nx-lower: v\r\n\r\n",
		"GET /p%20q HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\nF: 6\r\nG: 7\r\nA: 8\r\n\r\n",
	} {
		data := []byte(raw)
		end := findHeaderEnd(data, 0)
		if end < 0 {
			t.Fatalf("%q: no header end", raw)
		}
		var p parsedRequest
		ex := new(exchange)
		if inExchange {
			p = parsedRequest{url: &ex.url, strs: ex.strs[:]}
		}
		if perr := parseRequest(data[:end], &p); perr != nil {
			t.Fatalf("%q: %v", raw, perr.msg)
		}
		if _, simple := simpleURL(p.req.RequestURI); inExchange && (p.req.URL == &ex.url) != simple {
			t.Errorf("%q: URL in the exchange: %v, want it there exactly for a target simpleURL takes (%v)", raw, p.req.URL == &ex.url, simple)
		}
		want, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil {
			t.Fatalf("%q: net/http: %v", raw, err)
		}
		if !reflect.DeepEqual(p.req.Header, want.Header) {
			t.Errorf("%q: Header\n%v\nnet/http makes\n%v", raw, p.req.Header, want.Header)
		}
		if !reflect.DeepEqual(p.req.URL, want.URL) {
			t.Errorf("%q: URL %#v, net/http %#v", raw, p.req.URL, want.URL)
		}
		if p.req.Host != want.Host || p.req.RequestURI != want.RequestURI {
			t.Errorf("%q: Host %q, RequestURI %q; net/http %q, %q", raw, p.req.Host, p.req.RequestURI, want.Host, want.RequestURI)
		}
		// Appending to one value list leaves the others as they were.
		before := p.req.Header.Clone()
		for k := range p.req.Header {
			p.req.Header[k] = append(p.req.Header[k], "appended")
			for k2, v2 := range before {
				if k2 != k && !reflect.DeepEqual(p.req.Header[k2], v2) && !reflect.DeepEqual(p.req.Header[k2], append(slices.Clone(v2), "appended")) {
					t.Errorf("%q: append to %s changed %s to %v", raw, k, k2, p.req.Header[k2])
				}
			}
		}
	}
}

// canonicalKey gives net/http's canonical form (and, for the common names,
// the interned string: TestCanonicalKeyAllocs).
func TestCanonicalKey(t *testing.T) {
	for k := range commonKeys {
		if c := http.CanonicalHeaderKey(k); c != k {
			t.Errorf("common key %q is not canonical (%q)", k, c)
		}
		lower := []byte(strings.ToLower(k))
		if got := canonicalKey(lower); got != k {
			t.Errorf("canonicalKey(%q) = %q, want %q", lower, got, k)
		}
	}
	for _, name := range []string{"x-custom-thing", "SEC-WEBSOCKET-KEY", "a", "content-type", strings.Repeat("ab-", 30)} {
		if got, want := canonicalKey([]byte(name)), http.CanonicalHeaderKey(name); got != want {
			t.Errorf("canonicalKey(%q) = %q, want %q", name, got, want)
		}
	}
}
