package blitz

// The stream interfaces and their implementations by the runtime's byte
// streams; see "Streams" in the package documentation.

import (
	"sync"

	"github.com/blitz-go/blitz/future"
)

// AsyncReader is a stream of bytes read by polling, the async io.Reader:
// TCP and Unix streams and their read halves, files, a child's stdout and
// stderr, BufReader, and FromIOReader's adapter implement it. The helpers
// of this file (Read, ReadFull, ReadToEnd, Copy, NewBufReader) work on any
// AsyncReader.
//
// PollRead reads into buf, as io.Reader's Read does: ready with the count
// of bytes read (at least 1 when len(buf) > 0), or with 0 and io.EOF at the
// end of the stream, or with an error. Not ready means the read is in
// flight and cx's waker will be woken: the next PollRead continues that
// read, into the buffer of the call that started it, so pass the same
// buffer again; it belongs to the reader until a PollRead returns ready or
// CancelRead returns.
//
// CancelRead abandons the read in flight, if any (it does nothing
// otherwise). What the source already gave up is not lost: the next read
// returns it. One task reads at a time; an AsyncReader is not safe for
// concurrent reads.
type AsyncReader interface {
	PollRead(cx *future.Context, buf []byte) (future.Result[int], bool)
	CancelRead()
}

// AsyncWriter is a sink of bytes written by polling, the async io.Writer:
// TCP and Unix streams and their write halves, files, a child's stdin,
// BufWriter, and FromIOWriter's adapter implement it.
//
// PollWrite writes from buf: ready with the count written, which may be
// short (at least 1 when len(buf) > 0 and there is no error; WriteAll
// writes everything). Not ready means the write is in flight: the next
// PollWrite continues it, with the buffer of the call that started it,
// which belongs to the writer until a PollWrite returns ready or
// CancelWrite returns. CancelWrite abandons the write in flight; some of
// its bytes may have been written. One task writes at a time.
type AsyncWriter interface {
	PollWrite(cx *future.Context, buf []byte) (future.Result[int], bool)
	CancelWrite()
}

// AsyncFlusher is an AsyncWriter that holds bytes back (BufWriter): Copy
// and the io adapters flush it when they are done with it.
type AsyncFlusher interface {
	PollFlush(cx *future.Context) (future.Result[struct{}], bool)
}

// Compile-time checks: the runtime's streams are AsyncReaders and
// AsyncWriters.
var (
	_ AsyncReader = (*TCPStream)(nil)
	_ AsyncWriter = (*TCPStream)(nil)
	_ AsyncReader = (*UnixStream)(nil)
	_ AsyncWriter = (*UnixStream)(nil)
	_ AsyncReader = (*ReadHalf)(nil)
	_ AsyncWriter = (*WriteHalf)(nil)
	_ AsyncReader = (*File)(nil)
	_ AsyncWriter = (*File)(nil)
	_ AsyncReader = (*ChildOutput)(nil)
	_ AsyncWriter = (*ChildStdin)(nil)
)

// PollRead reads from the stream; see AsyncReader. It runs on the
// stream's reused ReadFuture (see Read), pollingRead marking it in flight.
func (s *conn) PollRead(cx *future.Context, buf []byte) (future.Result[int], bool) {
	if !s.pollingRead {
		s.Read(buf)
		s.pollingRead = true
	}
	r, ok := s.read.Poll(cx)
	if ok {
		// Drop the caller's buffer from the finished read (the stream keeps
		// the future as its spare): an idle stream must not keep the last
		// buffer alive.
		s.read.buf = nil
		s.pollingRead = false
	}
	return r, ok
}

// CancelRead abandons a PollRead or a PollReadPooled in flight; see
// AsyncReader.
func (s *conn) CancelRead() {
	if s.pollingRead {
		s.read.Cancel() // an op in flight keeps the buffer reachable itself
		s.read.buf = nil
		s.pollingRead = false
	}
	if s.pollingPooled {
		if s.readPooled == nil {
			s.unparkPooled()
		}
		s.readPooled.Cancel() // what it received goes to the next read
		s.pollingPooled = false
		// Kept by the stream, not pooled: a cancelled op may linger in
		// the read slot with the future as its owner.
		s.pooledRead = false
	}
}

// PollWrite writes to the stream; see AsyncWriter. Where the backend has
// a fast path (epoll, kqueue, poll) and no op holds the write slot, it
// first sends without a future; otherwise, or when the socket takes
// nothing, it runs on a WriteFuture, pollingWrite marking it in flight:
// the stream's spare if Write made one (see Write), else one from
// pollWrites, given back when the write completes. So a connection whose
// writes go out at once (an HTTP or WebSocket server's, as a rule) neither
// claims an op record nor keeps a WriteFuture while it waits for its next
// request.
func (s *conn) PollWrite(cx *future.Context, buf []byte) (future.Result[int], bool) {
	if !s.pollingWrite {
		tried := false
		if len(buf) > 0 && s.n.wr.idle() && !s.n.ring.Driver().Native() {
			if !cx.Proceed() {
				return future.Result[int]{}, false // yielded: the next call starts over
			}
			n, done, err := s.n.trySend(buf, false)
			if done {
				cx.Spend()
				if err != nil {
					return future.Fail[int](s.n.opError("write", err)), true
				}
				return future.Ok(n), true
			}
			tried = true
		}
		if s.write == nil {
			f := pollWrites.Get().(*WriteFuture)
			*f = WriteFuture{n: s.n, buf: buf}
			s.write, s.pooledWrite = f, true
		} else {
			s.Write(buf)
		}
		s.write.f.tried = tried
		s.pollingWrite = true
	}
	r, ok := s.write.Poll(cx)
	if ok {
		s.write.buf = nil
		s.pollingWrite = false
		if s.pooledWrite { // completed: its op record is released, nobody else has it
			pollWrites.Put(s.write)
			s.write, s.pooledWrite = nil, false
		}
	}
	return r, ok
}

// pollWrites holds the WriteFutures that PollWrite takes for a stream that
// has none (one that never called Write) and gives back when the write
// completes: so a stream that waits for its next request between writes
// (an HTTP or WebSocket server's) keeps none, on backends without a fast
// path (io_uring) too, and a loop of writes still allocates nothing.
var pollWrites = sync.Pool{New: func() any { return new(WriteFuture) }}

// CancelWrite abandons a PollWrite in flight; see AsyncWriter.
func (s *conn) CancelWrite() {
	if s.pollingWrite {
		s.write.Cancel()
		s.write.buf = nil
		s.pollingWrite = false
		if s.pooledWrite { // its op may linger in the slot: left to the GC, not reused
			s.write, s.pooledWrite = nil, false
		}
	}
}

// PollRead and CancelRead are the stream's; see AsyncReader.
func (r *ReadHalf) PollRead(cx *future.Context, buf []byte) (future.Result[int], bool) {
	return r.sh.s.PollRead(cx, buf)
}
func (r *ReadHalf) CancelRead() { r.sh.s.CancelRead() }

// PollWrite and CancelWrite are the stream's; see AsyncWriter.
func (w *WriteHalf) PollWrite(cx *future.Context, buf []byte) (future.Result[int], bool) {
	return w.sh.s.PollWrite(cx, buf)
}
func (w *WriteHalf) CancelWrite() { w.sh.s.CancelWrite() }

// filePoll is the state of a File's PollRead and PollWrite: the operation
// in flight of each. Owned by the one task reading and the one writing.
type filePoll struct {
	rd, wr *FileIOFuture
}

// PollRead reads at the file position (File.Read); see AsyncReader.
func (f *File) PollRead(cx *future.Context, buf []byte) (future.Result[int], bool) {
	if f.poll.rd == nil {
		f.poll.rd = f.Read(buf)
	}
	return pollStreamOp(cx, &f.poll.rd)
}

// CancelRead abandons a PollRead in flight; see AsyncReader and
// FileIOFuture.Cancel.
func (f *File) CancelRead() { cancelStreamOp(&f.poll.rd) }

// PollWrite writes at the file position (File.Write, which writes all of
// buf or fails); see AsyncWriter.
func (f *File) PollWrite(cx *future.Context, buf []byte) (future.Result[int], bool) {
	if f.poll.wr == nil {
		f.poll.wr = f.Write(buf)
	}
	return pollStreamOp(cx, &f.poll.wr)
}

// CancelWrite abandons a PollWrite in flight; see AsyncWriter.
func (f *File) CancelWrite() { cancelStreamOp(&f.poll.wr) }

// streamOp is the future of one read or write of a PollRead or PollWrite
// kept between polls: *FileIOFuture, *PipeReadFuture, *PipeWriteFuture.
type streamOp interface {
	comparable
	Poll(cx *future.Context) (future.Result[int], bool)
	Cancel()
}

// pollStreamOp polls *op, clearing it once it is ready.
func pollStreamOp[F streamOp](cx *future.Context, op *F) (future.Result[int], bool) {
	r, ok := (*op).Poll(cx)
	if ok {
		var none F
		*op = none
	}
	return r, ok
}

// cancelStreamOp cancels *op, if any, and clears it.
func cancelStreamOp[F streamOp](op *F) {
	var none F
	if *op != none {
		(*op).Cancel()
		*op = none
	}
}

// PollRead reads the child's output; see AsyncReader. A cancelled read
// loses nothing (see ChildOutput).
func (o *poolReader) PollRead(cx *future.Context, buf []byte) (future.Result[int], bool) {
	if o.prd == nil {
		o.prd = o.Read(buf)
	}
	return pollStreamOp(cx, &o.prd)
}

// CancelRead abandons a PollRead in flight; see AsyncReader.
func (o *poolReader) CancelRead() { cancelStreamOp(&o.prd) }

// PollWrite writes all of buf to the child's input (ChildStdin.Write); see
// AsyncWriter.
func (s *poolWriter) PollWrite(cx *future.Context, buf []byte) (future.Result[int], bool) {
	if s.pwr == nil {
		s.pwr = s.Write(buf)
	}
	return pollStreamOp(cx, &s.pwr)
}

// CancelWrite abandons a PollWrite in flight: the write is still made, in
// order (see ChildStdin.Write).
func (s *poolWriter) CancelWrite() { cancelStreamOp(&s.pwr) }
