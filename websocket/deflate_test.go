package websocket

import (
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// Our client against our server, for every combination of the context
// takeover options on both sides, with window requests and levels: the
// negotiated extension is the expected one, and messages of every size
// (whole and through NextWriter) come back intact.
func TestDeflateRoundTrip(t *testing.T) {
	type combo struct {
		srv, cli CompressionOptions
		want     string
	}
	var combos []combo
	for _, st := range []bool{false, true} {
		for _, sp := range []bool{false, true} {
			for _, ct := range []bool{false, true} {
				for _, cp := range []bool{false, true} {
					want := "permessage-deflate"
					if !st || !cp {
						want += "; server_no_context_takeover"
					}
					if !sp || !ct {
						want += "; client_no_context_takeover"
					}
					combos = append(combos, combo{
						srv:  CompressionOptions{ContextTakeover: st, PeerContextTakeover: sp},
						cli:  CompressionOptions{ContextTakeover: ct, PeerContextTakeover: cp},
						want: want,
					})
				}
			}
		}
	}
	combos = append(combos,
		combo{srv: CompressionOptions{Level: flate.BestCompression}, cli: CompressionOptions{Level: flate.HuffmanOnly, PeerMaxWindowBits: 15},
			want: "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=15"},
		combo{srv: CompressionOptions{Level: flate.HuffmanOnly, ContextTakeover: true}, cli: CompressionOptions{PeerMaxWindowBits: 9, PeerContextTakeover: true},
			want: "permessage-deflate; client_no_context_takeover; server_max_window_bits=9"},
		combo{srv: CompressionOptions{}, cli: CompressionOptions{PeerMaxWindowBits: 12}, want: ""}, // declined: flate's window is 32 KiB
		combo{srv: CompressionOptions{Threshold: -1, Level: flate.DefaultCompression}, cli: CompressionOptions{Threshold: 1 << 20}, want: "permessage-deflate; server_no_context_takeover; client_no_context_takeover"},
	)
	sizes := []int{0, 1, 127, 128, 1000, 70000, 300 << 10}
	if testing.Short() {
		sizes = []int{0, 1, 127, 128, 1000, 40000}
	}
	for i, cb := range combos {
		name := fmt.Sprintf("%d_srv_%+v_cli_%+v", i, cb.srv, cb.cli)
		t.Run(strings.NewReplacer(" ", "_", ":", "=").Replace(name), func(t *testing.T) {
			ts := startEcho(t, &Upgrader{Compression: &cb.srv})
			c := dialTest(t, ts, &DialOptions{Compression: &cb.cli})
			if got := c.Extensions(); got != cb.want {
				t.Fatalf("Extensions() = %q, want %q", got, cb.want)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for round := range 3 { // context takeover spans messages
				for _, n := range sizes {
					p := zPayload(3+round%2, n, round)
					typ := TextMessage
					if round == 2 {
						typ = BinaryMessage
					}
					echoCheck(t, ctx, c, typ, p, round == 1)
				}
			}
			if err := c.CloseContext(ctx, StatusNormalClosure, ""); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// echoCheck sends p (whole, or in parts through NextWriter) and checks
// its echo.
func echoCheck(t *testing.T, ctx context.Context, c *Conn, typ MessageType, p []byte, parts bool) {
	t.Helper()
	if parts {
		w, err := c.NextWriter(ctx, typ)
		if err != nil {
			t.Fatal(err)
		}
		for rest := p; len(rest) > 0; {
			k := min(len(rest), 1+len(rest)/3)
			if _, err := w.Write(rest[:k]); err != nil {
				t.Fatal(err)
			}
			rest = rest[k:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	} else if err := c.Write(ctx, typ, p); err != nil {
		t.Fatal(err)
	}
	gt, got, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if gt != typ || !bytes.Equal(got, p) {
		t.Fatalf("echo of %d bytes (parts %v): got %s of %d bytes", len(p), parts, gt, len(got))
	}
}

// The raw client's compressed messages: fragmented, with pings between
// the fragments (answered at once), chopped into one-byte writes; the
// server's echo compressed only from the threshold on.
func TestDeflateFragmentsAndControl(t *testing.T) {
	ts := startEcho(t, &Upgrader{Compression: &CompressionOptions{}})
	rc, z, _ := openZ(t, ts, "permessage-deflate")
	if z == nil {
		t.Fatal("extension declined")
	}
	p := zPayload(1, 5000, 0)
	zp := z.compress(p)
	frames := zframes(opText, zp, true, 100)
	var msg [][]byte
	for i, f := range frames {
		msg = append(msg, f)
		if i%3 == 1 {
			msg = append(msg, fr(0x89, fmt.Sprint("ping ", i)))
		}
	}
	rc.sendChopped(bytes.Join(msg, nil), 7)
	for i := range frames {
		if i%3 != 1 {
			continue
		}
		got, ok := rc.next()
		if !ok || got.op != opPong || got.payload != fmt.Sprint("ping ", i) {
			t.Fatalf("pong %d: got %#x %q", i, got.op, got.payload)
		}
	}
	got, ok := rc.readMessage(z)
	if !ok || got.op != opText || got.payload != string(p) || !got.rsv1 {
		t.Fatalf("echo: %#x rsv1=%v %d bytes", got.op, got.rsv1, len(got.payload))
	}
	// Under the threshold: echoed uncompressed; an uncompressed message
	// from the client is fine too.
	rc.send(fr(0x81, "short"))
	if got, _ := rc.readMessage(z); got.payload != "short" || got.rsv1 {
		t.Fatalf("short echo: rsv1=%v %q", got.rsv1, got.payload)
	}
	// An empty compressed message ("\x00" once its tail is removed), and
	// an empty payload with RSV1, not DEFLATE data but read as empty.
	for _, p := range [][]byte{z.compress(nil), nil} {
		rc.send(frame(0x81|rsv1, p))
		if got, _ := rc.readMessage(z); got.payload != "" || got.op != opText {
			t.Fatalf("empty echo of %q: %#x %q", p, got.op, got.payload)
		}
	}
	rc.closeRaw()
}

// RSV1 where RFC 7692 forbids it closes with 1002; without the extension
// it stays an error (section 3 covers more).
func TestDeflateRSV1Misuse(t *testing.T) {
	ts := startEcho(t, &Upgrader{Compression: &CompressionOptions{}})
	zfr := func(z *zpeer, s string) []byte { return frame(0x81|rsv1, z.compress([]byte(s))) }
	cases := []struct {
		name  string
		offer string
		send  func(z *zpeer) [][]byte
		echo  string
	}{
		{"rsv1_ping", "permessage-deflate", func(*zpeer) [][]byte { return [][]byte{fr(0x89|rsv1, "ping")} }, ""},
		{"rsv1_pong", "permessage-deflate", func(*zpeer) [][]byte { return [][]byte{fr(0x8A|rsv1, "pong")} }, ""},
		{"rsv1_close", "permessage-deflate", func(*zpeer) [][]byte { return [][]byte{frame(0x88|rsv1, []byte{3, 0xe8})} }, ""},
		{"rsv1_continuation", "permessage-deflate", func(z *zpeer) [][]byte {
			p := z.compress([]byte("hello hello hello"))
			return [][]byte{frame(0x01|rsv1, p[:3]), frame(0x80|rsv1, p[3:])}
		}, ""},
		{"rsv1_not_negotiated", "", func(*zpeer) [][]byte { return [][]byte{fr(0x81|rsv1, "x")} }, ""},
		{"rsv2_negotiated", "permessage-deflate", func(*zpeer) [][]byte { return [][]byte{fr(0x81|0x20, "x")} }, ""},
		{"rsv1_after_good", "permessage-deflate", func(z *zpeer) [][]byte {
			return [][]byte{zfr(z, "good"), fr(0x89|rsv1, "")}
		}, "good"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc, z, _ := openZ(t, ts, tc.offer)
			if z == nil {
				z = &zpeer{}
			}
			rc.send(tc.send(z)...)
			if tc.echo != "" {
				if got, _ := rc.readMessage(z); got.payload != tc.echo {
					t.Fatalf("echo %q, want %q", got.payload, tc.echo)
				}
			}
			rc.expectFail(1002)
		})
	}
}

// Invalid compressed data closes with 1007, as does compressed text that
// is not UTF-8.
func TestDeflateInvalidData(t *testing.T) {
	ts := startEcho(t, &Upgrader{Compression: &CompressionOptions{}})
	z := &zpeer{}
	good := z.compress([]byte(strings.Repeat("truncated data ", 100)))
	cases := []struct {
		name string
		p    []byte
		op   byte
	}{
		{"reserved_block_type", []byte{0xff, 0xff, 0xff}, 0x82},
		{"bad_huffman", []byte{0x04, 0xc0, 0x81, 0x08, 0x00, 0x00, 0x00, 0x00, 0x20, 0x7f, 0xeb}, 0x82},
		{"stored_len_mismatch", []byte{0x00, 0x05, 0x00, 0x05, 0x00}, 0x82},
		{"truncated", good[:len(good)/2], 0x82},
		{"distance_too_far", []byte{0x63, 0x00, 0x42, 0x00}, 0x82},
		{"text_not_utf8", z.compress([]byte("\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80edited")), 0x81},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc, zp, _ := openZ(t, ts, "permessage-deflate")
			if zp == nil {
				t.Fatal("declined")
			}
			rc.send(frame(tc.op|rsv1, tc.p))
			rc.expectFail(1007)
		})
	}
}

// A decompression bomb (a small message that inflates past the read
// limit) closes with 1009; inflate stops at the limit instead of
// allocating the whole output.
func TestDeflateBomb(t *testing.T) {
	z := &zpeer{}
	bomb := z.compress(make([]byte, 16<<20)) // 16 MiB of zeros: ~16 KiB
	t.Run("wire", func(t *testing.T) {
		ts := startEcho(t, &Upgrader{Compression: &CompressionOptions{}, Options: Options{ReadLimit: 1 << 20}})
		rc, zp, _ := openZ(t, ts, "permessage-deflate")
		if zp == nil {
			t.Fatal("declined")
		}
		rc.send(frame(0x82|rsv1, bomb))
		rc.expectFail(1009)
	})
	t.Run("memory", func(t *testing.T) {
		const limit = 256 << 10
		d := newTestDeflater(deflateParams{}, &CompressionOptions{}, false)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := d.inflate(bomb, limit)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrMessageTooBig) {
			t.Fatalf("inflate: %v, want ErrMessageTooBig", err)
		}
		// The output buffer doubles up to limit+1 (all its sizes add up
		// to under 3*limit), plus a decompressor (~40 KB) if the pool
		// had none and some slack for the runtime; not the 16 MiB of the
		// whole output.
		if got := after.TotalAlloc - before.TotalAlloc; got > 3*limit+256<<10 {
			t.Fatalf("inflating the bomb allocated %d bytes, limit %d", got, limit)
		}
	})
	t.Run("exact_limit", func(t *testing.T) {
		d := newTestDeflater(deflateParams{}, &CompressionOptions{}, false)
		p := z.compress(bytes.Repeat([]byte("a"), 5000))
		if out, err := d.inflate(p, 5000); err != nil || len(out) != 5000 {
			t.Fatalf("at the limit: %d bytes, %v", len(out), err)
		}
		if _, err := d.inflate(p, 4999); !errors.Is(err, ErrMessageTooBig) {
			t.Fatalf("over the limit: %v", err)
		}
	})
}

// Without context takeover an idle connection keeps no flate state: the
// compressor goes back to its pool after each message, and no history is
// kept. With it, the connection keeps its compressor and the peer's last
// 32 KiB.
func TestDeflateIdleState(t *testing.T) {
	for _, takeover := range []bool{false, true} {
		o := &CompressionOptions{ContextTakeover: takeover, PeerContextTakeover: takeover}
		p := deflateParams{serverNoContextTakeover: !takeover, clientNoContextTakeover: !takeover}
		srv := newTestDeflater(p, o, false)
		cli := newTestDeflater(p, o, true)
		for i := range 3 {
			msg := zPayload(3, 50000, i)
			z := srv.compress(msg)
			out, err := cli.inflate(bytes.Clone(z), 1<<20)
			if err != nil || !bytes.Equal(out, msg) {
				t.Fatalf("takeover=%v message %d: %v", takeover, i, err)
			}
		}
		if (srv.wctx != nil) != takeover || (cli.dict != nil) != takeover {
			t.Fatalf("takeover=%v: compressor kept %v, history kept %v", takeover, srv.wctx != nil, cli.dict != nil)
		}
		if takeover && len(cli.dict) != maxWindow {
			t.Fatalf("history of %d bytes", len(cli.dict))
		}
	}
}

// Reading and echoing a compressed message allocates nothing once the
// buffers are made: the compressor and decompressor come from their
// pools.
func TestDeflateSteadyStateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	z := &zpeer{}
	fr := frame(0x82|rsv1, z.compress(bytes.Repeat([]byte("steady state "), 100)))
	c := newConn(&loopTransport{frame: fr}, false, "", nil, nil)
	c.setDeflate(newDeflater(deflateParams{serverNoContextTakeover: true, clientNoContextTakeover: true}, &CompressionOptions{}, false))
	cx := future.NewContext(waker.Noop())
	echo := func() {
		r, ok := c.ReadMessage().Poll(cx)
		if !ok || r.Err != nil {
			t.Fatalf("read: %v %v", ok, r.Err)
		}
		w, ok := c.WriteMessage(r.Value.Type, r.Value.Data).Poll(cx)
		if !ok || w.Err != nil {
			t.Fatalf("write: %v %v", ok, w.Err)
		}
	}
	echo()
	// A GC that empties the pools costs a writer's and a reader's ~20
	// allocations once, under one per run on average (which rounds down).
	if n := testing.AllocsPerRun(200, echo); n != 0 {
		t.Errorf("%v allocations per compressed message", n)
	}
}

// The memory figures of "Compression" in the package doc, measured: a
// flate.Writer per level, a flate reader. Run with -v to see them.
func TestDeflateMemoryFigures(t *testing.T) {
	measure := func(mk func() any) uint64 {
		const n = 8
		keep := make([]any, n)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range keep {
			keep[i] = mk()
		}
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(keep)
		return (after.TotalAlloc - before.TotalAlloc) / n
	}
	for _, level := range []int{flate.HuffmanOnly, flate.BestSpeed, flate.DefaultCompression, flate.BestCompression} {
		size := measure(func() any { w, _ := flate.NewWriter(io.Discard, level); return w })
		allocs := testing.AllocsPerRun(10, func() { _, _ = flate.NewWriter(io.Discard, level) })
		t.Logf("flate.NewWriter level %d: %d bytes in %.0f allocations", level, size, allocs)
		if size < 500<<10 {
			t.Errorf("level %d: %d bytes: the package doc's figures are out of date", level, size)
		}
	}
	z := &zpeer{}
	p := z.compress([]byte("hello"))
	size := measure(func() any { return getDecompressor(p, nil) })
	t.Logf("flate reader: %d bytes", size)
	if size > 64<<10 {
		t.Errorf("flate reader: %d bytes: the package doc's figures are out of date", size)
	}
}

// FuzzInflate: any payload inflates to at most the limit or fails with
// an error wrapping ErrProtocol (1007) or ErrMessageTooBig; and any
// message survives compress then inflate, with and without context
// takeover, twice in a row.
func FuzzInflate(f *testing.F) {
	z := &zpeer{}
	f.Add([]byte("hello"), z.compress([]byte("hello hello hello")))
	f.Add([]byte{}, []byte{0x00})
	f.Add(bytes.Repeat([]byte{0}, 3000), z.compress(make([]byte, 5000)))
	f.Add([]byte("\xff\xfe"), []byte{0xff, 0xff, 0xff})
	f.Add([]byte("x"), []byte{0x00, 0x05, 0x00, 0x05, 0x00})
	f.Fuzz(func(t *testing.T, msg, raw []byte) {
		const limit = 4096
		for _, takeover := range []bool{false, true} {
			o := &CompressionOptions{ContextTakeover: takeover, PeerContextTakeover: takeover}
			p := deflateParams{serverNoContextTakeover: !takeover, clientNoContextTakeover: !takeover}
			rd := newTestDeflater(p, o, false)
			out, err := rd.inflate(raw, limit)
			switch {
			case err == nil && len(out) > limit:
				t.Fatalf("inflated %d bytes past the limit %d", len(out), limit)
			case err != nil && !errors.Is(err, ErrProtocol) && !errors.Is(err, ErrMessageTooBig):
				t.Fatalf("error %v wraps no sentinel", err)
			}
			wr := newTestDeflater(p, o, true)
			for i := range 2 {
				c := bytes.Clone(wr.compress(msg))
				got, err := rd.inflate(c, 1<<20)
				if err != nil || !bytes.Equal(got, msg) {
					t.Fatalf("takeover=%v message %d of %d bytes: %v", takeover, i, len(msg), err)
				}
			}
		}
	})
}

// readAllDeflate reads in as a server with permessage-deflate negotiated
// (the peer keeping its context when takeover), until an error.
func readAllDeflate(in []byte, limit int64, takeover bool) ([]Message, error) {
	c := newConn(&bytesTransport{in: in}, false, "", &Options{ReadLimit: limit, ReadBufferSize: 64}, nil)
	c.setDeflate(newDeflater(deflateParams{clientNoContextTakeover: !takeover}, &CompressionOptions{PeerContextTakeover: takeover}, false))
	var out []Message
	for {
		r, _ := future.Block(context.Background(), future.Future[future.Result[Message]](c.ReadMessage()))
		if r.Err != nil {
			return out, r.Err
		}
		out = append(out, Message{Type: r.Value.Type, Data: bytes.Clone(r.Value.Data)})
	}
}

// FuzzReadDeflateFrames: the frame reader with permessage-deflate
// negotiated never returns a message over the limit or invalid text, and
// ends every stream with an error.
func FuzzReadDeflateFrames(f *testing.F) {
	z := &zpeer{sendTakeover: true}
	hello := z.compress([]byte("hello hello"))
	again := z.compress([]byte("hello hello, again"))
	f.Add(append(frame(0x81|rsv1, hello), frame(0x81|rsv1, again)...))
	f.Add(append(frame(0x01|rsv1, hello[:2]), append(frame(0x89, []byte("p")), frame(0x80, hello[2:])...)...))
	f.Add(frame(0x82|rsv1, (&zpeer{}).compress(make([]byte, 4096))))
	f.Add(frame(0x89|rsv1, nil))
	f.Add(append(frame(0x01|rsv1, hello[:2]), frame(0x80|rsv1, hello[2:])...))
	f.Add(frame(0x81|rsv1, []byte{0xff, 0xff}))
	f.Add(frame(0x81|rsv1, (&zpeer{}).compress([]byte{0xed, 0xa0, 0x80})))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, takeover := range []bool{false, true} {
			msgs, err := readAllDeflate(in, 1024, takeover)
			if err == nil {
				t.Fatal("the stream ended without an error")
			}
			for _, m := range msgs {
				if len(m.Data) > 1024 {
					t.Fatalf("message of %d bytes over the limit", len(m.Data))
				}
				if m.Type == TextMessage && !validText(m.Data) {
					t.Fatalf("invalid UTF-8 text %q", m.Data)
				}
			}
		}
	})
}

// The reader inflates with the peer's context: a message that refers to
// the one before it, and fails with 1002, 1007 or 1009 as it should.
func TestReadDeflateFrames(t *testing.T) {
	z := &zpeer{sendTakeover: true}
	first := z.compress([]byte("hello hello"))
	second := z.compress([]byte("hello hello, again"))
	in := append(frame(0x81|rsv1, first), frame(0x01|rsv1, second[:3])...)
	in = append(in, frame(0x89, []byte("ping"))...)
	in = append(in, frame(0x80, second[3:])...)
	msgs, err := readAllDeflate(in, 0, true)
	if CloseStatus(err) != StatusAbnormalClosure || len(msgs) != 2 || string(msgs[1].Data) != "hello hello, again" {
		t.Fatalf("got %d messages, %v", len(msgs), err)
	}
	bad := []struct {
		in   []byte
		code StatusCode
	}{
		{frame(0x89|rsv1, nil), StatusProtocolError},
		{append(frame(0x01|rsv1, first[:2]), frame(0x80|rsv1, first[2:])...), StatusProtocolError},
		{frame(0x81|rsv1|0x10, first), StatusProtocolError},
		{frame(0x82|rsv1, []byte{0xff}), StatusInvalidPayloadData},
		{frame(0x82|rsv1, (&zpeer{}).compress(make([]byte, 3000))), StatusMessageTooBig},
	}
	for i, b := range bad {
		_, err := readAllDeflate(b.in, 2048, false)
		var pe *protocolError
		if !errors.As(err, &pe) || pe.code != b.code {
			t.Errorf("case %d: %v, want a close %d", i, err, b.code)
		}
	}
}
