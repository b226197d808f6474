package websocket

import (
	"compress/flate"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/blitz-go/blitz"
)

// hdr makes a header with one Sec-WebSocket-Extensions line per value.
func hdr(lines ...string) http.Header {
	h := http.Header{}
	for _, l := range lines {
		h.Add("Sec-WebSocket-Extensions", l)
	}
	return h
}

func TestParseExtensions(t *testing.T) {
	cases := []struct {
		in   []string
		want string // the extensions re-formatted, "!" for an error
	}{
		{nil, ""},
		{[]string{""}, ""},
		{[]string{" , ,"}, ""},
		{[]string{"permessage-deflate"}, "permessage-deflate"},
		{[]string{"permessage-deflate; client_max_window_bits"}, "permessage-deflate;client_max_window_bits"},
		{[]string{"permessage-deflate ;client_max_window_bits = 10 ; server_no_context_takeover"}, "permessage-deflate;client_max_window_bits=10;server_no_context_takeover"},
		{[]string{`permessage-deflate; server_max_window_bits="10"`}, "permessage-deflate;server_max_window_bits=10"},
		{[]string{`foo; a="b\c"`}, "foo;a=bc"},
		{[]string{"a, b; x", "c"}, "a|b;x|c"},
		{[]string{"permessage-deflate;"}, "!"},
		{[]string{"; x"}, "!"},
		{[]string{"a b"}, "!"},
		{[]string{"a; x="}, "!"},
		{[]string{`a; x="10`}, "!"},
		{[]string{`a; x=""`}, "!"},
		{[]string{`a; x="1 0"`}, "!"},
		{[]string{`a; x="10\`}, "!"},
		{[]string{"a; x=(10)"}, "!"},
		{[]string{"a=1"}, "!"},
		{[]string{"ä"}, "!"},
	}
	for _, tc := range cases {
		exts, err := parseExtensions(tc.in)
		got := "!"
		if err == nil {
			got = formatExts(exts)
		} else if !errors.Is(err, errExtSyntax) {
			t.Errorf("%q: error %v does not wrap errExtSyntax", tc.in, err)
		}
		if got != tc.want {
			t.Errorf("%q: got %q, want %q (err %v)", tc.in, got, tc.want, err)
		}
	}
}

func formatExts(exts []extension) string {
	var parts []string
	for _, e := range exts {
		s := e.name
		for _, p := range e.params {
			s += ";" + p.name
			if p.hasValue {
				s += "=" + p.value
			}
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "|")
}

// The server's choice: header lines and options → the response ("" when
// every offer is declined).
func TestServerAccept(t *testing.T) {
	def := CompressionOptions{}
	take := CompressionOptions{ContextTakeover: true, PeerContextTakeover: true}
	win := CompressionOptions{PeerMaxWindowBits: 10}
	huff := CompressionOptions{Level: flate.HuffmanOnly, ContextTakeover: true, PeerContextTakeover: true}
	const nct = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
	cases := []struct {
		name  string
		o     CompressionOptions
		lines []string
		want  string
	}{
		{"none", def, nil, ""},
		{"other_extension", def, []string{"x-webkit-deflate-frame"}, ""},
		{"plain_default", def, []string{"permessage-deflate"}, nct},
		{"plain_takeover", take, []string{"permessage-deflate"}, "permessage-deflate"},
		{"case_insensitive", take, []string{"PerMessage-Deflate; Server_No_Context_Takeover"}, "permessage-deflate; server_no_context_takeover"},
		{"client_nct_hint", take, []string{"permessage-deflate; client_no_context_takeover"}, "permessage-deflate; client_no_context_takeover"},
		{"server_bits_15", take, []string{"permessage-deflate; server_max_window_bits=15"}, "permessage-deflate; server_max_window_bits=15"},
		{"server_bits_quoted", take, []string{`permessage-deflate; server_max_window_bits="15"`}, "permessage-deflate; server_max_window_bits=15"},
		{"server_bits_8_declined", take, []string{"permessage-deflate; server_max_window_bits=8"}, ""},
		{"server_bits_8_huffman", huff, []string{"permessage-deflate; server_max_window_bits=8"}, "permessage-deflate; server_max_window_bits=8"},
		{"client_bits_ignored", def, []string{"permessage-deflate; client_max_window_bits"}, nct},
		{"client_bits_requested", win, []string{"permessage-deflate; client_max_window_bits"}, nct + "; client_max_window_bits=10"},
		{"client_bits_smaller_offer", win, []string{"permessage-deflate; client_max_window_bits=9"}, nct + "; client_max_window_bits=9"},
		{"client_bits_not_offered", win, []string{"permessage-deflate"}, nct},
		{"second_offer", take, []string{"permessage-deflate; server_max_window_bits=9, permessage-deflate; client_no_context_takeover"}, "permessage-deflate; client_no_context_takeover"},
		{"across_lines", take, []string{"x-foo, permessage-deflate; server_max_window_bits=9", "permessage-deflate; server_no_context_takeover"}, "permessage-deflate; server_no_context_takeover"},
		{"invalid_then_valid", take, []string{"permessage-deflate; foo, permessage-deflate"}, "permessage-deflate"},
		{"unknown_param", def, []string{"permessage-deflate; foo"}, ""},
		{"duplicate", def, []string{"permessage-deflate; server_no_context_takeover; server_no_context_takeover"}, ""},
		{"duplicate_bits", def, []string{"permessage-deflate; client_max_window_bits; client_max_window_bits=10"}, ""},
		{"nct_with_value", def, []string{"permessage-deflate; client_no_context_takeover=1"}, ""},
		{"server_bits_no_value", def, []string{"permessage-deflate; server_max_window_bits"}, ""},
		{"server_bits_7", def, []string{"permessage-deflate; server_max_window_bits=7"}, ""},
		{"server_bits_16", def, []string{"permessage-deflate; server_max_window_bits=16"}, ""},
		{"client_bits_leading_zero", def, []string{"permessage-deflate; client_max_window_bits=09"}, ""},
		{"client_bits_sign", def, []string{"permessage-deflate; client_max_window_bits=+9"}, ""},
		{"client_bits_word", def, []string{"permessage-deflate; client_max_window_bits=ten"}, ""},
		{"malformed_header", def, []string{"permessage-deflate; =", "permessage-deflate"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if p, ok := serverAccept(hdr(tc.lines...)[hdrExtensions], &tc.o); ok {
				got = p.String()
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// The client's check of the response: header lines → parameters in
// force, declined, or an error wrapping ErrBadHandshake.
func TestClientCheck(t *testing.T) {
	plain := clientOffer(&CompressionOptions{})
	bits := clientOffer(&CompressionOptions{PeerMaxWindowBits: 10})
	cases := []struct {
		name  string
		offer deflateParams
		lines []string
		want  string // the parameters, "" declined, "!" an error
	}{
		{"declined", plain, nil, ""},
		{"empty_line", plain, []string{""}, ""},
		{"accepted", plain, []string{"permessage-deflate; server_no_context_takeover; client_no_context_takeover"}, "permessage-deflate; server_no_context_takeover; client_no_context_takeover"},
		{"server_keeps_context", plain, []string{"permessage-deflate; client_no_context_takeover"}, "permessage-deflate; client_no_context_takeover"},
		{"server_bits_unasked", plain, []string{"permessage-deflate; server_max_window_bits=9"}, "permessage-deflate; server_max_window_bits=9"},
		{"server_bits_kept", bits, []string{"permessage-deflate; server_max_window_bits=10"}, "permessage-deflate; server_max_window_bits=10"},
		{"server_bits_smaller", bits, []string{"permessage-deflate; server_max_window_bits=8"}, "permessage-deflate; server_max_window_bits=8"},
		{"server_bits_larger", bits, []string{"permessage-deflate; server_max_window_bits=11"}, "!"},
		{"server_bits_missing", bits, []string{"permessage-deflate"}, "!"},
		{"client_bits_not_offered", plain, []string{"permessage-deflate; client_max_window_bits=10"}, "!"},
		{"client_bits_no_value", plain, []string{"permessage-deflate; client_max_window_bits"}, "!"},
		{"two_elements", plain, []string{"permessage-deflate, permessage-deflate"}, "!"},
		{"two_lines", plain, []string{"permessage-deflate", "permessage-deflate"}, "!"},
		{"other_extension", plain, []string{"x-webkit-deflate-frame"}, "!"},
		{"unknown_param", plain, []string{"permessage-deflate; foo=1"}, "!"},
		{"duplicate", plain, []string{"permessage-deflate; client_no_context_takeover; client_no_context_takeover"}, "!"},
		{"bad_value", plain, []string{"permessage-deflate; server_max_window_bits=7"}, "!"},
		{"malformed", plain, []string{"permessage-deflate;;"}, "!"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, on, err := clientCheck(hdr(tc.lines...), tc.offer)
			got := ""
			switch {
			case err != nil:
				got = "!"
				if !errors.Is(err, ErrBadHandshake) {
					t.Fatalf("error %v does not wrap ErrBadHandshake", err)
				}
			case on:
				got = p.String()
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q (err %v)", got, tc.want, err)
			}
		})
	}
}

// Invalid options fail Dial and Upgrade with ErrBadOptions.
func TestCompressionOptionsCheck(t *testing.T) {
	bad := []CompressionOptions{{Level: 10}, {Level: -3}, {PeerMaxWindowBits: 7}, {PeerMaxWindowBits: 16}}
	for _, o := range bad {
		if err := o.check(); !errors.Is(err, ErrBadOptions) {
			t.Errorf("%+v: %v", o, err)
		}
		f := Dial(blitz.Handle{}, "ws://127.0.0.1:1/", &DialOptions{Compression: &o})
		if !errors.Is(f.err, ErrBadOptions) {
			t.Errorf("Dial %+v: %v", o, f.err)
		}
	}
	ts := startEcho(t, &Upgrader{Compression: &CompressionOptions{Level: 42}})
	_, resp := dialRaw(t, ts, goodHeaders+"Sec-WebSocket-Extensions: permessage-deflate\r\n")
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", resp.StatusCode)
	}
}

// A client without Compression fails on an extension it did not offer;
// a server without it answers none.
func TestExtensionsNotOffered(t *testing.T) {
	f := &DialFuture{}
	if _, err := f.checkExtensions(hdr("permessage-deflate")); !errors.Is(err, ErrBadHandshake) {
		t.Fatalf("unoffered extension: %v", err)
	}
	if d, err := f.checkExtensions(hdr()); d != nil || err != nil {
		t.Fatalf("no extension: %v %v", d, err)
	}
	ts := startEcho(t, nil)
	rc, z, _ := openZ(t, ts, "permessage-deflate")
	if z != nil {
		t.Fatal("a server without Compression accepted permessage-deflate")
	}
	rc.closeRaw()
}

// FuzzParseExtensions: the parser never panics, and the server's
// response to any header is one its client accepts.
func FuzzParseExtensions(f *testing.F) {
	for _, s := range []string{
		"permessage-deflate",
		"permessage-deflate; client_max_window_bits",
		"permessage-deflate; server_max_window_bits=10, permessage-deflate",
		`permessage-deflate; server_max_window_bits="15"; client_no_context_takeover`,
		"permessage-deflate; server_no_context_takeover; server_no_context_takeover",
		`a; b="c\"d", e`,
		"permessage-deflate;;",
	} {
		f.Add(s)
	}
	opts := []CompressionOptions{{}, {ContextTakeover: true, PeerContextTakeover: true, PeerMaxWindowBits: 9}, {Level: flate.HuffmanOnly}}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = parseExtensions([]string{s})
		for i := range opts {
			p, ok := serverAccept(hdr(s)[hdrExtensions], &opts[i])
			if !ok {
				continue
			}
			resp := p.String()
			// The offer that was accepted asked for this window, if any.
			offer := deflateParams{serverMaxWindowBits: p.serverMaxWindowBits}
			if p.clientMaxWindowBits != 0 {
				continue // our client never offers client_max_window_bits
			}
			if _, on, err := clientCheck(hdr(resp), offer); err != nil || !on {
				t.Fatalf("response %q to %q: %v", resp, s, err)
			}
		}
	})
}
