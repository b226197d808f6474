package websocket

import (
	"context"
	"io"

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
// io.EOF. One reader at a time, as for Read.
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
	f := &partFuture{c: r.c, r: r, dst: p, started: true}
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

// partFuture runs the parser for a MessageReader: its first poll (started
// false) takes the reader role and waits for a message to begin, a later
// one (a Read) copies the next part of the payload into dst. Its result
// is the message's type for the first, the bytes copied for a Read.
type partFuture struct {
	c       *Conn
	r       *MessageReader
	dst     []byte
	started bool
	// begun says the first poll took the reader role.
	begun bool
}

// Poll parses on; see partFuture.
func (f *partFuture) Poll(cx *future.Context) (future.Result[MessageType], bool) {
	return f.poll(cx)
}

func (f *partFuture) poll(cx *future.Context) (future.Result[MessageType], bool) {
	c, r := f.c, f.r
	if !f.started && !f.begun {
		if !c.takeReader() {
			return future.Fail[MessageType](ErrClosed), true
		}
		f.begun = true
	}
	if !f.started {
		if !c.discardPart(cx) {
			return future.Result[MessageType]{}, false
		}
	}
	rs := c.state()
	rs.part, rs.dst, rs.dn, rs.partEnd = true, f.dst, 0, false
	m, err, ok := c.pollRead(cx)
	n := rs.dn
	rs.part, rs.dst, rs.dn = false, nil, 0
	if !ok {
		return future.Result[MessageType]{}, false
	}
	switch {
	case err != nil:
		rs.reader = nil
		c.pauseKeepAlive()
		if rs.draining {
			// Close skips what follows the protocol error.
		} else {
			c.dropPooled()
		}
		c.releaseRead()
		return future.Fail[MessageType](err), true
	case rs.partEnd:
		rs.partEnd, rs.reader = false, nil
		r.done = true
		c.releaseRead()
	case rs.msgOp == 0:
		// The message came whole: served from its buffer, valid until the
		// next read.
		r.whole, r.done = m.Data, true
		if r.whole == nil {
			r.whole = []byte{}
		}
		c.releaseRead()
		if f.started {
			n = copy(f.dst, r.whole)
			r.off = n
		}
	default:
		rs.reader = r // the parser is inside its message: the role stays held
	}
	if !f.started {
		return future.Ok(m.Type), true
	}
	return future.Result[MessageType]{Value: MessageType(n)}, true
}

// Cancel abandons the wait: the reader role is given back at once for a
// first poll, and kept by a Read inside its message (the next read of
// the connection discards the rest).
func (f *partFuture) Cancel() {
	c := f.c
	if !f.started && f.begun {
		if rs := c.rs; rs == nil || rs.reader == nil {
			c.cancelRead()
			c.pauseKeepAlive()
			c.releaseRead()
		}
	}
}

// takeReader takes the reader role for a new read, from a MessageReader
// that left its message unfinished if there is one (the next poll
// discards the rest: discardPart); false when the connection is closing
// or closed. A second concurrent reader panics. Called by a read's first
// poll.
func (c *Conn) takeReader() bool {
	if c.rs != nil && c.rs.reader != nil {
		return true // held by the unfinished MessageReader: taken over
	}
	if c.reading.CompareAndSwap(false, true) { // acquire: pairs with releaseRead
		return true
	}
	c.mu.Lock()
	closing := c.closeSent || c.tclosed
	c.mu.Unlock()
	if !closing {
		panic(errConcurrentRead)
	}
	return false
}

// discardPart skips the rest of the message that a MessageReader left
// unfinished, and ends that reader (io.EOF); true once nothing is left
// to skip. Called by the holder of reading.
func (c *Conn) discardPart(cx *future.Context) bool {
	rs := c.rs
	if rs == nil || rs.reader == nil {
		return true
	}
	var scratch [512]byte
	for {
		rs.part, rs.dst, rs.dn, rs.partEnd = true, scratch[:], 0, false
		_, err, ok := c.pollRead(cx)
		rs.part, rs.dst, rs.dn = false, nil, 0
		if !ok {
			return false
		}
		if err != nil || rs.partEnd || rs.msgOp == 0 {
			rs.partEnd = false
			old := rs.reader
			rs.reader = nil
			old.done, old.whole = true, nil
			if err != nil {
				old.err = err
				rs.readErr = err // the read that discards fails with it too
			}
			return true
		}
	}
}
