package websocket

import (
	"bytes"
	"context"
	"io"
	"unsafe"

	"github.com/blitz-go/blitz/future"
)

// MessageReader reads one message's payload as it arrives; see
// NextReader. It is an io.Reader.
type MessageReader struct {
	c   *Conn
	ctx context.Context
	// whole is the message's payload when it came whole (in one buffer,
	// or inflated); off is how much of it was read.
	whole []byte
	off   int
	// done is set at the message's end, err at a failure: each is
	// returned from then on.
	done bool
	err  error
}

// NextReader waits for the next data message on the calling goroutine and
// returns its type and a reader of its payload: pings are answered and
// pongs dropped on the way, as by Read. An uncompressed message is handed
// out as it arrives, fragment by fragment, however large (within
// Options.ReadLimit, which counts its fragments); a compressed message
// (permessage-deflate) is inflated whole before its first byte is read.
// Text is checked to be UTF-8 as it arrives: a read of invalid text
// fails, and so does the connection (1007). The reader's Read returns
// io.EOF at the message's end.
//
// ctx bounds the wait for the message and every Read of the reader. A
// later read of the connection (NextReader, Read, ReadMessage) discards
// what the reader left of its message, and the reader then returns
// io.EOF. The user's close (Close, CloseNow, from any goroutine) ends a
// reader inside its message: its next Read fails with ErrClosed; a
// message that had arrived whole is the reader's own and reads to its
// end. One reader at a time, as for Read.
func (c *Conn) NextReader(ctx context.Context) (MessageType, *MessageReader, error) {
	r := &MessageReader{c: c, ctx: ctx}
	f := &partFuture{c: c, r: r}
	typ, err := block(ctx, c, future.Future[future.Result[MessageType]](f))
	if err != nil {
		return 0, nil, err
	}
	return typ, r, nil
}

// Read reads the message's payload into p; see NextReader.
func (r *MessageReader) Read(p []byte) (int, error) {
	switch {
	case r.err != nil:
		return 0, r.err
	case r.whole != nil || r.done:
		if r.off == len(r.whole) {
			return 0, io.EOF
		}
		n := copy(p, r.whole[r.off:])
		r.off += n
		return n, nil
	case len(p) == 0:
		return 0, nil
	}
	f := &partFuture{c: r.c, r: r, dst: p, forRead: true}
	v, err := block(r.ctx, r.c, future.Future[future.Result[MessageType]](f))
	if err != nil {
		r.err = err
		return 0, err
	}
	n := int(v) // a Read's result is the bytes copied
	if n == 0 && r.done {
		return 0, io.EOF
	}
	return n, nil
}

// partFuture runs the parser for a MessageReader: NextReader's (forRead
// false) takes the reader role and waits for a message to begin, a Read's
// (forRead true) copies the next part of the payload into dst. Its
// result is the message's type for the first, the bytes copied for a
// Read.
type partFuture struct {
	c       *Conn
	r       *MessageReader
	dst     []byte
	forRead bool
	// took says the future holds the reader role: NextReader's took it
	// (takeReader), a Read's took back the role its reader left.
	took bool
}

// Poll parses on; see partFuture.
func (f *partFuture) Poll(cx *future.Context) (future.Result[MessageType], bool) {
	c, r := f.c, f.r
	if !f.took {
		if f.forRead {
			if err := c.resumeReader(r); err != nil {
				r.done = true
				return future.Fail[MessageType](err), true
			}
		} else if !c.takeReader() {
			return future.Fail[MessageType](ErrClosed), true
		}
		f.took = true
	}
	if !f.forRead && !c.discardPart(cx, true) {
		return future.Result[MessageType]{}, false
	}
	m, n, err, ok := c.pollPart(cx, f.dst)
	if !ok {
		return future.Result[MessageType]{}, false
	}
	rs := c.rs
	switch {
	case err != nil:
		rs.reader = nil
		c.failRead()
		return future.Fail[MessageType](err), true
	case rs.partEnd:
		rs.partEnd, rs.reader = false, nil
		r.done = true
		c.releaseRead()
	case rs.msgOp == 0:
		// The message came whole. A payload in the runtime's pooled read
		// buffer is copied: a close from another goroutine gives that
		// buffer back (another connection reads into it next) while the
		// reader may still read. Any other buffer stays the connection's
		// until its next read.
		r.whole, r.done = m.Data, true
		if rs.inPool() && rs.holds(r.whole) {
			r.whole = bytes.Clone(r.whole)
		}
		if r.whole == nil {
			r.whole = []byte{}
		}
		c.releaseRead()
		if f.forRead {
			n = copy(f.dst, r.whole)
			r.off = n
		}
	default:
		rs.reader = r // the parser is inside its message: the role stays held
		c.leaveRead()
	}
	if !f.forRead {
		return future.Ok(m.Type), true
	}
	return future.Result[MessageType]{Value: MessageType(n)}, true
}

// Cancel abandons the wait, and the I/O in flight: NextReader's gives the
// reader role back (or leaves it to the message it took over and has not
// yet discarded), a Read's inside its message leaves the role to its
// reader (the next read of the connection discards the rest).
func (f *partFuture) Cancel() {
	if f.took {
		f.c.abandonRead()
	}
}

// resumeReader takes back the reader role that r left inside its message
// (leaveRead), for r's next Read. It fails with io.EOF if a later read of
// the connection took the message over (and discarded it), and with
// ErrClosed if the connection's close did.
func (c *Conn) resumeReader(r *MessageReader) error {
	if !c.reading.CompareAndSwap(readLeft, readHeld) { // acquire: pairs with leaveRead
		if c.closing() {
			return ErrClosed
		}
		return io.EOF
	}
	if c.rs == nil || c.rs.reader != r { // taken over: the rest is being skipped
		c.leaveRead()
		if c.closing() {
			return ErrClosed
		}
		return io.EOF
	}
	return nil
}

// pollPart runs the parser in parts mode: an uncompressed data message's
// payload goes into dst (n bytes this time) instead of being gathered.
// Called by the holder of reading.
func (c *Conn) pollPart(cx *future.Context, dst []byte) (m Message, n int, err error, ok bool) {
	rs := c.state() // not given back while part is set (putStateIdle)
	rs.part, rs.dst, rs.dn, rs.partEnd = true, dst, 0, false
	m, err, ok = c.pollRead(cx)
	n = rs.dn
	rs.part, rs.dst, rs.dn = false, nil, 0
	return m, n, err, ok
}

// takeReader takes the reader role for a new read, from a MessageReader
// that left its message unfinished if there is one (the next poll
// discards the rest: discardPart); false when the connection is closing
// or closed. A second concurrent reader panics. Called by a read's first
// poll.
func (c *Conn) takeReader() bool {
	if c.reading.CompareAndSwap(readLeft, readHeld) { // acquire: pairs with leaveRead
		return true // left by the unfinished MessageReader: taken over
	}
	if c.reading.CompareAndSwap(readFree, readHeld) { // acquire: pairs with releaseRead
		return true
	}
	if !c.closing() {
		panic(errConcurrentRead)
	}
	return false
}

// discardPart skips the rest of the message that a MessageReader left
// unfinished; true once nothing is left to skip. The old reader is
// orphaned at once, before anything is skipped, so that a skip cut short
// (its read cancelled) never lets it read on past a hole. endOld says the
// caller is the connection's next read, which by the reader's contract
// comes after the old reader's last Read: the old reader is then ended
// through its own fields (its Read returns io.EOF). A close, which may
// run beside the old reader's goroutine, passes false: the reader finds
// out at its next Read (resumeReader). Called by the holder of reading.
func (c *Conn) discardPart(cx *future.Context, endOld bool) bool {
	rs := c.rs
	if rs == nil || rs.reader == nil {
		return true
	}
	if old := rs.reader; old != orphaned {
		if endOld {
			old.done, old.whole = true, nil
		}
		rs.reader = orphaned
	}
	var scratch [512]byte
	for {
		_, _, err, ok := c.pollPart(cx, scratch[:])
		if !ok {
			return false
		}
		if err != nil || rs.partEnd || rs.msgOp == 0 {
			rs.partEnd = false
			rs.reader = nil
			if err != nil {
				rs.readErr = err // the read that discards fails with it too
			}
			return true
		}
	}
}

// orphaned stands in readState.reader for a message whose reader was
// ended without a word (see discardPart): the message is still skipped
// to its end, and no reader's fields are written.
var orphaned = new(MessageReader)

// holds says data lies in the read buffer. Called by the holder of
// reading.
func (rs *readState) holds(data []byte) bool {
	if len(data) == 0 || cap(rs.rbuf) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(rs.rbuf[:1])))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	return p >= lo && p < lo+uintptr(cap(rs.rbuf))
}
