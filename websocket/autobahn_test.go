package websocket

// The framing cases of the Autobahn testsuite (sections 1-7) that
// apply to this package, and its permessage-deflate cases (sections 12
// and 13), ported as table tests: a raw client, like Autobahn's fuzzing
// client, sends the case's frames over TCP to an echo server built on
// this package and checks what comes back: each case runs against both
// of the package's servers (see bothServers). Each case names its
// Autobahn number. Sections 9 and 10 are in autobahn9_test.go.

import (
	"bytes"
	"compress/flate"
	"fmt"
	"strings"
	"testing"
	"time"
)

type rawCase struct {
	name string
	send [][]byte
	// chop, if set, sends the frames' bytes in writes of this size;
	// perFrame sends each frame in a write of its own.
	chop     int
	perFrame bool
	want     []rxFrame
	// fail is the code of the close the server must send (then close
	// the TCP connection); 0 means the case ends with a normal closing
	// handshake started by the client.
	fail int
}

func fr(b0 byte, p string) []byte { return frame(b0, []byte(p)) }

func echoed(op byte, p string) rxFrame { return rxFrame{op: op, fin: true, payload: p} }

func runRawCases(t *testing.T, cases []rawCase) {
	bothServers(t, nil, func(t *testing.T, ts *testServer) { runRawCasesOn(t, ts, cases) })
}

// runRawCasesOn runs cases against ts.
func runRawCasesOn(t *testing.T, ts *testServer, cases []rawCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := openRaw(t, ts)
			all := bytes.Join(tc.send, nil)
			switch {
			case tc.chop > 0:
				rc.sendChopped(all, tc.chop)
			case tc.perFrame:
				for _, f := range tc.send {
					rc.send(f)
					time.Sleep(time.Millisecond)
				}
			default:
				rc.send(all)
			}
			for i, w := range tc.want {
				got, ok := rc.next()
				if !ok {
					t.Fatalf("frame %d: the stream ended, want %#x %.40q", i, w.op, w.payload)
				}
				if got.op != w.op || got.payload != w.payload || !got.fin {
					t.Fatalf("frame %d: got %#x fin=%v %.40q, want %#x %.40q", i, got.op, got.fin, got.payload, w.op, w.payload)
				}
			}
			if tc.fail != 0 {
				got, ok := rc.next()
				if !ok || got.op != opClose {
					t.Fatalf("want a close %d, got %#x %q (stream open: %v)", tc.fail, got.op, got.payload, ok)
				}
				if code := closeCodeOf(got); code != tc.fail {
					t.Fatalf("close code %d, want %d", code, tc.fail)
				}
				// Answer as a client does; the server then ends the
				// connection.
				rc.send(closeFrame(tc.fail, ""))
				rc.expectEnd()
				return
			}
			rc.send(closeFrame(1000, ""))
			got, ok := rc.next()
			if !ok || got.op != opClose || closeCodeOf(got) != 1000 {
				t.Fatalf("closing handshake: got %#x %q (stream open: %v)", got.op, got.payload, ok)
			}
			rc.expectEnd()
		})
	}
}

// Section 1: framing, text and binary messages of every length class.
func TestAutobahn1Framing(t *testing.T) {
	var cases []rawCase
	lengths := []int{0, 125, 126, 127, 128, 65535, 65536}
	for i, n := range lengths {
		p := strings.Repeat("*", n)
		cases = append(cases,
			rawCase{name: fmt.Sprintf("1.1.%d_text_%d", i+1, n), send: [][]byte{fr(0x81, p)}, want: []rxFrame{echoed(opText, p)}},
			rawCase{name: fmt.Sprintf("1.2.%d_binary_%d", i+1, n), send: [][]byte{fr(0x82, p)}, want: []rxFrame{echoed(opBinary, p)}},
		)
	}
	p := strings.Repeat("*", 65536)
	cases = append(cases,
		rawCase{name: "1.1.8_text_65536_chopped_997", send: [][]byte{fr(0x81, p)}, chop: 997, want: []rxFrame{echoed(opText, p)}},
		rawCase{name: "1.2.8_binary_65536_chopped_997", send: [][]byte{fr(0x82, p)}, chop: 997, want: []rxFrame{echoed(opBinary, p)}},
	)
	runRawCases(t, cases)
}

// Section 2: pings and pongs.
func TestAutobahn2PingPong(t *testing.T) {
	bin := string([]byte{0x00, 0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0x00, 0xff})
	p125 := strings.Repeat("\xfe", 125)
	tenPings := make([][]byte, 10)
	tenPongs := make([]rxFrame, 10)
	for i := range tenPings {
		tenPings[i] = fr(0x89, "payload-"+fmt.Sprint(i))
		tenPongs[i] = echoed(opPong, "payload-"+fmt.Sprint(i))
	}
	runRawCases(t, []rawCase{
		{name: "2.1_ping_empty", send: [][]byte{fr(0x89, "")}, want: []rxFrame{echoed(opPong, "")}},
		{name: "2.2_ping_text", send: [][]byte{fr(0x89, "Hello, world!")}, want: []rxFrame{echoed(opPong, "Hello, world!")}},
		{name: "2.3_ping_binary", send: [][]byte{fr(0x89, bin)}, want: []rxFrame{echoed(opPong, bin)}},
		{name: "2.4_ping_125", send: [][]byte{fr(0x89, p125)}, want: []rxFrame{echoed(opPong, p125)}},
		{name: "2.5_ping_126", send: [][]byte{fr(0x89, p125+"x")}, fail: 1002},
		{name: "2.6_ping_125_chopped_1", send: [][]byte{fr(0x89, p125)}, chop: 1, want: []rxFrame{echoed(opPong, p125)}},
		{name: "2.7_unsolicited_pong_empty", send: [][]byte{fr(0x8A, "")}},
		{name: "2.8_unsolicited_pong", send: [][]byte{fr(0x8A, "unsolicited pong payload")}},
		{name: "2.9_unsolicited_pong_then_ping", send: [][]byte{fr(0x8A, "unsolicited"), fr(0x89, "ping payload")}, want: []rxFrame{echoed(opPong, "ping payload")}},
		{name: "2.10_ten_pings", send: tenPings, want: tenPongs},
		{name: "2.11_ten_pings_chopped_1", send: tenPings, chop: 1, want: tenPongs},
	})
}

// Section 3: reserved bits, with no extension negotiated.
func TestAutobahn3ReservedBits(t *testing.T) {
	runRawCases(t, []rawCase{
		{name: "3.1_rsv1_text", send: [][]byte{fr(0x81|0x40, "Hello, world!")}, fail: 1002},
		{name: "3.2_rsv2_after_text", send: [][]byte{fr(0x81, "Hello, world!"), fr(0x81|0x20, "Hello, world!"), fr(0x89, "")}, want: []rxFrame{echoed(opText, "Hello, world!")}, fail: 1002},
		{name: "3.3_rsv3_chopped", send: [][]byte{fr(0x81, "Hello, world!"), fr(0x81|0x10, "Hello, world!"), fr(0x89, "")}, chop: 1, want: []rxFrame{echoed(opText, "Hello, world!")}, fail: 1002},
		{name: "3.4_rsv1_rsv3_binary", send: [][]byte{fr(0x82|0x50, "\x00\xff")}, fail: 1002},
		{name: "3.5_rsv1_rsv2_binary", send: [][]byte{fr(0x82|0x60, "\x00\xff")}, fail: 1002},
		{name: "3.6_rsv2_rsv3_ping", send: [][]byte{fr(0x89|0x30, "ping")}, fail: 1002},
		{name: "3.7_all_rsv_close", send: [][]byte{frame(0x88|0x70, []byte{0x03, 0xe8})}, fail: 1002},
	})
}

// Section 4: reserved opcodes.
func TestAutobahn4Opcodes(t *testing.T) {
	var cases []rawCase
	for i, op := range []byte{3, 4, 5, 6, 7} {
		cases = append(cases, rawCase{name: fmt.Sprintf("4.1.%d_opcode_%d", i+1, op),
			send: [][]byte{fr(0x81, "hi"), fr(0x80|op, "reserved"), fr(0x89, "")}, want: []rxFrame{echoed(opText, "hi")}, fail: 1002})
	}
	for i, op := range []byte{11, 12, 13, 14, 15} {
		cases = append(cases, rawCase{name: fmt.Sprintf("4.2.%d_opcode_%d", i+1, op),
			send: [][]byte{fr(0x81, "hi"), fr(0x80|op, "reserved"), fr(0x89, "")}, want: []rxFrame{echoed(opText, "hi")}, fail: 1002})
	}
	runRawCases(t, cases)
}

// Section 5: fragmentation.
func TestAutobahn5Fragmentation(t *testing.T) {
	frag1, frag2 := "fragment1", "fragment2"
	textFrags := [][]byte{fr(0x01, frag1), fr(0x80, frag2)}
	withPing := [][]byte{fr(0x01, frag1), fr(0x89, "ping payload"), fr(0x80, frag2)}
	want := []rxFrame{echoed(opText, frag1+frag2)}
	wantPing := []rxFrame{echoed(opPong, "ping payload"), echoed(opText, frag1+frag2)}
	long := [][]byte{fr(0x01, "f1"), fr(0x00, "f2"), fr(0x89, "p3"), fr(0x00, "f4"), fr(0x89, "p5"), fr(0x80, "f6")}
	longWant := []rxFrame{echoed(opPong, "p3"), echoed(opPong, "p5"), echoed(opText, "f1f2f4f6")}
	runRawCases(t, []rawCase{
		{name: "5.1_ping_fragmented", send: [][]byte{fr(0x09, "frag1"), fr(0x80, "frag2")}, fail: 1002},
		{name: "5.2_pong_fragmented", send: [][]byte{fr(0x0A, "frag1"), fr(0x80, "frag2")}, fail: 1002},
		{name: "5.3_text_2_fragments", send: textFrags, want: want},
		{name: "5.4_text_2_fragments_chopped", send: textFrags, chop: 4, want: want},
		{name: "5.5_text_2_fragments_chopped_1", send: textFrags, chop: 1, want: want},
		{name: "5.6_text_fragments_ping_between", send: withPing, want: wantPing},
		{name: "5.7_text_fragments_ping_between_chopped", send: withPing, chop: 4, want: wantPing},
		{name: "5.8_text_fragments_ping_between_chopped_1", send: withPing, chop: 1, want: wantPing},
		{name: "5.9_continuation_fin_no_message", send: [][]byte{fr(0x80, "non-continuation payload"), fr(0x81, "Hello, world!")}, fail: 1002},
		{name: "5.10_continuation_fin_no_message_chopped", send: [][]byte{fr(0x80, "non-continuation payload"), fr(0x81, "Hello, world!")}, chop: 1, fail: 1002},
		{name: "5.11_continuation_fin_no_message_per_frame", send: [][]byte{fr(0x80, "non-continuation payload"), fr(0x81, "Hello, world!")}, perFrame: true, fail: 1002},
		{name: "5.12_continuation_nofin_no_message", send: [][]byte{fr(0x00, "non-continuation payload"), fr(0x81, "Hello, world!")}, fail: 1002},
		{name: "5.13_continuation_nofin_no_message_chopped", send: [][]byte{fr(0x00, "non-continuation payload"), fr(0x81, "Hello, world!")}, chop: 1, fail: 1002},
		{name: "5.14_continuation_nofin_no_message_per_frame", send: [][]byte{fr(0x00, "non-continuation payload"), fr(0x81, "Hello, world!")}, perFrame: true, fail: 1002},
		{name: "5.15_text_inside_text", send: [][]byte{fr(0x01, frag1), fr(0x80, frag2), fr(0x00, "fragment3"), fr(0x80, "fragment4")}, want: want, fail: 1002},
		{name: "5.16_continuation_then_text_twice", send: [][]byte{fr(0x00, frag1), fr(0x01, frag2), fr(0x80, "fragment3")}, fail: 1002},
		{name: "5.17_continuation_fin_then_text_twice", send: [][]byte{fr(0x80, frag1), fr(0x01, frag2), fr(0x80, "fragment3")}, fail: 1002},
		{name: "5.18_text_fragments_both_text", send: [][]byte{fr(0x01, frag1), fr(0x81, frag2)}, fail: 1002},
		{name: "5.19_fragments_pings_between", send: long, want: longWant},
		{name: "5.20_fragments_pings_between_chopped_1", send: long, chop: 1, want: longWant},
	})
}

// utf8Cases are byte sequences from Markus Kuhn's UTF-8 decoder stress
// test, as Autobahn's section 6 uses them: valid ones are echoed, invalid
// ones close with 1007.
var utf8Cases = []struct {
	name  string
	s     string
	valid bool
}{
	{"6.1.1_empty", "", true},
	{"6.2.1_hello_mixed", "Hello-\u00b5@\u00df\u00f6\u00e4\u00fc\u00e0\u00e1-UTF-8!!", true},
	{"6.3.1_kosme_surrogate", "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80\x65\x64\x69\x74\x65\x64", false},
	{"6.4.1_fail_fast_f4_90", "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xf4\x90\x80\x80\x65\x64\x69\x74\x65\x64", false},
	{"6.5.1_kosme", "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5", true},
	{"6.6.11_kosme_chars", "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5", true},
	{"6.7.1_first_1byte", "\x00", true},
	{"6.7.2_first_2byte", "\xc2\x80", true},
	{"6.7.3_first_3byte", "\xe0\xa0\x80", true},
	{"6.7.4_first_4byte", "\xf0\x90\x80\x80", true},
	{"6.8.1_first_5byte", "\xf8\x88\x80\x80\x80", false},
	{"6.8.2_first_6byte", "\xfc\x84\x80\x80\x80\x80", false},
	{"6.9.1_last_1byte", "\x7f", true},
	{"6.9.2_last_2byte", "\xdf\xbf", true},
	{"6.9.3_last_3byte", "\xef\xbf\xbf", true},
	{"6.9.4_last_4byte", "\xf4\x8f\xbf\xbf", true},
	{"6.10.1_last_5byte", "\xfb\xbf\xbf\xbf\xbf", false},
	{"6.10.3_above_10ffff", "\xf4\x90\x80\x80", false},
	{"6.11.1_ed9fbf", "\xed\x9f\xbf", true},
	{"6.11.2_ee8080", "\xee\x80\x80", true},
	{"6.11.3_efbfbd", "\xef\xbf\xbd", true},
	{"6.11.5_f48fbfbf", "\xf4\x8f\xbf\xbf", true},
	{"6.12.1_lone_continuation_80", "\x80", false},
	{"6.12.2_lone_continuation_bf", "\xbf", false},
	{"6.12.8_continuations", "\x80\xbf\x80\xbf\x80\xbf\x80", false},
	{"6.13.1_lonely_start_c0", "\xc0 ", false},
	{"6.13.2_lonely_start_e0", "\xe0 ", false},
	{"6.14.1_missing_last_c0", "\xc0", false},
	{"6.14.3_missing_last_e080", "\xe0\x80", false},
	{"6.14.6_missing_last_df", "\xdf", false},
	{"6.14.8_missing_last_efbf", "\xef\xbf", false},
	{"6.15.1_concat_incomplete", "\xc0\xe0\x80\xf0\x80\x80\xf8\x80\x80\x80\xfc\x80\x80\x80\x80\xdf\xef\xbf\xf7\xbf\xbf\xfb\xbf\xbf\xbf\xfd\xbf\xbf\xbf\xbf", false},
	{"6.16.1_fe", "\xfe", false},
	{"6.16.2_ff", "\xff", false},
	{"6.16.3_fefeffff", "\xfe\xfe\xff\xff", false},
	{"6.17.1_overlong_slash_2", "\xc0\xaf", false},
	{"6.17.2_overlong_slash_3", "\xe0\x80\xaf", false},
	{"6.17.3_overlong_slash_4", "\xf0\x80\x80\xaf", false},
	{"6.18.1_max_overlong_2", "\xc1\xbf", false},
	{"6.18.2_max_overlong_3", "\xe0\x9f\xbf", false},
	{"6.18.3_max_overlong_4", "\xf0\x8f\xbf\xbf", false},
	{"6.19.1_overlong_nul_2", "\xc0\x80", false},
	{"6.19.2_overlong_nul_3", "\xe0\x80\x80", false},
	{"6.20.1_surrogate_d800", "\xed\xa0\x80", false},
	{"6.20.4_surrogate_dbff", "\xed\xaf\xbf", false},
	{"6.20.7_surrogate_dfff", "\xed\xbf\xbf", false},
	{"6.21.1_surrogate_pair", "\xed\xa0\x80\xed\xb0\x80", false},
	{"6.22.1_noncharacter_fffe", "\xef\xbf\xbe", true},
	{"6.22.2_noncharacter_ffff", "\xef\xbf\xbf", true},
	{"6.23.1_replacement", "\xef\xbf\xbd", true},
}

// Section 6: UTF-8 of text messages, each sequence as one frame, as
// fragments of one byte (the validation is incremental across them), and
// chopped into one-byte writes.
func TestAutobahn6UTF8(t *testing.T) {
	var cases []rawCase
	for _, u := range utf8Cases {
		var frags [][]byte
		if len(u.s) == 0 {
			frags = [][]byte{fr(0x01, ""), fr(0x00, ""), fr(0x80, "")}
		} else {
			for i := range len(u.s) {
				b0 := byte(0x00)
				if i == 0 {
					b0 = 0x01
				}
				if i == len(u.s)-1 {
					b0 |= 0x80
				}
				frags = append(frags, fr(b0, u.s[i:i+1]))
			}
		}
		var want []rxFrame
		fail := 1007
		if u.valid {
			want, fail = []rxFrame{echoed(opText, u.s)}, 0
		}
		cases = append(cases,
			rawCase{name: u.name + "_frame", send: [][]byte{fr(0x81, u.s)}, want: want, fail: fail},
			rawCase{name: u.name + "_fragmented_1", send: frags, want: want, fail: fail},
			rawCase{name: u.name + "_chopped_1", send: [][]byte{fr(0x81, u.s)}, chop: 1, want: want, fail: fail},
		)
	}
	runRawCases(t, cases)
}

// Section 7: the closing handshake.
func TestAutobahn7Close(t *testing.T) {
	var cases []rawCase
	add := func(c rawCase) { cases = append(cases, c) }
	add(rawCase{name: "7.1.1_text_then_close", send: [][]byte{fr(0x81, "Hello World!")}, want: []rxFrame{echoed(opText, "Hello World!")}})
	add(rawCase{name: "7.1.2_close_twice", send: [][]byte{closeFrame(1000, ""), closeFrame(1000, "")}, want: []rxFrame{echoed(opClose, "\x03\xe8")}, fail: -1})
	add(rawCase{name: "7.1.3_ping_after_close", send: [][]byte{closeFrame(1000, ""), fr(0x89, "x")}, want: []rxFrame{echoed(opClose, "\x03\xe8")}, fail: -1})
	add(rawCase{name: "7.1.4_text_after_close", send: [][]byte{closeFrame(1000, ""), fr(0x81, "x")}, want: []rxFrame{echoed(opClose, "\x03\xe8")}, fail: -1})
	add(rawCase{name: "7.1.5_fragment_then_close", send: [][]byte{fr(0x01, "frag1"), closeFrame(1000, ""), fr(0x80, "frag2")}, want: []rxFrame{echoed(opClose, "\x03\xe8")}, fail: -1})
	big := strings.Repeat("BAsd7&jh23", 26214)
	add(rawCase{name: "7.1.6_big_text_ping_close", send: [][]byte{fr(0x81, big), fr(0x89, "ping"), closeFrame(1000, "")}, want: []rxFrame{echoed(opText, big), echoed(opPong, "ping"), echoed(opClose, "\x03\xe8")}, fail: -1})
	add(rawCase{name: "7.3.1_close_empty", send: [][]byte{closeFrame(-1, "")}, want: []rxFrame{echoed(opClose, "")}, fail: -1})
	add(rawCase{name: "7.3.2_close_1_byte", send: [][]byte{fr(0x88, "a")}, fail: 1002})
	add(rawCase{name: "7.3.3_close_code_only", send: [][]byte{closeFrame(1000, "")}, want: []rxFrame{echoed(opClose, "\x03\xe8")}, fail: -1})
	add(rawCase{name: "7.3.4_close_code_reason", send: [][]byte{closeFrame(1000, "Hello World!")}, want: []rxFrame{echoed(opClose, "\x03\xe8")}, fail: -1})
	add(rawCase{name: "7.3.5_close_reason_123", send: [][]byte{closeFrame(1000, strings.Repeat("*", 123))}, want: []rxFrame{echoed(opClose, "\x03\xe8")}, fail: -1})
	add(rawCase{name: "7.3.6_close_reason_124", send: [][]byte{closeFrame(1000, strings.Repeat("*", 124))}, fail: 1002})
	add(rawCase{name: "7.5.1_close_reason_invalid_utf8", send: [][]byte{closeFrame(1000, "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80\x65\x64\x69\x74\x65\x64")}, fail: 1007})
	for i, code := range []int{1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999} {
		add(rawCase{name: fmt.Sprintf("7.7.%d_valid_code_%d", i+1, code), send: [][]byte{closeFrame(code, "")},
			want: []rxFrame{echoed(opClose, string([]byte{byte(code >> 8), byte(code)}))}, fail: -1})
	}
	for i, code := range []int{0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535} {
		add(rawCase{name: fmt.Sprintf("7.9.%d_invalid_code_%d", i+1, code), send: [][]byte{closeFrame(code, "")}, fail: 1002})
	}
	// fail -1: the server echoed the close (in want) and must end the
	// connection.
	var rest []rawCase
	for _, tc := range cases {
		if tc.fail != -1 {
			rest = append(rest, tc)
		}
	}
	bothServers(t, nil, func(t *testing.T, ts *testServer) {
		runEchoedCloses(t, ts, cases)
		runRawCasesOn(t, ts, rest)
	})
}

// runEchoedCloses runs the cases of section 7 whose close the server
// echoes and then ends the connection (fail -1).
func runEchoedCloses(t *testing.T, ts *testServer, cases []rawCase) {
	for _, tc := range cases {
		if tc.fail != -1 {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			rc := openRaw(t, ts)
			rc.send(bytes.Join(tc.send, nil))
			for i, w := range tc.want {
				got, ok := rc.next()
				if !ok || got.op != w.op || got.payload != w.payload {
					t.Fatalf("frame %d: got %#x %.40q (open %v), want %#x %.40q", i, got.op, got.payload, ok, w.op, w.payload)
				}
			}
			rc.expectEnd()
		})
	}
}

// Sections 12 and 13: permessage-deflate (RFC 7692). The raw client
// negotiates the extension, compresses its messages with compress/flate
// (with or without context takeover, as the response allows), sends each
// as one frame or in fragments, and checks the echo, inflated as the
// server's parameters ask. Autobahn sends 1000 messages a case; these
// send zMessages (fewer in -short mode). Cases x.y.1-10 are the sizes of
// zSizes in one frame, x.y.11-18 the larger ones in 256-byte fragments.

// zSizes are the message sizes of sections 12 and 13.
var zSizes = []int{16, 64, 256, 1024, 4096, 8192, 16384, 32768, 65536, 131072}

func zMessages() int {
	switch {
	case testing.Short():
		return 2
	case raceEnabled: // flate under the race detector: 50 would take ten minutes
		return 5
	}
	return 50
}

// zShortMax is the largest message of sections 12-13 in -short mode
// (flate is slow under the race detector); larger cases are skipped.
const zShortMax = 16384

// zPayload makes a message of n bytes of a kind of section 12: 1 JSON,
// 2 an image-like binary, 3 English text, 4 HTML, 5 random bytes
// (incompressible); message i of the case differs from the others.
func zPayload(kind, n, i int) []byte {
	var b []byte
	r := 2463534242 + uint32(i*7919+kind)
	rnd := func() uint32 { r ^= r << 13; r ^= r >> 17; r ^= r << 5; return r }
	words := strings.Fields("the adventures of sherlock holmes a scandal in bohemia to sherlock holmes she is always the woman i have seldom heard him mention her under any other name")
	for len(b) < n {
		switch kind {
		case 1:
			b = fmt.Appendf(b, `{"id":%d,"name":"%s","tags":["%s","%s"],"score":%d.%d},`, rnd()%1000, words[rnd()%uint32(len(words))], words[rnd()%uint32(len(words))], words[rnd()%uint32(len(words))], rnd()%100, rnd()%10)
		case 2:
			x := byte(rnd() % 4)
			for k := range 64 {
				b = append(b, byte(k*3)+x)
			}
		case 3:
			b = append(b, words[rnd()%uint32(len(words))]+" "...)
		case 4:
			b = fmt.Appendf(b, `<div class="c%d"><p>%s %s</p></div>`+"\n", rnd()%10, words[rnd()%uint32(len(words))], words[rnd()%uint32(len(words))])
		default:
			b = append(b, byte(rnd()))
		}
	}
	return b[:n]
}

// zCase is a case of sections 12-13: an offer, the response the server
// must give ("" to decline), messages of one size in frames of frag.
type zCase struct {
	name    string
	offer   string
	wantExt string
	kind    int
	size    int
	frag    int
}

// runZCases runs cases against an echo server with up.
func runZCases(t *testing.T, up *Upgrader, cases []zCase) {
	bothServers(t, up, func(t *testing.T, ts *testServer) { runZCasesOn(t, ts, cases) })
}

// runZCasesOn runs cases against ts.
func runZCasesOn(t *testing.T, ts *testServer, cases []zCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.size > zShortMax {
				t.Skip("-short: a large message")
			}
			rc, z, resp := openZ(t, ts, tc.offer)
			if got := resp.Header.Get("Sec-WebSocket-Extensions"); got != tc.wantExt {
				t.Fatalf("response extensions %q, want %q", got, tc.wantExt)
			}
			op := byte(opText)
			if tc.kind == 2 || tc.kind == 5 {
				op = opBinary
			}
			for i := range zMessages() {
				p := zPayload(tc.kind, tc.size, i)
				rc.sendMessage(z, op, p, tc.frag)
				got, ok := rc.readMessage(z)
				if !ok || got.op != op || got.payload != string(p) {
					t.Fatalf("message %d: got %#x of %d bytes (open %v), want %#x of %d", i, got.op, len(got.payload), ok, op, len(p))
				}
				if wantZ := z != nil && len(p) >= DefaultCompressionThreshold; got.rsv1 != wantZ {
					t.Fatalf("message %d: echo compressed %v, want %v", i, got.rsv1, wantZ)
				}
			}
			rc.closeRaw()
		})
	}
}

// zSizeCases expands a case over the sizes: x.1-10 in one frame,
// x.11-18 fragmented by 256 bytes.
func zSizeCases(prefix string, base zCase) []zCase {
	var out []zCase
	for i, n := range zSizes {
		c := base
		c.name, c.size = fmt.Sprintf("%s.%d_%d", prefix, i+1, n), n
		out = append(out, c)
	}
	for i, n := range zSizes[2:] {
		c := base
		c.name, c.size, c.frag = fmt.Sprintf("%s.%d_%d_frag_256", prefix, i+11, n), n, 256
		out = append(out, c)
	}
	return out
}

// Section 12: compression of payloads of different kinds, with the
// client's default offer (context takeover allowed both ways) to a server
// with default CompressionOptions (no context takeover either way).
func TestAutobahn12Compression(t *testing.T) {
	const offer = "permessage-deflate; client_max_window_bits"
	const want = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
	kinds := []string{"json", "image", "text", "html", "random"}
	var cases []zCase
	for k, name := range kinds {
		cases = append(cases, zSizeCases(fmt.Sprintf("12.%d_%s", k+1, name), zCase{offer: offer, wantExt: want, kind: k + 1})...)
	}
	runZCases(t, &Upgrader{Compression: &CompressionOptions{}}, cases)
}

// Section 13: compression with the parameter sets of Autobahn's offers,
// against servers with and without context takeover, and one compressing
// with flate.HuffmanOnly, which can honour any server_max_window_bits.
func TestAutobahn13CompressionParams(t *testing.T) {
	offers := []struct{ name, offer string }{
		{"13.1_plain", "permessage-deflate"},
		{"13.2_server_no_context_takeover", "permessage-deflate; server_no_context_takeover"},
		{"13.3_server_max_window_bits_8", "permessage-deflate; server_max_window_bits=8"},
		{"13.4_server_max_window_bits_15", "permessage-deflate; server_max_window_bits=15"},
		{"13.5_no_context_takeover_bits_8", "permessage-deflate; server_no_context_takeover; server_max_window_bits=8"},
		{"13.6_no_context_takeover_bits_15", "permessage-deflate; server_no_context_takeover; server_max_window_bits=15"},
		{"13.7_three_offers", "permessage-deflate; server_no_context_takeover; server_max_window_bits=8, permessage-deflate; client_no_context_takeover; client_max_window_bits, permessage-deflate"},
	}
	servers := []struct {
		name string
		o    CompressionOptions
		want []string // the response to each offer
	}{
		{"default", CompressionOptions{}, []string{
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover",
			"",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=15",
			"",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=15",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover",
		}},
		{"takeover", CompressionOptions{ContextTakeover: true, PeerContextTakeover: true, PeerMaxWindowBits: 10}, []string{
			"permessage-deflate",
			"permessage-deflate; server_no_context_takeover",
			"",
			"permessage-deflate; server_max_window_bits=15",
			"",
			"permessage-deflate; server_no_context_takeover; server_max_window_bits=15",
			"permessage-deflate; client_no_context_takeover; client_max_window_bits=10",
		}},
		{"huffman", CompressionOptions{Level: flate.HuffmanOnly, ContextTakeover: true}, []string{
			"permessage-deflate; client_no_context_takeover",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover",
			"permessage-deflate; client_no_context_takeover; server_max_window_bits=8",
			"permessage-deflate; client_no_context_takeover; server_max_window_bits=15",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=8",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=15",
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=8",
		}},
	}
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			var cases []zCase
			for i, o := range offers {
				cases = append(cases, zSizeCases(o.name, zCase{offer: o.offer, wantExt: srv.want[i], kind: 3})...)
			}
			runZCases(t, &Upgrader{Compression: &srv.o}, cases)
		})
	}
}
