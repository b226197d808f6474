package websocket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// BenchmarkMaskBytes unmasks a 1 KiB payload, the echo benchmarks'
// message.
func BenchmarkMaskBytes(b *testing.B) {
	p := make([]byte, 1024)
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		maskBytes([4]byte{1, 2, 3, 4}, 0, p)
	}
}

func TestMaskBytes(t *testing.T) {
	key := [4]byte{1, 2, 3, 4}
	for n := range 140 {
		for start := range 4 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(i * 7)
			}
			want := bytes.Clone(b)
			for i := range want {
				want[i] ^= key[(start+i)&3]
			}
			if pos := maskBytes(key, start, b); pos != (start+n)&3 || !bytes.Equal(b, want) {
				t.Fatalf("n=%d start=%d", n, start)
			}
		}
	}
}

// The incremental UTF-8 check agrees with utf8.Valid for every split of
// every sequence of section 6.
func TestUTF8Incremental(t *testing.T) {
	for _, u := range utf8Cases {
		s := []byte(u.s)
		if utf8.Valid(s) != u.valid {
			t.Fatalf("%s: table disagrees with utf8.Valid", u.name)
		}
		for cut := 0; cut <= len(s); cut++ {
			var st utf8State
			ok := st.feed(s[:cut]) && st.feed(s[cut:]) && st.done()
			if ok != u.valid {
				t.Fatalf("%s cut at %d: got %v", u.name, cut, ok)
			}
		}
	}
}

// readAll parses a stream of client frames as a server reads them and
// returns the messages and the final error.
func readAll(in []byte, limit int64) ([]Message, error) {
	c := newConn(&bytesTransport{in: in}, false, "", &Options{ReadLimit: limit, ReadBufferSize: 64}, nil)
	var out []Message
	for {
		r, _ := future.Block(context.Background(), future.Future[future.Result[Message]](c.ReadMessage()))
		if r.Err != nil {
			return out, r.Err
		}
		out = append(out, Message{Type: r.Value.Type, Data: bytes.Clone(r.Value.Data)})
	}
}

// readAllParts is readAll through NextReader, reading each message in
// reads of chunk bytes: it returns the messages read to their end and the
// final error.
func readAllParts(in []byte, limit int64, chunk int) ([]Message, error) {
	c := newConn(&bytesTransport{in: in}, false, "", &Options{ReadLimit: limit, ReadBufferSize: 64}, nil)
	var out []Message
	buf := make([]byte, chunk)
	for {
		typ, r, err := c.NextReader(context.Background())
		if err != nil {
			return out, err
		}
		var data []byte
		for {
			n, err := r.Read(buf)
			data = append(data, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				return out, err
			}
		}
		out = append(out, Message{Type: typ, Data: data})
	}
}

// sameRead compares what readAll and readAllParts made of in: the same
// messages, and errors of the same kind.
func sameRead(t *testing.T, in []byte, limit int64, chunk int) {
	t.Helper()
	want, werr := readAll(in, limit)
	got, gerr := readAllParts(in, limit, chunk)
	if len(got) != len(want) {
		t.Fatalf("NextReader read %d messages, ReadMessage %d (errors %v; %v)", len(got), len(want), gerr, werr)
	}
	for i := range want {
		if got[i].Type != want[i].Type || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Fatalf("message %d: NextReader %v %q, ReadMessage %v %q", i, got[i].Type, got[i].Data, want[i].Type, want[i].Data)
		}
	}
	for _, e := range []error{ErrProtocol, ErrMessageTooBig} {
		if errors.Is(gerr, e) != errors.Is(werr, e) {
			t.Fatalf("errors differ: NextReader %v, ReadMessage %v", gerr, werr)
		}
	}
	if CloseStatus(gerr) != CloseStatus(werr) {
		t.Fatalf("close status differs: NextReader %v, ReadMessage %v", gerr, werr)
	}
}

// TestNextReaderMatchesReadMessage reads the same streams, fragmented and
// not, valid and not, through both reads, in several read sizes.
func TestNextReaderMatchesReadMessage(t *testing.T) {
	long := bytes.Repeat([]byte("κόσμε "), 40)
	streams := [][]byte{
		frame(0x81, []byte("hello")),
		append(append(frame(0x01, long[:7]), frame(0x89, []byte("ping"))...), frame(0x80, long[7:])...),
		append(frame(0x82, nil), frame(0x82, []byte{0, 1, 2})...),
		frame(0x81, []byte{0xce, 0xba, 0xed, 0xa0, 0x80}),
		append(frame(0x02, bytes.Repeat([]byte("x"), 100)), frame(0x80, bytes.Repeat([]byte("y"), 100))...),
		frame(0x88, []byte{0x03, 0xe8, 'b', 'y', 'e'}),
		frame(0x80, []byte("no message")),
	}
	for i, in := range streams {
		for _, chunk := range []int{1, 3, 64, 1000} {
			t.Run(fmt.Sprintf("%d/%d", i, chunk), func(t *testing.T) { sameRead(t, in, 300, chunk) })
		}
	}
}

// A 16-bit and a 64-bit length, and a non-minimal length encoding, which
// RFC 6455 lets a receiver accept.
func TestLengthEncodings(t *testing.T) {
	p := bytes.Repeat([]byte("a"), 70000)
	in := append(frame(0x82, p[:300]), frame(0x82, p)...)
	nonMinimal := []byte{0x82, 0x80 | 126, 0, 5, 0, 0, 0, 0, 'h', 'e', 'l', 'l', 'o'}
	in = append(in, nonMinimal...)
	msgs, err := readAll(in, 0)
	if CloseStatus(err) != StatusAbnormalClosure {
		t.Fatalf("end: %v", err)
	}
	if len(msgs) != 3 || len(msgs[0].Data) != 300 || len(msgs[1].Data) != 70000 || string(msgs[2].Data) != "hello" {
		t.Fatalf("got %d messages", len(msgs))
	}
	// The top bit of a 64-bit length is a protocol error.
	bad := []byte{0x82, 0x80 | 127, 0x80, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}
	if _, err := readAll(bad, 0); CloseStatus(err) != -1 || err == nil {
		t.Fatalf("top bit: %v", err)
	}
}

// FuzzReadFrames feeds arbitrary bytes to a server's reader: it never
// panics, and what it returns respects the protocol (text is UTF-8,
// messages within the limit).
func FuzzReadFrames(f *testing.F) {
	f.Add(frame(0x81, []byte("hello")))
	f.Add(append(frame(0x01, []byte("hel")), frame(0x80, []byte("lo"))...))
	f.Add(append(frame(0x89, []byte("ping")), frame(0x82, []byte{0, 1, 2})...))
	f.Add(frame(0x88, []byte{0x03, 0xe8, 'b', 'y', 'e'}))
	f.Add(frame(0x88, []byte{0x03}))
	f.Add(frame(0x81|0x40, []byte("rsv")))
	f.Add(frame(0x83, nil))
	f.Add(frame(0x81, []byte{0xce, 0xba, 0xed, 0xa0, 0x80}))
	f.Add(frame(0x82, bytes.Repeat([]byte("x"), 200)))
	f.Add([]byte{0x82, 0x80 | 127, 0, 0, 0, 0, 0, 1, 0, 0, 1, 2, 3, 4})
	f.Add(appendHeader(nil, true, opText, 3, false, [4]byte{}))
	f.Fuzz(func(t *testing.T, in []byte) {
		readBoth(t, in, 128, 64)
		sameRead(t, in, 128, 1+len(in)%13)
		msgs, err := readAll(in, 128)
		if err == nil {
			t.Fatal("the stream ended without an error")
		}
		for _, m := range msgs {
			if len(m.Data) > 128 {
				t.Fatalf("message of %d bytes over the limit", len(m.Data))
			}
			if m.Type == TextMessage && !utf8.Valid(m.Data) {
				t.Fatalf("invalid UTF-8 text %q", m.Data)
			}
		}
	})
}

// A read cancelled while its pong waits for the write lock sends the pong
// at the next read, and loses nothing.
func TestReadCancelKeepsReply(t *testing.T) {
	tr := &bytesTransport{in: append(frame(0x89, []byte("p")), frame(0x81, []byte("after"))...)}
	c := newConn(tr, false, "", nil, nil)
	cx := future.NewContext(waker.Noop())
	c.tryLockWrite(nil)
	rf := c.ReadMessage()
	if _, ok := rf.Poll(cx); ok {
		t.Fatal("read done while the pong waits for the lock")
	}
	rf.Cancel()
	c.unlockWrite()
	r, ok := c.ReadMessage().Poll(cx)
	if !ok || r.Err != nil || string(r.Value.Data) != "after" {
		t.Fatalf("%v %v %q", ok, r.Err, r.Value.Data)
	}
	if want := "\x8a\x01p"; tr.out.String() != want {
		t.Fatalf("wrote %q, want %q", tr.out.String(), want)
	}
}

// readBoth reads in as readAll does, with and without the reader taking
// whole messages in place, and fails t if the two differ in a message or
// in the error that ends the stream.
func readBoth(t *testing.T, in []byte, limit int64, bufSize int) {
	t.Helper()
	read := func(whole bool) ([]Message, string) {
		takeWhole = whole
		defer func() { takeWhole = true }()
		c := newConn(&bytesTransport{in: bytes.Clone(in)}, false, "", &Options{ReadLimit: limit, ReadBufferSize: bufSize}, nil)
		var out []Message
		for {
			r, _ := future.Block(context.Background(), future.Future[future.Result[Message]](c.ReadMessage()))
			if r.Err != nil {
				return out, r.Err.Error()
			}
			out = append(out, Message{Type: r.Value.Type, Data: bytes.Clone(r.Value.Data)})
		}
	}
	fast, fastErr := read(true)
	slow, slowErr := read(false)
	if fastErr != slowErr || len(fast) != len(slow) {
		t.Fatalf("in place: %d messages, %s; gathered: %d messages, %s", len(fast), fastErr, len(slow), slowErr)
	}
	for i := range fast {
		if fast[i].Type != slow[i].Type || !bytes.Equal(fast[i].Data, slow[i].Data) {
			t.Fatalf("message %d: in place %s %q, gathered %s %q", i, fast[i].Type, fast[i].Data, slow[i].Type, slow[i].Data)
		}
	}
}

// The messages taken whole from the read buffer are those the general
// path gathers, with the same errors, on streams of random frames: every
// opcode, fragments, RSV bits, unmasked frames, bad UTF-8, messages over
// the limit, read buffers smaller and larger than the frames.
func TestWholeMessagesMatchGathered(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	streams := 3000
	if testing.Short() {
		streams = 300
	}
	texts := [][]byte{[]byte("hello"), []byte("κόσμε"), {0xce, 0xba, 0xed, 0xa0, 0x80}, {0xff}, nil}
	for range streams {
		var in []byte
		for range 1 + rng.IntN(6) {
			var p []byte
			if rng.IntN(2) == 0 {
				p = texts[rng.IntN(len(texts))]
			} else {
				p = make([]byte, rng.IntN(300))
				for i := range p {
					p[i] = byte(rng.Uint32())
				}
			}
			b0 := []byte{0x81, 0x82, 0x01, 0x02, 0x80, 0x00, 0x89, 0x8a, 0x83, 0xc1, 0x91}[rng.IntN(11)]
			f := frame(b0, p)
			if rng.IntN(20) == 0 {
				f[1] &^= 0x80 // unmasked, which a server refuses
			}
			in = append(in, f...)
		}
		readBoth(t, in, []int64{0, 64, 256}[rng.IntN(3)], []int{64, 128, 4096}[rng.IntN(3)])
	}
}

// Appending to a message taken in place does not reach the frames after it
// in the read buffer.
func TestWholeMessageAppendStaysInside(t *testing.T) {
	in := append(frame(0x82, []byte("first")), frame(0x82, []byte("second"))...)
	c := newConn(&bytesTransport{in: in}, false, "", nil, nil)
	r, _ := future.Block(context.Background(), future.Future[future.Result[Message]](c.ReadMessage()))
	if r.Err != nil || string(r.Value.Data) != "first" {
		t.Fatalf("first: %q, %v", r.Value.Data, r.Err)
	}
	_ = append(r.Value.Data, "XXXXXXXXXXXXXXXX"...)
	r, _ = future.Block(context.Background(), future.Future[future.Result[Message]](c.ReadMessage()))
	if r.Err != nil || string(r.Value.Data) != "second" {
		t.Fatalf("second: %q, %v", r.Value.Data, r.Err)
	}
}
