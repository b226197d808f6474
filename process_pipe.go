package blitz

// The pipes of a child's piped standard streams. Their reads and writes run
// on the blocking pool over the *os.File ends, on every platform (see
// "Processes" in the package documentation).

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/blitz-go/blitz/future"
)

// pipeChunk is how much a read of a child's output takes from the pipe at a
// time (Linux's pipe buffer is 64 KiB).
const pipeChunk = 32 << 10

// ChildStdin is the writing end of a child's piped standard input. Its
// methods are safe for concurrent use; writes reach the pipe in the order
// of their first polls.
type ChildStdin struct {
	poolWriter
}

func newChildStdin(f *os.File, rt *Runtime) *ChildStdin {
	s := &ChildStdin{poolWriter{dst: f, closer: f, rt: rt, what: "write child stdin"}}
	s.cond.L = &s.mu
	return s
}

// poolWriter writes to an io.Writer on the blocking pool: ChildStdin's
// pipe, FromIOWriter's writer. Its methods are safe for concurrent use.
type poolWriter struct {
	dst    io.Writer
	closer io.Closer // closed by Close; nil if there is nothing to close
	rt     *Runtime  // whose pool writes when a goroutine polls (AsIOWriter)
	what   string    // the operation, for errors

	// mu guards the fields below; cond (on mu) signals a change of serving.
	// Writes are ordered by tickets: a write's first poll takes next, its
	// pool call waits until serving reaches it and advances serving when it
	// is done, so that a cancelled write still running and the write after
	// it cannot overtake each other.
	mu      sync.Mutex
	cond    sync.Cond
	next    uint64
	serving uint64
	skipped map[uint64]bool // tickets whose call the pool refused
	closing bool            // Close was called: no new write
	closed  bool            // f is closed (by Close or by the last write after it)

	// pwr is the write of PollWrite in flight, owned by the writing task.
	pwr *PipeWriteFuture
}

// Write returns a future that writes all of b to the child's input and
// resolves to the byte count (less than len(b) only with an error). b is
// copied: the caller may reuse it at once. A write whose future is
// cancelled may still be made, in order (the pool call cannot be stopped);
// a write after Close fails with an error matching os.ErrClosed.
func (s *poolWriter) Write(b []byte) *PipeWriteFuture {
	return &PipeWriteFuture{s: s, buf: bytes.Clone(b)}
}

// Close closes the child's input, once the writes already started are done
// (a write in flight is not cut off). Closing twice is not an error.
func (s *poolWriter) Close() error {
	s.mu.Lock()
	s.closing = true
	now := s.closeReadyLocked()
	s.mu.Unlock()
	if now && s.closer != nil {
		return s.closer.Close()
	}
	return nil
}

// closeReadyLocked reports whether f must be closed now (Close was called
// and no write is pending), marking it closed. s.mu must be held.
func (s *poolWriter) closeReadyLocked() bool {
	if s.closing && !s.closed && s.serving == s.next {
		s.closed = true
		return true
	}
	return false
}

// ticket takes the next write's turn; false after Close.
func (s *poolWriter) ticket() (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return 0, false
	}
	t := s.next
	s.next++
	return t, true
}

// advanceLocked ends turn serving and skips refused turns after it. s.mu
// must be held.
func (s *poolWriter) advanceLocked() {
	s.serving++
	for s.skipped[s.serving] {
		delete(s.skipped, s.serving)
		s.serving++
	}
	s.cond.Broadcast()
}

// finishTurn ends turn t (the current one), closing f if Close is waiting
// for it.
func (s *poolWriter) finishTurn() {
	s.mu.Lock()
	s.advanceLocked()
	now := s.closeReadyLocked()
	s.mu.Unlock()
	if now && s.closer != nil {
		_ = s.closer.Close()
	}
}

// skip gives turn t up without writing: its pool call was refused.
func (s *poolWriter) skip(t uint64) {
	s.mu.Lock()
	if s.serving != t {
		if s.skipped == nil {
			s.skipped = make(map[uint64]bool)
		}
		s.skipped[t] = true
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.finishTurn()
}

// write waits for turn t and writes b. Runs on the blocking pool.
func (s *poolWriter) write(t uint64, b []byte) (int, error) {
	s.mu.Lock()
	for s.serving != t {
		s.cond.Wait()
	}
	s.mu.Unlock()
	n, err := s.dst.Write(b)
	s.finishTurn()
	if err != nil {
		return n, fmt.Errorf("blitz: %s: %w", s.what, err)
	}
	return n, nil
}

// PipeWriteFuture is the future of ChildStdin.Write: its pointer is a
// future.Future[future.Result[int]] and a future.Canceler.
type PipeWriteFuture struct {
	s    *poolWriter
	buf  []byte
	blk  *BlockingFuture[int]
	done bool
}

// Poll takes the write's turn and submits it at the first poll.
// Completing consumes a unit of the task's budget; with none left, Poll
// yields instead (see the future package, "The cooperative budget").
func (w *PipeWriteFuture) Poll(cx *future.Context) (future.Result[int], bool) {
	if w.done {
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
func (w *PipeWriteFuture) poll(cx *future.Context) (future.Result[int], bool) {
	if w.done {
		panic(future.ErrPolledAfterCompletion)
	}
	if w.blk == nil {
		t, ok := w.s.ticket()
		if !ok {
			w.done = true
			return future.Fail[int](fmt.Errorf("blitz: %s: %w", w.s.what, os.ErrClosed)), true
		}
		buf := w.buf
		w.buf = nil
		w.blk = blockingOn(w.s.rt, func() (int, error) { return w.s.write(t, buf) })
		if r, ok := w.blk.Poll(cx); ok {
			// Ready at the first poll: the pool refused the call.
			w.s.skip(t)
			w.done = true
			return r, true
		}
		return future.Result[int]{}, false
	}
	r, ok := w.blk.Poll(cx)
	if ok {
		w.done = true
	}
	return r, ok
}

// Cancel abandons the write; if its pool call was accepted it still runs,
// in its turn, and its count is dropped.
func (w *PipeWriteFuture) Cancel() {
	if w.blk != nil {
		w.blk.Cancel()
	}
	w.done = true
}

// ChildOutput is the reading end of a child's piped standard output or
// error. Its methods are safe for concurrent use.
//
// Data is never lost to a cancellation: the pool call reads into the
// ChildOutput's own buffer, and the future that completes copies from it,
// so what a cancelled read took from the pipe waits there for the next
// read. The pipe is closed at end of stream, or by Close.
type ChildOutput struct {
	poolReader
}

func newChildOutput(f *os.File, name string, rt *Runtime) *ChildOutput {
	return &ChildOutput{poolReader{src: f, closer: f, rt: rt, what: "read child " + name}}
}

// poolReader reads from an io.Reader on the blocking pool: ChildOutput's
// pipe, FromIOReader's reader. Its methods are safe for concurrent use.
type poolReader struct {
	src    io.Reader
	closer io.Closer // closed at the end of stream or by Close; may be nil
	rt     *Runtime  // whose pool reads when a goroutine polls (AsIOReader)
	what   string    // the operation, for errors

	// rmu is held by a pool call across its read and the append of what it
	// read, so that pending stays in pipe order; scratch is the read
	// buffer, used under rmu only.
	rmu     sync.Mutex
	scratch []byte

	// mu guards the fields below, shared by the pool calls and the futures.
	mu      sync.Mutex
	pending []byte // read from the pipe, not yet returned
	err     error  // the pipe's end (io.EOF) or failure, returned after pending
	closed  bool   // f is closed

	// prd is the read of PollRead in flight, owned by the reading task.
	prd *PipeReadFuture
}

// Read returns a future that reads up to len(buf) bytes into buf and
// resolves to the count; at end of stream the error is io.EOF. buf is
// written only by the future's Poll, never after Cancel returns.
func (o *poolReader) Read(buf []byte) *PipeReadFuture {
	return &PipeReadFuture{o: o, buf: buf}
}

// ReadAll returns a future that reads to the end of stream and resolves to
// everything read (io.EOF is not an error). If it is cancelled, its pool
// call reads on to the end and keeps the data for the next read.
func (o *poolReader) ReadAll() *PipeReadAllFuture {
	return &PipeReadAllFuture{o: o}
}

// Close closes the pipe: a read in flight fails (on Unix) and later reads
// fail with an error matching os.ErrClosed, after returning data already
// read. Closing twice, or after end of stream, is not an error.
func (o *poolReader) Close() error {
	o.mu.Lock()
	if o.err == nil {
		o.err = fmt.Errorf("blitz: %s: %w", o.what, os.ErrClosed)
	}
	if o.closed {
		o.mu.Unlock()
		return nil
	}
	o.closed = true
	o.mu.Unlock()
	if o.closer == nil {
		return nil
	}
	return o.closer.Close()
}

// take moves up to len(buf) pending bytes into buf, or returns the pipe's
// error; ok is false when there is neither.
func (o *poolReader) take(buf []byte) (n int, err error, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.pending) > 0 {
		n = copy(buf, o.pending)
		o.pending = o.pending[n:]
		if len(o.pending) == 0 {
			o.pending = nil
		}
		return n, nil, true
	}
	if o.err != nil {
		return 0, o.err, true
	}
	return 0, nil, false
}

// fill reads from the pipe into pending, once (all: to the end of
// stream), unless there is pending data or an error already. Runs on the
// blocking pool.
func (o *poolReader) fill(all bool) {
	o.rmu.Lock()
	defer o.rmu.Unlock()
	if o.scratch == nil {
		o.scratch = make([]byte, pipeChunk)
	}
	for {
		o.mu.Lock()
		stop := o.err != nil || (!all && len(o.pending) > 0)
		o.mu.Unlock()
		if stop {
			return
		}
		n, err := o.src.Read(o.scratch)
		o.mu.Lock()
		o.pending = append(o.pending, o.scratch[:n]...)
		closeNow := false
		if err != nil && o.err == nil {
			if errors.Is(err, io.EOF) {
				o.err = io.EOF
				closeNow = !o.closed
				o.closed = true
			} else {
				o.err = fmt.Errorf("blitz: %s: %w", o.what, err)
			}
		}
		o.mu.Unlock()
		if closeNow && o.closer != nil {
			_ = o.closer.Close()
		}
	}
}

// PipeReadFuture is the future of ChildOutput.Read: its pointer is a
// future.Future[future.Result[int]] and a future.Canceler.
type PipeReadFuture struct {
	o    *poolReader
	buf  []byte
	blk  *BlockingFuture[struct{}]
	done bool
}

// Poll returns pending data at once, else reads on the pool.
// Completing consumes a unit of the task's budget; with none left, Poll
// yields instead (see the future package, "The cooperative budget").
func (r *PipeReadFuture) Poll(cx *future.Context) (future.Result[int], bool) {
	if r.done {
		panic(future.ErrPolledAfterCompletion)
	}
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
func (r *PipeReadFuture) poll(cx *future.Context) (future.Result[int], bool) {
	if r.done {
		panic(future.ErrPolledAfterCompletion)
	}
	for {
		if r.blk != nil {
			res, ok := r.blk.Poll(cx)
			if !ok {
				return future.Result[int]{}, false
			}
			r.blk = nil
			if res.Err != nil {
				r.done = true
				return future.Fail[int](res.Err), true
			}
		}
		if len(r.buf) == 0 {
			r.done = true
			return future.Ok(0), true
		}
		if n, err, ok := r.o.take(r.buf); ok {
			r.done = true
			return future.Result[int]{Value: n, Err: err}, true
		}
		// Nothing pending (or another reader took what the last call
		// read): read again.
		r.blk = blockingOn(r.o.rt, func() (struct{}, error) { r.o.fill(false); return struct{}{}, nil })
	}
}

// Cancel abandons the read; what its pool call reads stays pending.
func (r *PipeReadFuture) Cancel() {
	if r.blk != nil {
		r.blk.Cancel()
	}
	r.done = true
}

// PipeReadAllFuture is the future of ChildOutput.ReadAll: its pointer is a
// future.Future[future.Result[[]byte]] and a future.Canceler.
type PipeReadAllFuture struct {
	o    *poolReader
	blk  *BlockingFuture[struct{}]
	done bool
}

// Poll reads to the end of stream on the pool, then takes everything.
func (r *PipeReadAllFuture) Poll(cx *future.Context) (future.Result[[]byte], bool) {
	if r.done {
		panic(future.ErrPolledAfterCompletion)
	}
	if r.blk == nil {
		r.blk = blockingOn(r.o.rt, func() (struct{}, error) { r.o.fill(true); return struct{}{}, nil })
	}
	res, ok := r.blk.Poll(cx)
	if !ok {
		return future.Result[[]byte]{}, false
	}
	r.done = true
	if res.Err != nil {
		return future.Fail[[]byte](res.Err), true
	}
	o := r.o
	o.mu.Lock()
	data, err := o.pending, o.err
	o.pending = nil
	o.mu.Unlock()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if data == nil {
		data = []byte{}
	}
	return future.Result[[]byte]{Value: data, Err: err}, true
}

// Cancel abandons the read; its pool call reads on to the end of stream
// and the data stays pending for the next read.
func (r *PipeReadAllFuture) Cancel() {
	if r.blk != nil {
		r.blk.Cancel()
	}
	r.done = true
}
