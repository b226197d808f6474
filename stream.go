package blitz

import (
	"io"
	"net"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
)

// conn is what TCPStream and UnixStream share: a connected stream socket.
// Read, Write and WriteAll return futures; one read and one write may be in
// flight at once (Split gives them to two tasks).
type conn struct {
	n *netFD
	// The futures the connection's operations reuse: the last of each
	// kind that Read, ReadPooled, Write and WriteAll handed out, which the
	// next call of that kind reuses once it has completed or been
	// cancelled, so that a connection reading and writing in a loop
	// allocates nothing per operation (see Read). nil until the first call
	// of the kind. The read ones (and pollingRead, pollingPooled) are
	// touched only by the reader, the write ones (and pollingWrite,
	// pooledWrite) only by the writer (the
	// owners of a Split's halves): no two goroutines share a field.
	read       *ReadFuture
	readPooled *ReadPooledFuture
	write      *WriteFuture
	writeAll   *WriteAllFuture
	// pollingRead and pollingWrite say that a PollRead or a PollWrite is
	// in flight, in the read or write future (see AsyncReader): Read and
	// Write then leave that future alone. pollingPooled says the same of
	// a PollReadPooled, in readPooled (nil while parked, see
	// PollReadPooled), which ReadPooled then leaves alone.
	pollingRead, pollingWrite, pollingPooled bool
	// pooledWrite says that write came from pollWrites for a PollWrite,
	// and goes back there when that write completes (see PollWrite);
	// cleared when Write hands the future out. The writer's, as write is.
	pooledWrite bool
	// pooledRead says that readPooled came from pooledReads for a
	// PollReadPooled and nobody else has it: it goes back there while
	// the read waits on the armed receive (readPooled is then nil with
	// pollingPooled set; see PollReadPooled). Cleared when ReadPooled
	// hands the future out or CancelRead cancels it. The reader's, as
	// readPooled is.
	pooledRead bool
}

// LocalAddr returns the connection's local address.
func (s *conn) LocalAddr() net.Addr { return netAddr(s.n.network(), s.n.addresses().local) }

// RemoteAddr returns the connection's peer address. An accepted IP
// connection's is the one its accept read: asking for it makes the socket
// keep no record of its addresses, which a server that logs or hands on
// every connection's peer (as an HTTP server's Request.RemoteAddr) would
// otherwise keep for each idle connection.
func (s *conn) RemoteAddr() net.Addr {
	if peer, ok := s.n.peer(); ok {
		return netAddr(s.n.network(), backend.AddrPort(peer))
	}
	return netAddr(s.n.network(), s.n.addresses().peer)
}

// SetReadTimeout bounds every later Read: one that waits longer fails with
// a timeout error (errors.Is ErrTimeout, os.ErrDeadlineExceeded). 0 removes
// the bound.
func (s *conn) SetReadTimeout(d time.Duration) { s.n.setReadTimeout(d) }

// SetWriteTimeout bounds every later Write and each send of a WriteAll.
func (s *conn) SetWriteTimeout(d time.Duration) { s.n.setWriteTimeout(d) }

// CloseRead and CloseWrite shut down one half; the peer reads end of stream
// after CloseWrite.
func (s *conn) CloseRead() error {
	err := s.n.shutdown(backend.ShutdownRead)
	if err == nil {
		s.n.setHint(fdReadShut, true)
	}
	return err
}
func (s *conn) CloseWrite() error { return s.n.shutdown(backend.ShutdownWrite) }

// Close closes the connection; reads and writes in flight fail with
// ErrClosed.
func (s *conn) Close() error { return s.n.close() }

// Read returns a future of one read into buf: the byte count, io.EOF at the
// end of the stream (after the peer's CloseWrite or Close). buf belongs to
// the future until it completes or is cancelled.
//
// The future is the connection's: once it has completed or been
// cancelled, the next Read reuses it, so a task reading in a loop
// allocates nothing per read. Do not keep it, or poll it, past its
// completion (which panics with future.ErrPolledAfterCompletion until the
// next Read takes it over). The same holds for Write, WriteAll and
// ReadPooled, each for its own kind.
func (s *conn) Read(buf []byte) *ReadFuture {
	f := s.read
	if s.pollingRead {
		f = new(ReadFuture) // PollRead's is in flight: a read of its own, not kept
	} else if f == nil || !f.f.done {
		f = new(ReadFuture)
		s.read = f
	}
	*f = ReadFuture{n: s.n, buf: buf}
	return f
}

// Write returns a future of one write of buf: it may be short; WriteAll
// writes everything.
func (s *conn) Write(buf []byte) *WriteFuture {
	f := s.write
	if s.pollingWrite {
		f = new(WriteFuture) // PollWrite's is in flight: a write of its own, not kept
	} else if f == nil || !f.f.done {
		f = new(WriteFuture)
		s.write = f
	}
	if !s.pollingWrite {
		s.pooledWrite = false // handed out: the caller's until its next Write
	}
	*f = WriteFuture{n: s.n, buf: buf}
	return f
}

// WriteAll returns a future that writes all of buf, in as many sends as it
// takes, and reports how many bytes were written before an error.
func (s *conn) WriteAll(buf []byte) *WriteAllFuture {
	f := s.writeAll
	if f == nil || !f.f.finished {
		f = new(WriteAllFuture)
		s.writeAll = f
	}
	*f = WriteAllFuture{n: s.n, p: unsafe.SliceData(buf), size: len(buf)}
	return f
}

// Split gives the read and the write side to two owners (two tasks): each
// half is a view of the same stream. Closing the write half shuts down the
// stream's sending side; the connection is closed when both halves are.
func (s *conn) Split() (*ReadHalf, *WriteHalf) {
	sh := &splitState{s: s}
	sh.open.Store(2)
	return &ReadHalf{sh: sh}, &WriteHalf{sh: sh}
}

// splitState counts the open halves of a split stream.
type splitState struct {
	s    *conn
	open atomic.Int32
}

func (sh *splitState) release() error {
	if sh.open.Add(-1) == 0 {
		return sh.s.Close()
	}
	return nil
}

// ReadHalf is the reading side of a split stream.
type ReadHalf struct {
	sh     *splitState
	closed bool
}

// Read is the stream's Read.
func (r *ReadHalf) Read(buf []byte) *ReadFuture { return r.sh.s.Read(buf) }

// Close releases the read half (and closes the stream if the write half
// was released already).
func (r *ReadHalf) Close() error {
	if r.closed {
		return r.sh.s.n.opError("close", ErrClosed)
	}
	r.closed = true
	return r.sh.release()
}

// WriteHalf is the writing side of a split stream.
type WriteHalf struct {
	sh     *splitState
	closed bool
}

// Write and WriteAll are the stream's.
func (w *WriteHalf) Write(buf []byte) *WriteFuture       { return w.sh.s.Write(buf) }
func (w *WriteHalf) WriteAll(buf []byte) *WriteAllFuture { return w.sh.s.WriteAll(buf) }

// Close shuts down the sending side (the peer reads end of stream) and
// releases the write half.
func (w *WriteHalf) Close() error {
	if w.closed {
		return w.sh.s.n.opError("close", ErrClosed)
	}
	w.closed = true
	err := w.sh.s.CloseWrite()
	if rerr := w.sh.release(); err == nil {
		err = rerr
	}
	return err
}

// ReadFuture is the future of a read: its pointer is a
// future.Future[future.Result[int]] and a future.Canceler.
type ReadFuture struct {
	_   noCopy
	n   *netFD
	buf []byte
	f   ioFuture // f.fast: the first attempt takes the backend's fast path
}

// Poll reads. Completing consumes a unit of the task's budget; with
// none left, Poll yields instead (see the future package, "The
// cooperative budget").
func (r *ReadFuture) Poll(cx *future.Context) (future.Result[int], bool) {
	r.f.checkPoll()
	if !cx.Proceed() {
		return future.Result[int]{}, false
	}
	v, ok := r.poll(cx)
	if ok {
		cx.Spend()
	}
	return v, ok
}

// poll is Poll past the budget check.
func (r *ReadFuture) poll(cx *future.Context) (future.Result[int], bool) {
	r.f.checkPoll()
	if !r.f.submitted {
		if len(r.buf) == 0 {
			r.f.done = true
			return future.Ok(0), true
		}
		if r.n.hint(fdReadShut) {
			// After CloseRead every platform reads end of stream (Windows'
			// own answer would be WSAESHUTDOWN).
			r.f.done = true
			return future.Result[int]{Err: io.EOF}, true
		}
		data, _, _, pending, err := r.f.start(cx, r.n, &r.n.rd)
		if pending {
			return future.Result[int]{}, false
		}
		if err != nil {
			r.f.done = true
			return future.Fail[int](r.n.opError("read", err)), true
		}
		if data == nil {
			// A cancelled pooled read's armed receive: wait for it, or
			// take what it got.
			var eof, pending bool
			data, eof, pending, err = r.n.takeArmed(cx)
			switch {
			case pending:
				r.f.release()
				r.f.done = false
				return future.Result[int]{}, false
			case err != nil:
				r.f.release()
				return future.Fail[int](r.n.opError("read", err)), true
			case eof:
				r.f.release()
				return future.Result[int]{Err: io.EOF}, true
			}
		}
		if data != nil {
			// A cancelled read's data, or the rest of it: deliver it first.
			n := copy(r.buf, data)
			r.f.keep(data[n:])
			r.f.release()
			return future.Ok(n), true
		}
		if n, done, err := r.n.tryRecv(r.buf, r.f.fast); done {
			r.f.release()
			switch {
			case err != nil:
				return future.Fail[int](r.n.opError("read", err)), true
			case n == 0:
				return future.Result[int]{Err: io.EOF}, true
			}
			return future.Ok(n), true
		}
		// PollFirst: no data was found (the fast path failed, or the stream
		// is not hot and data is not expected), so the kernel need not try
		// before it waits.
		op := backend.Op{Kind: backend.KindRecv, FD: r.n.fd, Flags: backend.PollFirst, Buf: r.buf, Timeout: r.n.readTimeout()}
		if err := r.f.submit(cx, r.n, op); err != nil {
			r.f.done = true
			return future.Fail[int](r.n.opError("read", err)), true
		}
	}
	c, ok := r.f.wait(cx)
	if !ok {
		return future.Result[int]{}, false
	}
	switch {
	case c.Err != nil:
		return future.Fail[int](r.n.opError("read", c.Err)), true
	case c.N == 0:
		return future.Result[int]{Err: io.EOF}, true
	}
	if c.N == len(r.buf) && c.N >= hotReadSize {
		r.n.setHint(fdReadHot, true) // a large buffer filled: a bulk transfer, more is likely waiting
	}
	return future.Ok(c.N), true
}

// Cancel abandons the read. Until the kernel has acknowledged the cancel
// it may still receive into buf, and data it received is not lost: the
// next read on the stream delivers it. So buf stays the stream's until the
// next read completes: give that read the same buffer or leave buf alone.
func (r *ReadFuture) Cancel() { r.f.cancel() }

// WriteFuture is the future of one write.
type WriteFuture struct {
	_   noCopy
	n   *netFD
	buf []byte
	f   ioFuture
}

// Poll writes. Completing consumes a unit of the task's budget; with
// none left, Poll yields instead (see the future package, "The
// cooperative budget").
func (w *WriteFuture) Poll(cx *future.Context) (future.Result[int], bool) {
	w.f.checkPoll()
	if !cx.Proceed() {
		return future.Result[int]{}, false
	}
	v, ok := w.poll(cx)
	if ok {
		cx.Spend()
	}
	return v, ok
}

// poll is Poll past the budget check.
func (w *WriteFuture) poll(cx *future.Context) (future.Result[int], bool) {
	w.f.checkPoll()
	if !w.f.submitted {
		if len(w.buf) == 0 {
			w.f.done = true
			return future.Ok(0), true
		}
		_, _, _, pending, err := w.f.start(cx, w.n, w.n.writeSlot())
		if pending {
			return future.Result[int]{}, false
		}
		if err == nil {
			if w.f.tried { // PollWrite's send found the socket full just now
				w.f.tried = false
			} else if n, done, serr := w.n.trySend(w.buf, w.f.fast); done {
				w.f.release()
				if serr != nil {
					return future.Fail[int](w.n.opError("write", serr)), true
				}
				return future.Ok(n), true
			}
			op := backend.Op{Kind: backend.KindSend, FD: w.n.fd, Buf: w.buf, Timeout: w.n.writeTimeout()}
			err = w.f.submit(cx, w.n, op)
		}
		if err != nil {
			w.f.done = true
			return future.Fail[int](w.n.opError("write", err)), true
		}
	}
	c, ok := w.f.wait(cx)
	if !ok {
		return future.Result[int]{}, false
	}
	if c.Err != nil {
		return future.Fail[int](w.n.opError("write", c.Err)), true
	}
	return future.Ok(c.N), true
}

// Cancel abandons the write; some of buf may have been sent.
func (w *WriteFuture) Cancel() { w.f.cancel() }

// WriteAllFuture is the future of WriteAll.
type WriteAllFuture struct {
	_ noCopy
	n *netFD
	// p and size are the buffer: a pointer and a length rather than a
	// slice, so that the future is 48 bytes, a size class (a server makes
	// one for every response).
	p             *byte
	size, written int
	f             ioFuture
	// f.finished: the write completed, failed or was cancelled.
}

// rest returns the part of the buffer not written yet.
func (w *WriteAllFuture) rest() []byte { return unsafe.Slice(w.p, w.size)[w.written:] }

// Poll writes until buf is sent or an error; the result is the byte count,
// with the error if any. Completing consumes a unit of the task's budget;
// with none left, Poll yields instead (see the future package, "The
// cooperative budget").
func (w *WriteAllFuture) Poll(cx *future.Context) (future.Result[int], bool) {
	if w.f.finished {
		panic(future.ErrPolledAfterCompletion)
	}
	if !cx.Proceed() {
		return future.Result[int]{}, false
	}
	v, ok := w.poll(cx)
	if ok {
		cx.Spend()
	}
	return v, ok
}

// poll is Poll past the budget check.
func (w *WriteAllFuture) poll(cx *future.Context) (future.Result[int], bool) {
	if w.f.finished {
		panic(future.ErrPolledAfterCompletion)
	}
	for w.written < w.size {
		if !w.f.submitted {
			_, _, _, pending, err := w.f.start(cx, w.n, w.n.writeSlot())
			if pending {
				return future.Result[int]{}, false
			}
			if err == nil {
				if n, done, serr := w.n.trySend(w.rest(), false); done {
					w.f.release()
					w.f = ioFuture{}
					if serr != nil {
						w.f.finished = true
						return future.Result[int]{Value: w.written, Err: w.n.opError("write", serr)}, true
					}
					if n == 0 {
						return w.shortWrite()
					}
					w.written += n
					continue
				}
				op := backend.Op{Kind: backend.KindSend, FD: w.n.fd, Buf: w.rest(), Timeout: w.n.writeTimeout()}
				err = w.f.submit(cx, w.n, op)
			}
			if err != nil {
				w.f.finished = true
				return future.Result[int]{Value: w.written, Err: w.n.opError("write", err)}, true
			}
		}
		c, ok := w.f.wait(cx)
		if !ok {
			return future.Result[int]{}, false
		}
		if c.Err != nil {
			w.f.finished = true
			return future.Result[int]{Value: w.written, Err: w.n.opError("write", c.Err)}, true
		}
		w.f = ioFuture{}
		if c.N == 0 {
			return w.shortWrite()
		}
		w.written += c.N
	}
	w.f.finished = true
	return future.Ok(w.written), true
}

// shortWrite ends a WriteAll whose send moved nothing and reported no error
// (the kernel's answer for no progress): io.ErrShortWrite, as io.Writer's
// contract has it, rather than trying the same send forever.
func (w *WriteAllFuture) shortWrite() (future.Result[int], bool) {
	w.f.finished = true
	return future.Result[int]{Value: w.written, Err: w.n.opError("write", io.ErrShortWrite)}, true
}

// Cancel abandons the rest of the write.
func (w *WriteAllFuture) Cancel() {
	w.f.cancel()
	w.f.finished = true
}
