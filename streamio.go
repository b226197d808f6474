package blitz

// Futures over any AsyncReader and AsyncWriter: read, read full, read to
// the end, write all, copy.

import (
	"io"

	"github.com/blitz-go/blitz/future"
)

// copyBufferSize is Copy's buffer, as io.Copy's.
const copyBufferSize = 32 << 10

// StreamFuture is the future of an operation on an AsyncReader or
// AsyncWriter (Read, ReadFull, ReadToEnd, WriteAll, Copy, and the buffered
// reader's and writer's): its pointer is a future.Future[future.Result[T]]
// and a future.Canceler. Cancelling it cancels the read or write in flight
// (CancelRead, CancelWrite), which loses nothing the stream took: see
// AsyncReader.
type StreamFuture[T any] struct {
	// op, when set, is the operation, whose state holds the future (one
	// allocation for both); otherwise poll and cancel are. Set once, by
	// the function that made the future.
	op     streamFutureOp[T]
	poll   func(cx *future.Context) (future.Result[T], bool)
	cancel func()
	done   bool
}

// streamFutureOp is an operation of a StreamFuture that is a type of its own
// rather than closures.
type streamFutureOp[T any] interface {
	poll(cx *future.Context) (future.Result[T], bool)
	cancel()
}

// Poll runs the operation.
func (f *StreamFuture[T]) Poll(cx *future.Context) (future.Result[T], bool) {
	if f.done {
		panic(future.ErrPolledAfterCompletion)
	}
	var r future.Result[T]
	var ok bool
	if f.op != nil {
		r, ok = f.op.poll(cx)
	} else {
		r, ok = f.poll(cx)
	}
	f.done = ok
	return r, ok
}

// Cancel abandons the operation; see the function that made the future
// for what was done before.
func (f *StreamFuture[T]) Cancel() {
	if f.done {
		return
	}
	f.done = true
	if f.op != nil {
		f.op.cancel()
	} else {
		f.cancel()
	}
}

// Read returns a future of one read from r into buf (r.PollRead as a
// future, for select, timeouts and tasks written as futures).
func Read(r AsyncReader, buf []byte) *StreamFuture[int] {
	return &StreamFuture[int]{
		poll:   func(cx *future.Context) (future.Result[int], bool) { return r.PollRead(cx, buf) },
		cancel: r.CancelRead,
	}
}

// Write returns a future of one write of buf to w, which may be short.
func Write(w AsyncWriter, buf []byte) *StreamFuture[int] {
	return &StreamFuture[int]{
		poll:   func(cx *future.Context) (future.Result[int], bool) { return w.PollWrite(cx, buf) },
		cancel: w.CancelWrite,
	}
}

// ReadFull returns a future that reads exactly len(buf) bytes, as
// io.ReadFull: the count is len(buf), or less with io.EOF if the stream
// ended before any byte, io.ErrUnexpectedEOF if it ended in the middle, or
// the stream's error.
func ReadFull(r AsyncReader, buf []byte) *StreamFuture[int] {
	n := 0
	return &StreamFuture[int]{
		poll: func(cx *future.Context) (future.Result[int], bool) {
			for n < len(buf) {
				res, ok := r.PollRead(cx, buf[n:])
				if !ok {
					return future.Result[int]{}, false
				}
				n += res.Value
				switch {
				case res.Err == io.EOF && n > 0:
					return future.Result[int]{Value: n, Err: io.ErrUnexpectedEOF}, true
				case res.Err != nil:
					return future.Result[int]{Value: n, Err: res.Err}, true
				}
			}
			return future.Ok(n), true
		},
		cancel: r.CancelRead,
	}
}

// ReadToEnd returns a future that reads until the end of the stream and
// resolves to everything read; the end of the stream is not an error. On
// an error the value holds what was read before it. There is no bound on
// what it reads: wrap an untrusted stream in LimitReader.
func ReadToEnd(r AsyncReader) *StreamFuture[[]byte] {
	b := make([]byte, 0, 512)
	return &StreamFuture[[]byte]{
		poll: func(cx *future.Context) (future.Result[[]byte], bool) {
			for {
				if len(b) == cap(b) {
					b = append(b, 0)[:len(b)] // grow only between reads: the spare capacity is the read's buffer
				}
				res, ok := r.PollRead(cx, b[len(b):cap(b)])
				if !ok {
					return future.Result[[]byte]{}, false
				}
				b = b[:len(b)+res.Value]
				switch {
				case res.Err == io.EOF:
					return future.Ok(b), true
				case res.Err != nil:
					return future.Result[[]byte]{Value: b, Err: res.Err}, true
				}
			}
		},
		cancel: r.CancelRead,
	}
}

// WriteAll returns a future that writes all of buf to w, in as many writes
// as it takes, and resolves to the count written (len(buf), or less with
// the error). A writer that accepts nothing without an error fails it with
// io.ErrShortWrite. The future is one allocation.
func WriteAll(w AsyncWriter, buf []byte) *StreamFuture[int] {
	op := &writeAllOp{w: w, buf: buf}
	op.f.op = op
	return &op.f
}

// writeAllOp is WriteAll's future and its state, in one allocation.
type writeAllOp struct {
	f   StreamFuture[int]
	w   AsyncWriter
	buf []byte
	n   int
}

func (o *writeAllOp) poll(cx *future.Context) (future.Result[int], bool) {
	return writeAllPoll(cx, o.w, o.buf, &o.n)
}

func (o *writeAllOp) cancel() { o.w.CancelWrite() }

// writeAllPoll writes buf[*n:] to w, advancing *n: the body of WriteAll,
// Copy and BufWriter's flush.
func writeAllPoll(cx *future.Context, w AsyncWriter, buf []byte, n *int) (future.Result[int], bool) {
	for *n < len(buf) {
		res, ok := w.PollWrite(cx, buf[*n:])
		if !ok {
			return future.Result[int]{}, false
		}
		*n += res.Value
		if res.Err == nil && res.Value == 0 {
			res.Err = io.ErrShortWrite
		}
		if res.Err != nil {
			return future.Result[int]{Value: *n, Err: res.Err}, true
		}
	}
	return future.Ok(*n), true
}

// Copy returns a future that copies src to dst until src ends, as io.Copy,
// and resolves to the byte count written (with the first error of either
// side; the end of src is not an error). When src ends, dst is flushed if
// it is an AsyncFlusher (a BufWriter). Cancelling it cancels the read or
// write in flight; bytes read but not yet written are dropped, and the
// count written so far is not reported.
//
// When src is a socket of the runtime (a TCP or Unix connection), Copy
// reads it with ReadPooled: while it waits for src it holds no buffer, so
// an idle copy (one direction of a quiet proxied connection) costs its
// future alone, and a buffer of the runtime's read pool is held only from
// a read until its bytes are written. Other sources are read into a buffer
// of Copy's own, 32 KiB as io.Copy's.
func Copy(dst AsyncWriter, src AsyncReader) *StreamFuture[int64] {
	c := &copyState{dst: dst, src: src, pooled: pooledConn(src)}
	return &StreamFuture[int64]{poll: c.poll, cancel: c.cancel}
}

// CopyBuffer is Copy through buf, or through a buffer of its own if buf is
// empty; it does not read with ReadPooled.
func CopyBuffer(dst AsyncWriter, src AsyncReader, buf []byte) *StreamFuture[int64] {
	c := &copyState{dst: dst, src: src, buf: buf}
	return &StreamFuture[int64]{poll: c.poll, cancel: c.cancel}
}

// readPooledInto starts a pooled read in f, as ReadPooled does.
func (c *conn) readPooledInto(f *ReadPooledFuture) { *f = ReadPooledFuture{n: c.n} }

// copyState is Copy's state machine: read a chunk into buf, write it all
// (chunk bytes, of which written are done), repeat; once src has ended
// (srcDone, with srcErr unless it was the end of the stream), flush. With
// pooled set, a chunk is read by a pooled read (rd, in flight while
// reading) and written from its buffer (held), released once written.
type copyState struct {
	dst     AsyncWriter
	src     AsyncReader
	buf     []byte
	chunk   int
	written int
	total   int64
	srcDone bool
	srcErr  error

	pooled  *conn // src's connection, read with pooled reads; nil for other sources
	rd      ReadPooledFuture
	reading bool
	held    PooledBuf
}

func (c *copyState) poll(cx *future.Context) (future.Result[int64], bool) {
	if len(c.buf) == 0 && c.pooled == nil {
		c.buf = make([]byte, copyBufferSize)
	}
	for {
		if c.chunk == 0 && !c.srcDone {
			res, ok := c.read(cx)
			if !ok {
				return future.Result[int64]{}, false
			}
			c.chunk, c.written = res.Value, 0
			if res.Err != nil {
				c.srcDone = true
				if res.Err != io.EOF {
					c.srcErr = res.Err
				}
			}
		}
		if c.chunk > 0 {
			before := c.written
			res, ok := writeAllPoll(cx, c.dst, c.buf[:c.chunk], &c.written)
			c.total += int64(c.written - before)
			if !ok {
				return future.Result[int64]{}, false
			}
			c.chunk = 0
			c.release()
			if res.Err != nil {
				return future.Result[int64]{Value: c.total, Err: res.Err}, true
			}
		}
		if c.srcDone {
			if c.srcErr != nil {
				return future.Result[int64]{Value: c.total, Err: c.srcErr}, true
			}
			return c.flush(cx)
		}
	}
}

// read reads the next chunk into c.buf: with a pooled read, c.buf is the
// pool buffer's bytes, held until release.
func (c *copyState) read(cx *future.Context) (future.Result[int], bool) {
	if c.pooled == nil {
		return c.src.PollRead(cx, c.buf)
	}
	if !c.reading {
		c.pooled.readPooledInto(&c.rd)
		c.reading = true
	}
	res, ok := c.rd.Poll(cx)
	if !ok {
		return future.Result[int]{}, false
	}
	c.reading = false
	c.held = res.Value
	c.buf = c.held.Bytes()
	n := len(c.buf)
	if n == 0 {
		c.release() // an end or an error may still hold a buffer of the pool
	}
	return future.Result[int]{Value: n, Err: res.Err}, true
}

// release gives back the pool buffer of the chunk written, if any.
func (c *copyState) release() {
	if c.pooled != nil {
		c.held.Release()
		c.held, c.buf = PooledBuf{}, nil
	}
}

// flush flushes dst if it holds bytes back.
func (c *copyState) flush(cx *future.Context) (future.Result[int64], bool) {
	if fl, is := c.dst.(AsyncFlusher); is {
		res, ok := fl.PollFlush(cx)
		if !ok {
			return future.Result[int64]{}, false
		}
		if res.Err != nil {
			return future.Result[int64]{Value: c.total, Err: res.Err}, true
		}
	}
	return future.Ok(c.total), true
}

// cancel cancels the read, or the write or flush, in flight, and gives
// back a pool buffer held.
func (c *copyState) cancel() {
	switch {
	case c.chunk == 0 && !c.srcDone && c.pooled != nil:
		if c.reading {
			c.rd.Cancel()
			c.reading = false
		}
	case c.chunk == 0 && !c.srcDone:
		c.src.CancelRead()
	default:
		c.dst.CancelWrite()
	}
	c.release()
}

// LimitReader returns an AsyncReader that reads from r and ends (io.EOF)
// after n bytes, as io.LimitReader.
func LimitReader(r AsyncReader, n int64) AsyncReader {
	return &limitedReader{r: r, left: n}
}

// limitedReader is LimitReader's reader: left is what it may still read.
type limitedReader struct {
	r    AsyncReader
	left int64
}

func (l *limitedReader) PollRead(cx *future.Context, buf []byte) (future.Result[int], bool) {
	if l.left <= 0 {
		return future.Result[int]{Err: io.EOF}, true
	}
	if int64(len(buf)) > l.left {
		buf = buf[:l.left]
	}
	res, ok := l.r.PollRead(cx, buf)
	if ok {
		l.left -= int64(res.Value)
	}
	return res, ok
}

func (l *limitedReader) CancelRead() { l.r.CancelRead() }
