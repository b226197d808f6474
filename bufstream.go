package blitz

// The buffered reader and writer over any AsyncReader and AsyncWriter.

import (
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/blitz-go/blitz/future"
)

// ErrLineTooLong is the error of a BufReader.ReadLine whose line exceeds
// the reader's maximum (SetMaxLine).
var ErrLineTooLong = errors.New("blitz: line too long")

const (
	// defaultBufSize is the size of a BufReader's or BufWriter's buffer
	// when none is given, as bufio's.
	defaultBufSize = 4096
	// minBufSize is the smallest buffer NewBufReader and NewBufWriter use.
	minBufSize = 16
	// defaultMaxLine bounds ReadLine by default, as bufio.Scanner's
	// MaxScanTokenSize.
	defaultMaxLine = 64 << 10
)

// BufReader is a buffered AsyncReader, the async bufio.Reader: it reads
// from its source in chunks of its buffer's size and serves reads, lines
// and delimited pieces from the buffer. One task reads at a time.
//
// A cancelled operation loses nothing: the bytes it gathered stay in the
// reader for the next one.
//
// Over a runtime socket (a *TCPStream, *UnixStream or *ReadHalf), a
// BufReader whose buffer is empty waits with a pooled read (see
// ReadPooled) and gives its buffer back to a pool shared by the process
// meanwhile: a connection idle between requests holds no buffer, only the
// reader itself. The bytes that arrive are copied into a buffer taken back
// from that pool.
type BufReader struct {
	src AsyncReader
	buf []byte // nil while an idle reader over a socket holds none
	// size is the buffer's size; arr is the buffer when it came from
	// bufPool (size == defaultBufSize), nil otherwise.
	size int
	arr  *[defaultBufSize]byte
	// sock is src's connection when src is a runtime socket, read with
	// pooled reads when the buffer is empty; rd is that read, in flight
	// while waiting; held is the pool buffer of the bytes it brought that
	// did not fit in buf yet, from heldOff on.
	sock    *conn
	rd      ReadPooledFuture
	waiting bool
	held    PooledBuf
	heldOff int
	// buf[r:w] are buffered; partial holds the first bytes of a line or
	// piece longer than the buffer, served before buf[r:w].
	r, w    int
	partial []byte
	// err is the source's error (io.EOF at its end), returned once the
	// buffered bytes are gone.
	err error
	// filling is set while a read of the source into buf[w:] is in flight:
	// buf is not compacted until it completes.
	filling bool
	maxLine int

	// The futures that ReadLine, ReadString and ReadBytes handed out last,
	// which the next call of the same kind reuses once they completed or
	// were cancelled (see ReadLine), with their poll and cancel functions,
	// made once (a ReadString or ReadBytes poll function again when the
	// delimiter changes: strDelim and bDelim are those of the current
	// ones). Owned by the reading task, as the rest of the reader.
	line, str        *StreamFuture[string]
	bytesF           *StreamFuture[[]byte]
	pollLineFn       func(cx *future.Context) (future.Result[string], bool)
	strDelim, bDelim byte
	pollStrFn        func(cx *future.Context) (future.Result[string], bool)
	pollBytesFn      func(cx *future.Context) (future.Result[[]byte], bool)
	cancelFn         func()
}

// NewBufReader returns a BufReader over src with a buffer of size bytes
// (4096 when size <= 0, at least 16).
func NewBufReader(src AsyncReader, size int) *BufReader {
	if size <= 0 {
		size = defaultBufSize
	}
	size = max(size, minBufSize)
	b := &BufReader{src: src, size: size, maxLine: defaultMaxLine, sock: pooledConn(src)}
	if b.sock == nil {
		b.buf = make([]byte, size)
	}
	return b
}

// pooledConn returns src's connection when src is a runtime socket that
// pooled reads can read, nil otherwise. Only these types exactly: a type
// that embeds one may read otherwise, through a PollRead of its own.
func pooledConn(src AsyncReader) *conn {
	switch s := src.(type) {
	case *TCPStream:
		return &s.conn
	case *UnixStream:
		return &s.conn
	case *ReadHalf:
		if !s.closed {
			return s.sh.s
		}
	}
	return nil
}

// bufPool holds the default-sized buffers of the BufReaders that wait
// idle on a socket.
var bufPool = sync.Pool{New: func() any { return new([defaultBufSize]byte) }}

// takeBuf gives the reader a buffer if it has none (from bufPool when of
// the default size).
func (b *BufReader) takeBuf() {
	if b.buf != nil {
		return
	}
	if b.size == defaultBufSize {
		b.arr = bufPool.Get().(*[defaultBufSize]byte)
		b.buf = b.arr[:]
		return
	}
	b.buf = make([]byte, b.size)
}

// dropBuf gives an empty buffer back to bufPool (or to the collector), for
// a reader about to wait idle.
func (b *BufReader) dropBuf() {
	if b.arr != nil {
		bufPool.Put(b.arr)
	}
	b.arr, b.buf = nil, nil
	b.r, b.w = 0, 0
}

// SetMaxLine sets the longest line ReadLine accepts (64 KiB by default);
// n <= 0 removes the bound.
func (b *BufReader) SetMaxLine(n int) { b.maxLine = n }

// Buffered returns how many bytes can be read without reading the source.
func (b *BufReader) Buffered() int {
	n := len(b.partial) + b.w - b.r
	if b.held.p != nil {
		n += int(b.held.n) - b.heldOff
	}
	return n
}

// fill reads the source once into the free end of the buffer, moving the
// buffered bytes to its front first. Ready when the read completed (b.err
// set if it failed or the source ended).
func (b *BufReader) fill(cx *future.Context) bool {
	if b.sock != nil && !b.filling && (b.waiting || b.r == b.w || b.held.p != nil) {
		return b.fillPooled(cx)
	}
	b.takeBuf()
	if !b.filling {
		if b.r > 0 {
			b.w = copy(b.buf, b.buf[b.r:b.w])
			b.r = 0
		}
		b.filling = true
	}
	res, ok := b.src.PollRead(cx, b.buf[b.w:])
	if !ok {
		return false
	}
	b.filling = false
	b.w += res.Value
	if res.Err != nil {
		b.err = res.Err
	}
	return true
}

// fillPooled fills the buffer over a socket: from the bytes a pooled read
// brought that did not fit yet, or, the buffer being empty, by a pooled
// read, waiting without a buffer.
func (b *BufReader) fillPooled(cx *future.Context) bool {
	if b.held.p == nil {
		if !b.waiting {
			b.dropBuf()
			b.sock.readPooledInto(&b.rd)
			b.waiting = true
		}
		res, ok := b.rd.Poll(cx)
		if !ok {
			return false
		}
		b.waiting = false
		if res.Err != nil {
			b.err = res.Err
		}
		if len(res.Value.Bytes()) == 0 {
			res.Value.Release()
			return true
		}
		b.held, b.heldOff = res.Value, 0
	}
	b.takeBuf()
	if b.r > 0 {
		b.w = copy(b.buf, b.buf[b.r:b.w])
		b.r = 0
	}
	data := b.held.Bytes()[b.heldOff:]
	n := copy(b.buf[b.w:], data)
	b.w += n
	b.heldOff += n
	if n == len(data) {
		b.held.Release()
		b.held, b.heldOff = PooledBuf{}, 0
	}
	return true
}

// PollRead serves buf from the buffer, filling it first if it is empty;
// see AsyncReader.
func (b *BufReader) PollRead(cx *future.Context, buf []byte) (future.Result[int], bool) {
	if len(buf) == 0 {
		return future.Ok(0), true
	}
	for len(b.partial) == 0 && b.r == b.w {
		if b.err != nil && b.held.p == nil {
			return future.Result[int]{Err: b.err}, true
		}
		if !b.fill(cx) {
			return future.Result[int]{}, false
		}
	}
	if len(b.partial) > 0 {
		n := copy(buf, b.partial)
		b.partial = b.partial[n:]
		return future.Ok(n), true
	}
	n := copy(buf, b.buf[b.r:b.w])
	b.r += n
	return future.Ok(n), true
}

// CancelRead abandons the source read in flight; see AsyncReader.
func (b *BufReader) CancelRead() {
	if b.filling {
		b.src.CancelRead()
		b.filling = false
	}
	if b.waiting {
		b.rd.Cancel() // bytes it had received stay with the socket for the next read
		b.waiting = false
	}
}

// Read returns a future of one read into buf from the buffer (filling it
// if it is empty).
func (b *BufReader) Read(buf []byte) *StreamFuture[int] { return Read(b, buf) }

// ReadBytes returns a future that reads up to and including the first
// delim, as bufio.Reader.ReadBytes: if the stream ends (or fails) first,
// the value holds what was read with the error (io.EOF at the end). The
// slice is the caller's. The future is the reader's, as ReadLine's.
func (b *BufReader) ReadBytes(delim byte) *StreamFuture[[]byte] {
	if b.pollBytesFn == nil || b.bDelim != delim {
		b.bDelim = delim
		b.pollBytesFn = func(cx *future.Context) (future.Result[[]byte], bool) {
			end, err, ok := b.pollPieceEnd(cx, delim, 0)
			if !ok {
				return future.Result[[]byte]{}, false
			}
			return future.Result[[]byte]{Value: b.takePiece(end), Err: err}, true
		}
	}
	return reuseStream(&b.bytesF, b.pollBytesFn, b.cancelFunc())
}

// ReadString is ReadBytes as a string. The future is the reader's, as
// ReadLine's.
func (b *BufReader) ReadString(delim byte) *StreamFuture[string] {
	if b.pollStrFn == nil || b.strDelim != delim {
		b.strDelim = delim
		b.pollStrFn = func(cx *future.Context) (future.Result[string], bool) {
			end, err, ok := b.pollPieceEnd(cx, delim, 0)
			if !ok {
				return future.Result[string]{}, false
			}
			return future.Result[string]{Value: b.takeString(end, false), Err: err}, true
		}
	}
	return reuseStream(&b.str, b.pollStrFn, b.cancelFunc())
}

// ReadLine returns a future of the next line without its "\n" or "\r\n".
// The last line of a stream need not end with a newline; after it the
// result is "" with io.EOF. A line longer than the reader's maximum
// (SetMaxLine) fails with ErrLineTooLong: its first bytes are discarded,
// and the next ReadLine returns the rest of it.
//
// The future is the reader's: once it has completed or been cancelled, the
// next ReadLine reuses it, so that a task reading lines in a loop
// allocates only the strings it gets. Do not keep it, poll it or cancel it
// past its completion (polling then panics with
// future.ErrPolledAfterCompletion until the next ReadLine takes it over).
// The same holds for ReadString and ReadBytes, each for its own kind.
func (b *BufReader) ReadLine() *StreamFuture[string] {
	if b.pollLineFn == nil {
		b.pollLineFn = b.pollLine
	}
	return reuseStream(&b.line, b.pollLineFn, b.cancelFunc())
}

// pollLine is the poll of ReadLine's future.
func (b *BufReader) pollLine(cx *future.Context) (future.Result[string], bool) {
	end, err, ok := b.pollPieceEnd(cx, '\n', b.maxLine)
	if !ok {
		return future.Result[string]{}, false
	}
	if err == io.EOF && len(b.partial)+end-b.r > 0 {
		err = nil // the last line, without a newline
	}
	return future.Result[string]{Value: b.takeString(end, true), Err: err}, true
}

// cancelFunc returns CancelRead as a func value, made once.
func (b *BufReader) cancelFunc() func() {
	if b.cancelFn == nil {
		b.cancelFn = b.CancelRead
	}
	return b.cancelFn
}

// reuseStream returns *spare made ready for a new operation if it has
// completed or been cancelled, or else a new future, which becomes the
// spare.
func reuseStream[T any](spare **StreamFuture[T], poll func(*future.Context) (future.Result[T], bool), cancel func()) *StreamFuture[T] {
	f := *spare
	if f == nil || !f.done {
		f = new(StreamFuture[T])
		*spare = f
	}
	*f = StreamFuture[T]{poll: poll, cancel: cancel}
	return f
}

// pollPieceEnd reads up to and including delim: once ready, the piece is
// partial and buf[r:end], for takePiece or takeString to consume (end < 0:
// none, the piece was dropped). Bytes that do not fit in the buffer move to
// b.partial, so a pending or cancelled piece keeps them. With limit > 0, a
// piece longer than limit is dropped and fails with ErrLineTooLong.
func (b *BufReader) pollPieceEnd(cx *future.Context, delim byte, limit int) (int, error, bool) {
	for {
		if i := bytes.IndexByte(b.buf[b.r:b.w], delim); i >= 0 {
			end := b.r + i + 1
			if limit > 0 && len(b.partial)+i > limit {
				b.dropPiece(end)
				return -1, ErrLineTooLong, true
			}
			return end, nil, true
		}
		if limit > 0 && len(b.partial)+b.w-b.r > limit {
			b.dropPiece(b.w)
			return -1, ErrLineTooLong, true
		}
		if b.err != nil && b.held.p == nil {
			// Sticky: the end of the stream ends every later read too, and
			// a failed source fails them.
			return b.w, b.err, true
		}
		if b.r == 0 && b.w == len(b.buf) {
			// Full without delim: keep the bytes aside, read on.
			b.partial = append(b.partial, b.buf[:b.w]...)
			b.r, b.w = 0, 0
		}
		if !b.fill(cx) {
			return 0, nil, false
		}
	}
}

// dropPiece discards partial and buf[r:end].
func (b *BufReader) dropPiece(end int) {
	b.partial = nil
	b.r = end
}

// takePiece returns partial and buf[r:end] as one new slice and consumes
// them; nil for end < 0 (a dropped piece).
func (b *BufReader) takePiece(end int) []byte {
	if end < 0 {
		return nil
	}
	piece := make([]byte, 0, len(b.partial)+end-b.r)
	piece = append(piece, b.partial...)
	piece = append(piece, b.buf[b.r:end]...)
	b.partial = nil
	b.r = end
	return piece
}

// takeString returns partial and buf[r:end] as a string, with a final
// "\n" and then a "\r" trimmed when line is set, and consumes them; ""
// for end < 0 (a dropped piece). The string is the only allocation, none
// for "".
func (b *BufReader) takeString(end int, line bool) string {
	if end < 0 {
		return ""
	}
	piece := b.buf[b.r:end]
	if len(b.partial) > 0 {
		piece = append(b.partial, piece...) // partial is dropped below: its array is free
	}
	if line {
		piece = bytes.TrimSuffix(piece, newline)
		piece = bytes.TrimSuffix(piece, carriageReturn)
	}
	s := string(piece)
	b.partial = nil
	b.r = end
	return s
}

// newline and carriageReturn are what ReadLine trims.
var (
	newline        = []byte{'\n'}
	carriageReturn = []byte{'\r'}
)

// BufWriter is a buffered AsyncWriter, the async bufio.Writer: writes go
// to its buffer and reach the destination when the buffer is full or on
// Flush. Writes at least as large as the buffer bypass it once it is
// empty. After an error of the destination every write and flush fails
// with it. One task writes at a time.
type BufWriter struct {
	dst AsyncWriter
	buf []byte
	// n bytes are buffered, of which flushed have reached the destination
	// (a flush in flight or cancelled continues from there).
	n, flushed int
	// direct is set while a write larger than the buffer goes straight to
	// the destination.
	direct bool
	err    error
}

// NewBufWriter returns a BufWriter over dst with a buffer of size bytes
// (4096 when size <= 0, at least 16).
func NewBufWriter(dst AsyncWriter, size int) *BufWriter {
	if size <= 0 {
		size = defaultBufSize
	}
	return &BufWriter{dst: dst, buf: make([]byte, max(size, minBufSize))}
}

// Buffered returns how many bytes wait for a flush; Available how many
// more fit in the buffer.
func (w *BufWriter) Buffered() int  { return w.n - w.flushed }
func (w *BufWriter) Available() int { return len(w.buf) - w.n }

// PollWrite copies buf into the buffer, flushing it first if it is full;
// see AsyncWriter. The count may be short: what fitted.
func (w *BufWriter) PollWrite(cx *future.Context, buf []byte) (future.Result[int], bool) {
	if w.err != nil {
		return future.Fail[int](w.err), true
	}
	if len(buf) == 0 {
		return future.Ok(0), true
	}
	if w.direct || (w.n == 0 && len(buf) >= len(w.buf)) {
		w.direct = true
		res, ok := w.dst.PollWrite(cx, buf)
		if !ok {
			return future.Result[int]{}, false
		}
		w.direct = false
		w.err = res.Err
		return res, true
	}
	if w.Available() == 0 {
		if res, ok := w.pollFlushBuffer(cx); !ok || res.Err != nil {
			return future.Result[int]{Err: res.Err}, ok
		}
	}
	n := copy(w.buf[w.n:], buf)
	w.n += n
	return future.Ok(n), true
}

// pollFlushBuffer writes the buffered bytes to the destination.
func (w *BufWriter) pollFlushBuffer(cx *future.Context) (future.Result[struct{}], bool) {
	if w.err != nil {
		return future.Fail[struct{}](w.err), true
	}
	res, ok := writeAllPoll(cx, w.dst, w.buf[:w.n], &w.flushed)
	if !ok {
		return future.Result[struct{}]{}, false
	}
	if res.Err != nil {
		w.err = res.Err
		return future.Fail[struct{}](res.Err), true
	}
	w.n, w.flushed = 0, 0
	return future.Ok(struct{}{}), true
}

// PollFlush writes the buffered bytes to the destination, then flushes the
// destination if it holds bytes back too; see AsyncFlusher.
func (w *BufWriter) PollFlush(cx *future.Context) (future.Result[struct{}], bool) {
	if res, ok := w.pollFlushBuffer(cx); !ok || res.Err != nil {
		return res, ok
	}
	if fl, is := w.dst.(AsyncFlusher); is {
		return fl.PollFlush(cx)
	}
	return future.Ok(struct{}{}), true
}

// CancelWrite abandons the destination write in flight (of a flush or a
// direct write); the buffered bytes stay buffered.
func (w *BufWriter) CancelWrite() {
	w.direct = false
	w.dst.CancelWrite()
}

// Write returns a future that writes all of buf (into the buffer, flushing
// it as it fills) and resolves to len(buf), or less with an error.
func (w *BufWriter) Write(buf []byte) *StreamFuture[int] { return WriteAll(w, buf) }

// WriteString is Write of a string.
func (w *BufWriter) WriteString(s string) *StreamFuture[int] { return WriteAll(w, []byte(s)) }

// Flush returns a future that flushes the buffer (PollFlush).
func (w *BufWriter) Flush() *StreamFuture[struct{}] {
	return &StreamFuture[struct{}]{poll: w.PollFlush, cancel: w.CancelWrite}
}
