package websocket

// permessage-deflate (RFC 7692) on the data path: the options, the
// compressors and decompressors (pooled, or kept by a connection with
// context takeover), compressing a message and inflating one within the
// read limit. The negotiation is in extensions.go.

import (
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// CompressionOptions enable permessage-deflate (RFC 7692) on an Upgrader
// or in DialOptions; see "Compression" in the package doc. The zero
// CompressionOptions compresses at DefaultCompressionLevel, messages of
// DefaultCompressionThreshold bytes and more, without context takeover in
// either direction (no flate state kept by an idle connection).
type CompressionOptions struct {
	// Level is the flate level of the messages this side sends:
	// flate.HuffmanOnly (-2), flate.DefaultCompression (-1), or 1 (best
	// speed) to 9 (best compression). 0 means DefaultCompressionLevel.
	Level int
	// Threshold is the size under which a message is sent uncompressed.
	// 0 means DefaultCompressionThreshold; negative compresses every
	// message. Messages written with NextWriter are always compressed.
	Threshold int
	// ContextTakeover keeps the compression context of the messages this
	// side sends from one message to the next (better ratios on similar
	// messages), when the peer allows it. It costs a flate.Writer per
	// connection for the connection's life. Without it, each message takes
	// a writer from a pool and returns it.
	ContextTakeover bool
	// PeerContextTakeover lets the peer keep its compression context
	// across the messages it sends. The connection then keeps the last
	// 32 KiB of the peer's messages as the next one's dictionary. Without
	// it the peer is asked not to (client_no_context_takeover from a
	// server, server_no_context_takeover from a client).
	PeerContextTakeover bool
	// PeerMaxWindowBits, 8 to 15, asks the peer to compress with a window
	// of at most 1<<PeerMaxWindowBits bytes (client_max_window_bits in a
	// server's response, when the client offers it; server_max_window_bits
	// in a client's offer). It saves the peer's memory, not ours: the
	// decompressor's window is 32 KiB whatever the peer's. 0 asks nothing.
	PeerMaxWindowBits int
}

// Defaults of CompressionOptions.
const (
	DefaultCompressionLevel     = flate.BestSpeed
	DefaultCompressionThreshold = 128
)

// ErrBadOptions is wrapped by the error of an Upgrade or Dial whose
// options are invalid (a compression level or window size out of range).
var ErrBadOptions = errors.New("websocket: invalid options")

// check validates o.
func (o *CompressionOptions) check() error {
	switch {
	case o.Level < flate.HuffmanOnly || o.Level > flate.BestCompression:
		return fmt.Errorf("%w: compression level %d", ErrBadOptions, o.Level)
	case o.PeerMaxWindowBits != 0 && (o.PeerMaxWindowBits < 8 || o.PeerMaxWindowBits > 15):
		return fmt.Errorf("%w: PeerMaxWindowBits %d (want 8-15, or 0)", ErrBadOptions, o.PeerMaxWindowBits)
	}
	return nil
}

// level returns the flate level o asks for.
func (o *CompressionOptions) level() int {
	if o.Level == 0 {
		return DefaultCompressionLevel
	}
	return o.Level
}

// threshold returns the smallest size o compresses.
func (o *CompressionOptions) threshold() int {
	switch {
	case o.Threshold == 0:
		return DefaultCompressionThreshold
	case o.Threshold < 0:
		return 0
	}
	return o.Threshold
}

// deflateTail is the empty stored block that ends a sync flush: removed
// from a compressed message by its sender, put back by its receiver (RFC
// 7692 section 7.2).
const deflateTail = "\x00\x00\xff\xff"

// inflateTail is what the reader appends to a message: deflateTail, then
// a final empty stored block, so that flate reports io.EOF exactly when
// the message ended on a block boundary (a message cut inside a block
// reads as io.ErrUnexpectedEOF instead).
const inflateTail = deflateTail + "\x01\x00\x00\xff\xff"

// tailBytes is inflateTail as the bytes a source reads (never written).
var tailBytes = []byte(inflateTail)

// maxWindow is the largest LZ77 window of DEFLATE: the dictionary that
// context takeover keeps for the peer's messages.
const maxWindow = 32 << 10

// deflater is a negotiated permessage-deflate: its parameters, seen
// from one side, read-only and shared by every connection that
// negotiated the same on that side with the same options (interned in
// deflaters). What a connection keeps of its own is in a deflateCtx.
type deflater struct {
	params    deflateParams
	ext       string // the Sec-WebSocket-Extensions value in force
	level     int
	threshold int
	// wTakeover says this side keeps its compression context.
	wTakeover bool
	// rTakeover says the peer keeps its compression context: the
	// connection's deflateCtx holds the history of its messages.
	rTakeover bool
	// shared is the compression of the connections that keep no context
	// on either side: they share it, and never write its ctx.
	shared compression
}

// compression is what a connection with permessage-deflate points to: the
// deflater it negotiated and, with context takeover on either side, its
// own deflateCtx (a record per connection then; without takeover, the
// deflater's shared one).
type compression struct {
	d   *deflater
	ctx deflateCtx
}

// deflaterKey is what a deflater is made of.
type deflaterKey struct {
	p         deflateParams
	level     int
	threshold int
	takeover  bool
	peer      bool
	client    bool
}

// deflaters interns the deflaters: a deflaterKey to its *deflater (a
// few distinct values in practice).
var deflaters sync.Map

// deflateCtx is the compression state a connection keeps with context
// takeover (made by setDeflate when either side keeps its context).
type deflateCtx struct {
	// wctx is the compressor kept with wTakeover, made at the first
	// compressed message. The write lock's holder's.
	wctx *compressor
	// dict is the history of the peer's messages, with rTakeover. The
	// reader's.
	dict []byte
}

// newDeflater returns the deflater of a connection that negotiated p,
// the parameters seen from the side client says.
func newDeflater(p deflateParams, o *CompressionOptions, client bool) *deflater {
	k := deflaterKey{p: p, level: o.level(), threshold: o.threshold(), takeover: o.ContextTakeover, peer: o.PeerContextTakeover, client: client}
	if d, ok := deflaters.Load(k); ok {
		return d.(*deflater)
	}
	d := &deflater{params: p, ext: p.extension(), level: k.level, threshold: k.threshold}
	d.shared.d = d
	if client {
		d.wTakeover = o.ContextTakeover && !p.clientNoContextTakeover
		d.rTakeover = !p.serverNoContextTakeover
	} else {
		d.wTakeover = o.ContextTakeover && !p.serverNoContextTakeover
		d.rTakeover = !p.clientNoContextTakeover
	}
	v, _ := deflaters.LoadOrStore(k, d)
	return v.(*deflater)
}

// sink is the io.Writer of a flate.Writer: it appends to b, which its
// user sets for the time of one message.
type sink struct{ b []byte }

func (s *sink) Write(p []byte) (int, error) {
	s.b = append(s.b, p...)
	return len(p), nil
}

// compressor is a flate.Writer bound to its sink: in a pool between
// messages, or kept by a connection with context takeover.
type compressor struct {
	fw *flate.Writer
	s  sink
}

// compressorPools hold the idle compressors, one pool per flate level
// (HuffmanOnly..BestCompression, indexed by level+2).
var compressorPools [flate.BestCompression + 3]sync.Pool

// getCompressor takes a reset compressor of level from its pool, or makes
// one (see "Compression" in the package doc for its size).
func getCompressor(level int) *compressor {
	if z, ok := compressorPools[level+2].Get().(*compressor); ok {
		z.fw.Reset(&z.s)
		return z
	}
	z := &compressor{}
	fw, err := flate.NewWriter(&z.s, level)
	if err != nil {
		panic(err) // the level was checked by CompressionOptions.check
	}
	z.fw = fw
	return z
}

// putCompressor gives z back to the pool of level; z's sink lets go of the
// caller's buffer.
func putCompressor(level int, z *compressor) {
	z.s.b = nil
	compressorPools[level+2].Put(z)
}

// write compresses p onto dst, flushed: dst's new bytes end with
// deflateTail. The compressor keeps its context for the next call.
func (z *compressor) write(dst, p []byte) []byte {
	z.s.b = dst
	// Writes to a sink cannot fail.
	_, _ = z.fw.Write(p)
	_ = z.fw.Flush()
	dst = z.s.b
	z.s.b = nil
	return dst
}

// compress appends p to dst as one compressed message: deflated,
// flushed, without deflateTail, with the connection's compressor (x's,
// with context takeover) or one from the pool. Called by the write lock's
// holder.
func (d *deflater) compress(x *deflateCtx, dst, p []byte) []byte {
	var z *compressor
	if d.wTakeover {
		if x.wctx == nil {
			x.wctx = getCompressor(d.level)
		}
		z = x.wctx
	} else {
		z = getCompressor(d.level)
		defer putCompressor(d.level, z)
	}
	dst = z.write(dst, p)
	return dst[:len(dst)-len(deflateTail)]
}

// useCompression says whether a message of n bytes is sent compressed.
func (d *deflater) useCompression(n int) bool { return n >= d.threshold }

// source is what a decompressor reads: the gathered payload of a
// message, then inflateTail. An io.ByteReader, so that flate reads it
// without a bufio.Reader of its own.
type source struct {
	p, tail []byte
}

func (s *source) Read(b []byte) (int, error) {
	if len(s.p) == 0 {
		s.p, s.tail = s.tail, nil
		if len(s.p) == 0 {
			return 0, io.EOF
		}
	}
	n := copy(b, s.p)
	s.p = s.p[n:]
	return n, nil
}

func (s *source) ReadByte() (byte, error) {
	if len(s.p) == 0 {
		s.p, s.tail = s.tail, nil
		if len(s.p) == 0 {
			return 0, io.EOF
		}
	}
	c := s.p[0]
	s.p = s.p[1:]
	return c, nil
}

// decompressor is a flate reader bound to its source, always pooled: the
// context a peer keeps is restored from the connection's dictionary.
type decompressor struct {
	fr  io.ReadCloser
	src source
}

var decompressorPool sync.Pool

// getDecompressor returns a decompressor reading p then inflateTail, with
// dict (the peer's history, or nil) as its window.
func getDecompressor(p, dict []byte) *decompressor {
	z, ok := decompressorPool.Get().(*decompressor)
	if !ok {
		z = &decompressor{}
		z.src = source{p: p, tail: tailBytes}
		z.fr = flate.NewReaderDict(&z.src, dict)
		return z
	}
	z.src = source{p: p, tail: tailBytes}
	_ = z.fr.(flate.Resetter).Reset(&z.src, dict) // cannot fail
	return z
}

func putDecompressor(z *decompressor) {
	z.src = source{}
	decompressorPool.Put(z)
}

// The errors of a compressed message.
var (
	errRSV1Control      = protoErr(StatusProtocolError, "RSV1 set on a control frame")
	errRSV1Continuation = protoErr(StatusProtocolError, "RSV1 set on a continuation frame")
	errInflate          = protoErr(StatusInvalidPayloadData, "invalid compressed data")
)

// inflate decompresses the gathered payload of a message (in) into buf,
// at most limit bytes: a larger output stops at limit+1 bytes and fails
// with errTooBig, so a small message that inflates to much more (a
// "decompression bomb") costs no more memory than the limit. Invalid
// DEFLATE data fails with errInflate. It returns the inflated message in
// buf, or in a larger buffer that replaces it (empty after an error).
// Called by the reader.
func (d *deflater) inflate(x *deflateCtx, buf, in []byte, limit int64) ([]byte, error) {
	if len(in) == 0 {
		// Not DEFLATE data (an empty message deflates to "\x00"), but
		// read as the empty message its sender surely meant.
		return buf[:0], nil
	}
	var dict []byte
	if d.rTakeover {
		dict = x.dict
	}
	z := getDecompressor(in, dict)
	defer putDecompressor(z)
	out := buf[:0]
	for {
		if len(out) == cap(out) {
			out = growOutput(out, limit)
		}
		n, err := z.fr.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if int64(len(out)) > limit {
			return out[:0], errTooBig
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return out[:0], fmt.Errorf("%w: %w", errInflate, err)
		}
	}
	if d.rTakeover {
		x.remember(out)
	}
	return out, nil
}

// growOutput grows out's capacity, doubling it, to at most limit+1 bytes
// (the one past the limit tells a message that exceeds it).
func growOutput(out []byte, limit int64) []byte {
	c := int64(max(2*cap(out), 4096))
	if c > limit {
		c = limit + 1 // limit < c: no overflow
	}
	n := make([]byte, len(out), c)
	copy(n, out)
	return n
}

// remember adds a message of the peer to its history: the last 32 KiB of
// what it sent compressed, the window its next message may refer to.
func (d *deflateCtx) remember(msg []byte) {
	if d.dict == nil {
		d.dict = make([]byte, 0, maxWindow)
	}
	if len(msg) >= maxWindow {
		d.dict = append(d.dict[:0], msg[len(msg)-maxWindow:]...)
		return
	}
	if drop := len(d.dict) + len(msg) - maxWindow; drop > 0 {
		d.dict = d.dict[:copy(d.dict, d.dict[drop:])]
	}
	d.dict = append(d.dict, msg...)
}

// validText reports whether an inflated text message is UTF-8.
func validText(p []byte) bool { return utf8.Valid(p) }
