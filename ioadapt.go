package blitz

// Adapters between the async streams and io.Reader / io.Writer.

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/blitz-go/blitz/future"
)

// FromIOReader returns an AsyncReader over r for tasks: each read calls
// r.Read on the blocking pool of the runtime that polls it (so r may
// block, as a pipe, a terminal or a decompressor does). A cancelled read
// loses nothing: what its call read waits for the next read. Close closes
// r if it is an io.Closer.
func FromIOReader(r io.Reader) *AsyncIOReader {
	a := &AsyncIOReader{poolReader{src: r, what: "read"}}
	a.closer, _ = r.(io.Closer)
	return a
}

// AsyncIOReader is FromIOReader's reader: an AsyncReader with the Read,
// ReadAll and Close of a child's output.
type AsyncIOReader struct {
	poolReader
}

// FromIOWriter returns an AsyncWriter over w for tasks: each write calls
// w.Write on the blocking pool, with a copy of the bytes, so the caller's
// buffer is free as soon as the write is accepted; writes reach w in
// order, a cancelled one included (a call on the pool cannot be stopped).
// Close closes w, once the writes already started are done, if it is an
// io.Closer.
func FromIOWriter(w io.Writer) *AsyncIOWriter {
	a := &AsyncIOWriter{poolWriter{dst: w, what: "write"}}
	a.closer, _ = w.(io.Closer)
	a.cond.L = &a.mu
	return a
}

// AsyncIOWriter is FromIOWriter's writer: an AsyncWriter with the Write
// and Close of a child's input.
type AsyncIOWriter struct {
	poolWriter
}

// AsIOReader returns an io.Reader over r for goroutine code (a decoder, a
// scanner, an io.Copy): its Read polls r on the calling goroutine and
// waits for it, as NetConn does for sockets, so it must not be called from
// a task. When ctx is done, a Read in progress is cancelled (nothing is
// lost, see AsyncReader) and returns an error wrapping ctx's. Reads are
// serialized.
func AsIOReader(ctx context.Context, r AsyncReader) *IOReader {
	return &IOReader{ctx: ctx, r: r}
}

// IOReader is AsIOReader's io.Reader.
type IOReader struct {
	ctx context.Context
	r   AsyncReader
	mu  sync.Mutex // serializes Reads: the AsyncReader has one reader
	sw  signalWaker
}

// Read reads into p, waiting for at least one byte, the end of the stream
// (io.EOF) or an error.
func (a *IOReader) Read(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	res, err := waitPoll(a.ctx, &a.sw, func(cx *future.Context) (future.Result[int], bool) {
		return a.r.PollRead(cx, p)
	}, a.r.CancelRead)
	if err != nil {
		return 0, fmt.Errorf("blitz: read: %w", err)
	}
	return res.Value, res.Err
}

// AsIOWriter returns an io.Writer over w for goroutine code: its Write
// writes all of p, polling w on the calling goroutine (never from a task),
// and fails with an error wrapping ctx's when ctx is done (the write in
// flight cancelled, some of p maybe written). Writes are serialized. If w
// holds bytes back (a BufWriter), call Flush.
func AsIOWriter(ctx context.Context, w AsyncWriter) *IOWriter {
	return &IOWriter{ctx: ctx, w: w}
}

// IOWriter is AsIOWriter's io.Writer.
type IOWriter struct {
	ctx context.Context
	w   AsyncWriter
	mu  sync.Mutex // serializes Writes and Flushes: the AsyncWriter has one writer
	sw  signalWaker
}

// Write writes all of p, or returns how much it wrote with the error.
func (a *IOWriter) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	res, err := waitPoll(a.ctx, &a.sw, func(cx *future.Context) (future.Result[int], bool) {
		return writeAllPoll(cx, a.w, p, &n)
	}, a.w.CancelWrite)
	if err != nil {
		return n, fmt.Errorf("blitz: write: %w", err)
	}
	return res.Value, res.Err
}

// Flush flushes the writer if it holds bytes back (an AsyncFlusher); it
// does nothing otherwise.
func (a *IOWriter) Flush() error {
	fl, ok := a.w.(AsyncFlusher)
	if !ok {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	res, err := waitPoll(a.ctx, &a.sw, fl.PollFlush, a.w.CancelWrite)
	if err != nil {
		return fmt.Errorf("blitz: flush: %w", err)
	}
	return res.Err
}

// waitPoll polls poll on the calling goroutine until it is ready, waiting
// on sw between polls; when ctx is done first it calls cancel and returns
// ctx's error (its cause if it has one).
func waitPoll[T any](ctx context.Context, sw *signalWaker, poll func(*future.Context) (T, bool), cancel func()) (T, error) {
	cx := sw.context()
	for {
		if v, ok := poll(cx); ok {
			return v, nil
		}
		select {
		case <-sw.sig.Chan():
		case <-ctx.Done():
			cancel()
			var zero T
			return zero, context.Cause(ctx)
		}
	}
}
