package websocket

// The connection: the reader's state machine, frame writes under the write
// lock, the close handshake.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// transport is what a Conn reads and writes: one of the runtime's streams,
// or a net.Conn behind netTransport.
type transport interface {
	blitz.AsyncReader
	blitz.AsyncWriter
	Close() error
}

// Defaults of Options.
const (
	DefaultReadLimit    = 32 << 20
	DefaultCloseTimeout = 5 * time.Second
	defaultBufferSize   = 4096
	// directWrite is the payload size above which a server writes a
	// frame's payload from the caller's buffer after its header, instead
	// of copying it after the header.
	directWrite = 2048
)

// Options tune a connection; the zero Options is valid.
type Options struct {
	// ReadLimit bounds the size of a received message (all its fragments);
	// a larger one fails the read with ErrMessageTooBig and closes the
	// connection with 1009. 0 means DefaultReadLimit; negative, no limit.
	ReadLimit int64
	// CloseTimeout bounds the wait for the peer's close frame after
	// sending one (Close). 0 means DefaultCloseTimeout.
	CloseTimeout time.Duration
	// ReadBufferSize is the size of the connection's read buffer: held
	// while there is input to parse and given back while the connection
	// waits, on the runtime's TCP and Unix streams; made at the first
	// read and kept on other transports (see "Memory" in the package
	// doc). 0 means 4096, and less than 64 means 64. A message larger than
	// it is gathered in a buffer of its own.
	ReadBufferSize int
	// KeepAlive is the keep-alive policy's interval: when a read has
	// waited that long since anything last arrived from the peer, the
	// reader sends a ping, and if nothing at all arrives (a pong, or any
	// other frame) within KeepAliveTimeout after it, the read fails with
	// an error wrapping ErrKeepAliveTimeout and os.ErrDeadlineExceeded and
	// the connection is closed, without a close handshake: a peer that
	// went away without a word is found out. The policy runs while a read
	// waits (ReadMessage, Read), which is the reader that sees the pong. 0
	// (the default) means no policy; less than a millisecond means a
	// millisecond.
	KeepAlive time.Duration
	// KeepAliveTimeout is how long after its ping the policy waits for the
	// peer; 0 means KeepAlive.
	KeepAliveTimeout time.Duration
}

// Message is a received data message. Data is the connection's buffer:
// valid until the next read of the connection, or until the connection is
// closed with Close or CloseNow.
type Message struct {
	Type MessageType
	Data []byte
}

// Conn is a WebSocket connection (after the opening handshake). Its
// futures (ReadMessage, WriteMessage, Ping, Close) are polled by tasks of
// the runtime; its blocking methods (Read, Write, CloseNow, ...) wait on
// the calling goroutine. One reader at a time (a ReadMessage or Read in
// progress); any number of writers, whose frames the write lock keeps
// whole and in order.
//
// A Conn made from a net.Conn (Upgrade on a net/http server, or
// NewNetConn) performs blocking I/O inside its futures: use only its
// blocking methods, from goroutines.
type Conn struct {
	// t is the transport; cfg the connection's settings, shared by the
	// connections that have the same (see connConfig). Read-only.
	t   transport
	cfg *connConfig
	// x holds what few connections have (see connExtra): for one with
	// permessage-deflate (hasZ), set before the connection is handed out
	// and kept; for one without, made at the first wait and dropped when
	// nobody waits, under mu. So a reader or writer that finds hasZ reads
	// x without the lock, and the waits of a connection without
	// permessage-deflate write it under the lock, which nobody reading
	// without it touches.
	x *connExtra

	// reading is the reader role (readFree, readHeld, readLeft): held by
	// the one reader, a ReadFuture or a MessageReader in progress, or a
	// CloseFuture reading the peer's close. rs and cs are the holder's
	// only. readLeft says a MessageReader left its message unfinished,
	// between two of its Reads, and keeps the role for it: its next Read
	// takes it back (resumeReader), or the connection's next read
	// (takeReader) or its close takes it over and skips the rest.
	reading atomic.Uint32 // CAS by a reader, pairs with the Store that releases or leaves it
	// wstate is the write lock (see writelock.go), held while a frame is
	// written. Beside reading, so that the two share a word.
	wstate atomic.Uint32
	// rs is the reader's state (see readState): given back to its pool
	// while a pooled read waits between messages, nil then. The pooled
	// read is the stream's own (PollReadPooled), kept by the stream.
	rs *readState
	rf ReadFuture

	// mu guards the close state below, and x's waiters (and x itself
	// without hasZ).
	mu        sync.Mutex
	closeSent bool
	closeRecv bool
	tclosed   bool
	// userClosed says the user closed the connection (Close, CloseNow):
	// a read that starts or goes on after it fails with ErrClosed.
	userClosed bool
	// hasZ says that x.z is the negotiated permessage-deflate. Set before
	// the connection is handed out; read-only.
	hasZ bool
	// kaOn says x.ka is made (see keepAliveState): x is then kept as it
	// is, and the reader reads it without the lock. The reader's.
	kaOn bool
}

// connExtra is what few connections hold, in a record of its own so that
// the others do not pay its words: the negotiated permessage-deflate
// (read-only once the connection is handed out; the deflateCtx's fields
// say who owns them) and the tasks that wait on the connection (see
// connWaiters; nil while none does, guarded by Conn.mu).
type connExtra struct {
	z       *compression
	waiters *connWaiters
	// ka is the keep-alive policy's state (Options.KeepAlive), made by the
	// reader at its first wait under Conn.mu and then kept, with x, for
	// the connection's life; its fields are the reader's.
	ka *keepAlive
}

// connWaiters are the tasks waiting on a Conn: write, the writers waiting
// for the write lock; close, the Closes waiting for the reader to see the
// peer's close (or to stop reading). Made at a connection's first wait
// and dropped when both lists are empty, so that an idle connection holds
// none. Guarded by Conn.mu.
type connWaiters struct {
	write, close []waker.Waker
}

// addWaiterLocked registers wk in the list that closing selects (close or
// write). c.mu is held.
func (c *Conn) addWaiterLocked(closing bool, wk waker.Waker) {
	if c.x == nil {
		c.x = new(connExtra) // !hasZ: nobody reads x without the lock
	}
	w := c.x.waiters
	if w == nil {
		w = new(connWaiters)
		c.x.waiters = w
	}
	if closing {
		w.close = append(w.close, wk)
	} else {
		w.write = append(w.write, wk)
	}
}

// takeWaitersLocked empties the list that closing selects and returns what
// it held; it drops the record once both lists are empty. c.mu is held.
func (c *Conn) takeWaitersLocked(closing bool) []waker.Waker {
	if c.x == nil {
		return nil
	}
	w := c.x.waiters
	if w == nil {
		return nil
	}
	var ws []waker.Waker
	if closing {
		ws, w.close = w.close, nil
	} else {
		ws, w.write = w.write, nil
	}
	if len(w.write) == 0 && len(w.close) == 0 {
		c.x.waiters = nil
		if !c.hasZ && c.x.ka == nil {
			c.x = nil
		}
	}
	return ws
}

// connConfig is the part of a connection's state that its options and
// handshake fix: read-only, and shared by every connection with the same
// (interned in connConfigs), so that a connection holds a pointer to it
// instead of a copy.
type connConfig struct {
	client       bool
	subprotocol  string
	readLimit    int64
	closeTimeout time.Duration
	bufSize      int
	// keepAlive and keepAliveTimeout are Options.KeepAlive and its
	// timeout; keepAlive 0 means no policy.
	keepAlive, keepAliveTimeout time.Duration
}

// connConfigs interns the connConfigs: a connConfig value to its
// *connConfig. Its size is the number of distinct settings the program
// uses (the subprotocol is one the program offered or accepted). A typed
// map under a lock, not a sync.Map, whose key, an interface, would cost
// every connection an allocation of the connConfig; the last one interned
// or found is kept apart, so that a server whose connections share their
// settings takes no lock.
var connConfigs struct {
	mu   sync.Mutex
	m    map[connConfig]*connConfig
	last atomic.Pointer[connConfig]
}

// internConfig returns the interned copy of k.
func internConfig(k connConfig) *connConfig {
	if c := connConfigs.last.Load(); c != nil && *c == k { // load: pairs with the Store below
		return c
	}
	connConfigs.mu.Lock()
	defer connConfigs.mu.Unlock()
	c := connConfigs.m[k]
	if c == nil {
		if connConfigs.m == nil {
			connConfigs.m = make(map[connConfig]*connConfig)
		}
		c = new(connConfig) // not &k: k would then move to the heap on every call
		*c = k
		connConfigs.m[k] = c
	}
	connConfigs.last.Store(c) // publishes *c, immutable from here on
	return c
}

// readState is the reader's state while it reads: the read buffer, the
// frame being parsed, the message being gathered and the reader's
// result. On a pooledReader it is given back to readStates while the
// reader waits between messages, when all of it is at its zero value but
// the buffers (given back too); otherwise the connection keeps it. Owned
// by the holder of Conn.reading.
type readState struct {
	// rbuf is the read buffer (rbufp its readBufs entry, nil if its
	// own), rbuf[rpos:rend] the input not yet parsed. When pb is not
	// zero (inPool), rbuf is the data of that pooled read, parsed in place
	// and given back to the runtime's pool by putReadBuf.
	rbuf    []byte
	rbufp   *[]byte
	pb      blitz.PooledBuf
	rpos    int
	rend    int
	hdr     header
	inFrame bool
	remain  int64
	keyPos  int
	// msgOp is the opcode of the data message being gathered, 0 if none;
	// zipped says it is compressed (RSV1 on its first frame): msg then
	// gathers its compressed payload.
	msgOp  byte
	zipped bool
	msg    []byte
	msgp   *[]byte // msg's buffer from readBufs, nil if its own
	utf    utf8State
	// out is the inflated message (outp its readBufs entry, nil if its
	// own).
	out     []byte
	outp    *[]byte
	readErr error
	// draining is set after a protocol error: the close frame is sent and
	// what the peer sends is skipped until its close (see pollDrain).
	draining bool
	// eof is set when the transport's read side ended or failed.
	eof bool
	// replyOn says cs.reply is a control frame the reader must write
	// before it reads on (a pong, the echo of a close, the close of a
	// protocol error), with replyErr the read's result after a close.
	replyOn    bool
	replyClose bool
	replyFail  bool
	replyErr   error
	// cs holds a control frame's payload and the reply to it, from
	// ctlStates while a control frame is read or answered (an idle
	// connection, which holds no readState, holds none).
	cs *ctlState
	// A message read in parts (NextReader): part says the reader copies
	// an uncompressed data message's payload into dst (dn bytes so far in
	// this call) instead of gathering it; partEnd is set when the
	// message's last frame ended; partTotal counts the message's payload
	// for the read limit; reader is the MessageReader of the message
	// whose end the parser has not reached, nil when none.
	part      bool
	partEnd   bool
	dst       []byte
	dn        int
	partTotal int64
	reader    *MessageReader
}

var readStates = sync.Pool{New: func() any { return new(readState) }}

// inPool says rbuf is a pooled read's buffer, pb (which a read that took
// data never leaves zero).
func (r *readState) inPool() bool { return r.pb != blitz.PooledBuf{} }

// state returns the reader's state, taken from readStates if the
// connection had given it back. Called by the reader.
func (c *Conn) state() *readState {
	if c.rs == nil {
		c.rs = readStates.Get().(*readState)
	}
	return c.rs
}

// putStateIdle gives the reader's state back while the reader waits on
// a pooled read with nothing buffered, between messages: the buffers go
// back to their pools and the state, all zero then, to readStates.
// Called by the reader.
func (c *Conn) putStateIdle() {
	r := c.rs
	if r == nil || r.msgOp != 0 || r.inFrame || r.readErr != nil || r.replyOn || r.draining || r.eof || r.rpos != r.rend || r.part || r.reader != nil {
		return
	}
	if r.rbuf != nil {
		c.putReadBuf()
	}
	c.releaseIdle()
	c.putCtl()
	*r = readState{}
	readStates.Put(r)
	c.rs = nil
}

// newConn returns a Conn over t; buffered holds bytes already read past the
// handshake.
func newConn(t transport, client bool, subprotocol string, opts *Options, buffered []byte) *Conn {
	if opts == nil {
		opts = &Options{}
	}
	k := connConfig{client: client, subprotocol: subprotocol, readLimit: opts.ReadLimit, closeTimeout: opts.CloseTimeout, bufSize: opts.ReadBufferSize}
	if opts.KeepAlive > 0 {
		k.keepAlive = max(opts.KeepAlive, time.Millisecond)
		k.keepAliveTimeout = k.keepAlive
		if opts.KeepAliveTimeout > 0 {
			k.keepAliveTimeout = max(opts.KeepAliveTimeout, time.Millisecond)
		}
	}
	if k.readLimit == 0 {
		k.readLimit = DefaultReadLimit
	} else if k.readLimit < 0 {
		k.readLimit = 1<<63 - 1
	}
	if k.closeTimeout <= 0 {
		k.closeTimeout = DefaultCloseTimeout
	}
	if k.bufSize <= 0 {
		k.bufSize = defaultBufferSize
	}
	k.bufSize = max(k.bufSize, 64) // room for any frame header
	c := &Conn{t: t, cfg: internConfig(k)}
	if len(buffered) > 0 {
		c.state()
		c.getReadBuf(len(buffered))
		c.rs.rend = copy(c.rs.rbuf, buffered)
	}
	c.rf.c = c
	return c
}

// setDeflate sets the negotiated permessage-deflate, before the
// connection is handed out.
func (c *Conn) setDeflate(d *deflater) {
	switch {
	case d == nil:
		return
	case d.wTakeover || d.rTakeover:
		c.x = &connExtra{z: &compression{d: d}}
	default:
		c.x = &connExtra{z: &d.shared}
	}
	c.hasZ = true
}

// dfl returns the negotiated permessage-deflate, nil if none: shared by
// the connections that negotiated the same, read-only.
func (c *Conn) dfl() *deflater {
	if !c.hasZ {
		return nil
	}
	return c.x.z.d
}

// dctx returns the compression state this connection keeps, nil without
// context takeover in either direction.
func (c *Conn) dctx() *deflateCtx {
	if !c.hasZ {
		return nil
	}
	z := c.x.z
	if !z.d.wTakeover && !z.d.rTakeover {
		return nil
	}
	return &z.ctx
}

// ctlState is a control frame's payload (ctl, n bytes), and the reply
// to it (reply, its payload in buf).
type ctlState struct {
	ctl   [125]byte
	n     int
	reply frameWrite
	buf   [125]byte
}

var ctlStates = sync.Pool{New: func() any { return new(ctlState) }}

// getCtl makes sure the reader has a ctlState, its payload empty.
func (c *Conn) getCtl() {
	r := c.state()
	if r.cs == nil {
		r.cs = ctlStates.Get().(*ctlState)
	}
	r.cs.n = 0
}

// putCtl gives the ctlState back once no reply needs it.
func (c *Conn) putCtl() {
	if r := c.rs; r != nil && r.cs != nil && !r.replyOn {
		r.cs.reply = frameWrite{}
		ctlStates.Put(r.cs)
		r.cs = nil
	}
}

// pooledReader is a transport that reads into the runtime's pool of read
// buffers (blitz.TCPStream, blitz.UnixStream): an idle connection then
// waits without a buffer.
type pooledReader interface {
	ReadPooled() *blitz.ReadPooledFuture
	PollReadPooled(cx *future.Context) (future.Result[blitz.PooledBuf], bool)
}

// readBufs are the buffers the connections share, by size (a *sync.Pool
// of *[]byte): read buffers, and the payload and inflated buffers of
// messages that fit one. On a pooledReader a connection holds them only
// while it reads a message.
var readBufs sync.Map

// defaultReadBufs is readBufs' pool of the default read buffer size,
// reached without the map: the buffer of every message read with the
// default Options, whose lookup by size (hashing the key) took 3 % of a
// server's CPU outside the kernel.
var defaultReadBufs sync.Pool

// bufPool returns readBufs' pool of buffers of size bytes.
func bufPool(size int) *sync.Pool {
	if size == defaultBufferSize {
		return &defaultReadBufs
	}
	p, _ := readBufs.Load(size)
	if p == nil {
		p, _ = readBufs.LoadOrStore(size, &sync.Pool{})
	}
	return p.(*sync.Pool)
}

// getBuf returns a buffer of size bytes from readBufs.
func getBuf(size int) *[]byte {
	bp, _ := bufPool(size).Get().(*[]byte)
	if bp == nil {
		b := make([]byte, size)
		bp = &b
	}
	return bp
}

// putBuf gives back a buffer of getBuf, if b still is it (an append that
// outgrew it made a larger array).
func putBuf(bp *[]byte, b []byte) {
	if bp == nil || cap(b) != cap(*bp) {
		return
	}
	bufPool(cap(*bp)).Put(bp)
}

// getReadBuf sets rbuf to a buffer of bufSize, or of n bytes if more.
func (c *Conn) getReadBuf(n int) {
	if n > c.cfg.bufSize {
		c.rs.rbuf, c.rs.rbufp = make([]byte, n), nil
		return
	}
	c.rs.rbufp = getBuf(c.cfg.bufSize)
	c.rs.rbuf = *c.rs.rbufp
}

// putReadBuf gives rbuf back, when it is from a pool.
func (c *Conn) putReadBuf() {
	if c.rs.inPool() {
		c.rs.pb.Release()
		c.rs.pb = blitz.PooledBuf{}
	} else {
		putBuf(c.rs.rbufp, c.rs.rbuf)
	}
	c.rs.rbuf, c.rs.rbufp = nil, nil
	c.rs.rpos, c.rs.rend = 0, 0
}

// unpool moves the input not yet parsed out of a pooled read's buffer
// (the start of a frame, whose rest a read of our own fetches) into a read
// buffer, and gives the pool's buffer back.
func (c *Conn) unpool() {
	r := c.rs
	pb := r.pb
	rest := r.rbuf[r.rpos:r.rend]
	r.pb = blitz.PooledBuf{}
	c.getReadBuf(len(rest))
	r.rpos, r.rend = 0, copy(r.rbuf, rest)
	pb.Release()
}

// releaseIdle gives back the buffers of the last message, when the reader
// waits between messages: its payload (valid until this read) and its
// inflated form. Called by the reader.
func (c *Conn) releaseIdle() {
	if c.rs.msgOp != 0 || c.rs.inFrame {
		return
	}
	putBuf(c.rs.msgp, c.rs.msg)
	c.rs.msg, c.rs.msgp = nil, nil
	putBuf(c.rs.outp, c.rs.out)
	c.rs.out, c.rs.outp = nil, nil
}

// The write buffers: a frame's header and copied payload, a compressed
// payload, taken for the time of one frame's write from pools by size
// class (powers of two, 256 B to 64 KiB); a larger one is made for the
// frame and dropped after it. An idle connection holds none.
const (
	minWriteBits = 8
	maxWriteBits = 16
)

var writeBufs [maxWriteBits - minWriteBits + 1]sync.Pool

// getWriteBuf returns an empty buffer of at least n bytes.
func getWriteBuf(n int) *[]byte {
	if n > 1<<maxWriteBits {
		b := make([]byte, 0, n)
		return &b
	}
	i := 0
	if n > 1<<minWriteBits {
		i = bits.Len(uint(n-1)) - minWriteBits
	}
	if bp, ok := writeBufs[i].Get().(*[]byte); ok {
		return bp
	}
	b := make([]byte, 0, 1<<(i+minWriteBits))
	return &b
}

// putWriteBuf gives back bp, whose contents are now b (an append may have
// outgrown it), if its size is one of a class.
func putWriteBuf(bp *[]byte, b []byte) {
	n := cap(b)
	if bp == nil || n < 1<<minWriteBits || n > 1<<maxWriteBits || n&(n-1) != 0 {
		return
	}
	*bp = b[:0]
	writeBufs[bits.Len(uint(n))-1-minWriteBits].Put(bp)
}

// Subprotocol returns the subprotocol the handshake selected, "" if none.
func (c *Conn) Subprotocol() string { return c.cfg.subprotocol }

// Extensions returns the Sec-WebSocket-Extensions value in force: the
// negotiated permessage-deflate and its parameters (as
// "permessage-deflate; server_no_context_takeover; ..."), "" if none.
func (c *Conn) Extensions() string {
	if c.dfl() == nil {
		return ""
	}
	return c.dfl().ext
}

// NetConn returns the net.Conn under a connection made from one, nil for a
// connection on the runtime's streams.
func (c *Conn) NetConn() net.Conn {
	if t, ok := c.t.(*netTransport); ok {
		return t.nc
	}
	return nil
}

// closeTransport closes the underlying connection once.
func (c *Conn) closeTransport() {
	c.mu.Lock()
	done := c.tclosed
	c.tclosed = true
	ws := c.takeWaitersLocked(true)
	c.mu.Unlock()
	if !done {
		_ = c.t.Close()
	}
	wakeAll(ws)
}

// closeByUser is the end of the user's close (Close, CloseNow): the
// transport is closed and the pooled read's buffer given back.
func (c *Conn) closeByUser() {
	c.mu.Lock()
	c.userClosed = true
	c.mu.Unlock()
	c.closeTransport()
	c.releasePooled()
}

// releasePooled gives back the pooled read's buffer that the reader holds
// (the last message was handed out in it, or it is what the reader left),
// when no reader is active: a connection its user closed (Close, CloseNow)
// does not keep a buffer of the runtime's pool. An active reader gives it
// back itself, at its next fill or when it fails, or when it leaves the
// role inside its message (leaveRead). Only the user's close calls it
// (closeByUser, and a reader that leaves after that close), after closing
// the transport: a connection that broke on its own (a failed write)
// leaves the last message's Data valid until the user's next read or
// close. A read that starts after this fails with ErrClosed (userClosed
// is set).
func (c *Conn) releasePooled() {
	if !c.reading.CompareAndSwap(readFree, readHeld) && // acquire: pairs with releaseRead
		!c.reading.CompareAndSwap(readLeft, readHeld) { // or with leaveRead
		return
	}
	if rs := c.rs; rs != nil && rs.reader != nil {
		rs.reader = orphaned // its Read fails with ErrClosed (see resumeReader)
	}
	c.dropPooled()
	c.releaseRead()
}

// dropPooled gives back the pooled read's buffer the reader holds, if it
// holds one, with what is left in it. Called by the holder of reading.
func (c *Conn) dropPooled() {
	if r := c.rs; r != nil && r.inPool() {
		c.putReadBuf()
	}
}

func wakeAll(ws []waker.Waker) {
	for _, w := range ws {
		w.Wake()
	}
}

// releaseRead gives up the reader's role and wakes a Close that waits for
// it.
func (c *Conn) releaseRead() {
	c.reading.Store(readFree) // release: pairs with the CAS of the next reader
	c.mu.Lock()
	ws := c.takeWaitersLocked(true)
	c.mu.Unlock()
	wakeAll(ws)
}

// The states of Conn.reading.
const (
	readFree uint32 = iota // nobody reads
	readHeld               // a reader holds the role
	readLeft               // left to a MessageReader's unfinished message, between its Reads
)

// leaveRead keeps the reader role for the MessageReader whose message is
// unfinished (rs.reader), for its next Read to take back (resumeReader),
// or the connection's next read or its close to take over; and wakes a
// Close that waits for the role. Called by the holder of reading.
func (c *Conn) leaveRead() {
	c.reading.Store(readLeft) // release: pairs with the CAS of takeReader, resumeReader or a close
	c.mu.Lock()
	ws := c.takeWaitersLocked(true) // a Close waiting for the role may take it now
	closed := c.userClosed
	c.mu.Unlock()
	wakeAll(ws)
	if closed {
		// The user's close found the role held and left the buffer to
		// us: give it back now, since the reader may never read again.
		c.releasePooled()
	}
}

// errConcurrentRead is the panic of a second reader.
var errConcurrentRead = errors.New("websocket: concurrent reads of a connection")

// ReadMessage returns a future of the next data message. Pings are
// answered and pongs dropped on the way; a close frame from the peer is
// answered with the same code and ends the read with a *CloseError; a
// frame that breaks the protocol closes the connection with the code RFC
// 6455 asks for and ends the read with an error wrapping ErrProtocol or
// ErrMessageTooBig. The message's Data is valid until the next read, or
// until Close or CloseNow.
//
// The future is the connection's own, reused by the next ReadMessage once
// it has completed or been cancelled (so reading allocates nothing); do
// not keep it past that. Cancelling it loses nothing: the next read goes
// on where it stopped (but a control reply it was writing breaks the
// connection). One read at a time: a second concurrent reader panics.
//
// After a read error the connection is done: call Close, which finishes
// the close handshake (or CloseNow), to release it.
func (c *Conn) ReadMessage() *ReadFuture {
	f := &c.rf
	if f.active {
		f = &ReadFuture{c: c}
	}
	f.active, f.started, f.done = true, false, false
	return f
}

// ReadFuture is the future of ReadMessage.
type ReadFuture struct {
	c                     *Conn
	active, started, done bool
}

// Poll reads on; see ReadMessage.
func (f *ReadFuture) Poll(cx *future.Context) (future.Result[Message], bool) {
	c := f.c
	if f.done {
		panic(future.ErrPolledAfterCompletion)
	}
	if !f.started {
		if !c.takeReader() {
			f.done, f.active = true, false
			return future.Fail[Message](ErrClosed), true
		}
		f.started = true
	}
	if !c.discardPart(cx, true) { // what a MessageReader left of its message
		return future.Result[Message]{}, false
	}
	m, err, ok := c.pollRead(cx)
	if !ok {
		return future.Result[Message]{}, false
	}
	f.done, f.active = true, false
	if err != nil {
		c.failRead()
		return future.Fail[Message](err), true
	}
	c.releaseRead()
	return future.Ok(m), true
}

// Cancel abandons the read; see ReadMessage.
func (f *ReadFuture) Cancel() {
	if f.done || !f.active {
		return
	}
	f.done, f.active = true, false
	if f.started {
		f.c.abandonRead()
	}
}

// failRead ends a read that failed: the connection is done, so the
// keep-alive timer stops, the pooled buffer goes back (unless Close is
// to skip what follows a protocol error in it), and the reader role is
// given back. Called by the holder of reading.
func (c *Conn) failRead() {
	c.pauseKeepAlive()
	if r := c.rs; r == nil || !r.draining { // else Close skips what follows in it
		c.dropPooled() // the connection is done: nothing more is parsed
	}
	c.releaseRead()
}

// abandonRead ends a cancelled read: its I/O is stopped and the
// keep-alive timer with it, and the reader role given back unless a
// MessageReader's unfinished message keeps it. Called by the holder of
// reading.
func (c *Conn) abandonRead() {
	c.cancelRead()
	c.pauseKeepAlive()
	if rs := c.rs; rs == nil || rs.reader == nil {
		c.releaseRead()
	} else {
		c.leaveRead()
	}
}

// cancelRead stops the reader's I/O in flight. Called by the reader.
func (c *Conn) cancelRead() {
	c.t.CancelRead() // a pooled read's too: what it received goes to the stream's next read
	if c.rs == nil || !c.rs.replyOn {
		return
	}
	if c.rs.cs.reply.cancel() {
		// A reply cut in the middle: the stream is broken.
		c.rs.readErr = fmt.Errorf("%w: read cancelled while writing a control frame", ErrClosed)
		c.rs.replyOn = false
		c.closeTransport()
		return
	}
	c.rs.cs.reply.phase = fwLock // not started: the next read sends it
}

// pollRead advances the reader until a data message, an error, or a wait.
// Called by the holder of reading.
func (c *Conn) pollRead(cx *future.Context) (Message, error, bool) {
	c.state()
	for {
		if c.rs.replyOn {
			err, ok := c.rs.cs.reply.poll(cx)
			if !ok {
				return Message{}, nil, false
			}
			c.rs.replyOn = false
			c.putCtl()
			if err != nil && c.rs.readErr == nil {
				c.rs.readErr = err
			}
			if c.rs.replyFail {
				c.rs.replyClose, c.rs.replyFail = false, false
				c.rs.readErr, c.rs.draining = c.rs.replyErr, true
				return Message{}, c.rs.readErr, true
			}
			if c.rs.replyClose {
				c.rs.replyClose = false
				c.mu.Lock()
				c.closeRecv = true
				c.mu.Unlock()
				c.closeTransport()
				if c.rs.readErr == nil || c.rs.replyErr != nil {
					c.rs.readErr = c.rs.replyErr
				}
			}
		}
		if c.rs.readErr != nil {
			return Message{}, c.rs.readErr, true
		}
		avail := c.rs.rbuf[c.rs.rpos:c.rs.rend]
		if !c.rs.inFrame {
			h, n, err := parseHeader(avail)
			if err == nil && n > 0 {
				if m, k := c.wholeMessage(h, avail[n:]); k > 0 {
					c.rs.rpos += n + k
					if m.Type == 0 {
						continue // failed: the close is on its way
					}
					return m, nil, true
				}
				err = c.startFrame(h)
			}
			if err != nil {
				c.fail(err)
				continue
			}
			if n > 0 {
				c.rs.rpos += n
				c.rs.hdr, c.rs.inFrame, c.rs.remain, c.rs.keyPos = h, true, h.length, 0
				avail = avail[n:]
			}
		}
		if c.rs.inFrame {
			n := int(min(int64(len(avail)), c.rs.remain))
			streamed := c.rs.part && !c.rs.zipped && !isControl(c.rs.hdr.op)
			if streamed {
				n = min(n, len(c.rs.dst)-c.rs.dn)
			}
			p := avail[:n]
			if c.rs.hdr.masked {
				c.rs.keyPos = maskBytes(c.rs.hdr.key, c.rs.keyPos, p)
			}
			c.rs.rpos += n
			c.rs.remain -= int64(n)
			if isControl(c.rs.hdr.op) {
				c.rs.cs.n += copy(c.rs.cs.ctl[c.rs.cs.n:], p)
			} else {
				if c.rs.msgOp == opText && !c.rs.zipped && !c.rs.utf.feed(p) {
					c.fail(errTextUTF8)
					continue
				}
				if streamed {
					c.rs.dn += copy(c.rs.dst[c.rs.dn:], p)
				} else {
					c.rs.msg = append(c.rs.msg, p...)
				}
			}
			if c.rs.remain == 0 {
				c.rs.inFrame = false
				if m, done := c.endFrame(); done {
					return m, nil, true
				}
				continue
			}
			if streamed && c.rs.dn == len(c.rs.dst) {
				return Message{Type: MessageType(c.rs.msgOp)}, nil, true // the caller's buffer is full
			}
		}
		if c.rs.part && c.rs.dn > 0 {
			return Message{Type: MessageType(c.rs.msgOp)}, nil, true // what came so far, rather than wait
		}
		// More input is needed.
		if !c.fill(cx) {
			if c.cfg.keepAlive == 0 || !c.keepAliveDue(cx) {
				return Message{}, nil, false
			}
		}
	}
}

// fill reads more input into rbuf; false means the read waits. An end of
// stream or an error becomes readErr. Called by the reader.
func (c *Conn) fill(cx *future.Context) bool {
	if c.rs.rpos == c.rs.rend {
		if pr, ok := c.t.(pooledReader); ok {
			return c.fillPooled(cx, pr)
		}
	}
	if c.rs.inPool() {
		c.unpool()
	}
	if c.rs.rbuf == nil {
		c.rs.rbuf = make([]byte, c.cfg.bufSize)
	}
	if c.rs.rpos == c.rs.rend {
		c.rs.rpos, c.rs.rend = 0, 0
	} else if c.rs.rend == len(c.rs.rbuf) {
		c.rs.rend = copy(c.rs.rbuf, c.rs.rbuf[c.rs.rpos:c.rs.rend])
		c.rs.rpos = 0
	}
	if nt, isNet := c.t.(*netTransport); isNet && c.cfg.keepAlive > 0 {
		n, err, consumed := c.fillNet(nt, c.rs.rbuf[c.rs.rend:])
		if consumed {
			return true
		}
		c.rs.rend += n
		return c.filled(n, err)
	}
	res, ok := c.t.PollRead(cx, c.rs.rbuf[c.rs.rend:])
	if !ok {
		return false
	}
	c.rs.rend += res.Value
	return c.filled(res.Value, res.Err)
}

// fillPooled waits for input with nothing buffered: the read buffer is
// given back and the read takes a buffer of the runtime's pool when data
// arrives, which the reader parses in place (a message in one frame is
// handed out as a slice of it) and gives back at the next read, or when
// it must read more of a frame begun in it (unpool). Called by the
// reader.
func (c *Conn) fillPooled(cx *future.Context, pr pooledReader) bool {
	if c.rs.rbuf != nil {
		c.putReadBuf()
	}
	c.releaseIdle()
	c.putStateIdle()
	res, ok := pr.PollReadPooled(cx)
	if !ok {
		return false
	}
	c.state()
	n := 0
	if res.Err == nil {
		data := res.Value.Bytes()
		n = len(data)
		if n > 0 {
			c.rs.rbuf, c.rs.pb = data, res.Value
			c.rs.rpos, c.rs.rend = 0, n
		} else {
			res.Value.Release()
		}
	}
	return c.filled(n, res.Err)
}

// filled acts on the result of a read of n bytes: an end of stream or an
// error becomes readErr.
func (c *Conn) filled(n int, err error) bool {
	if n > 0 && c.cfg.keepAlive > 0 {
		c.heard()
	}
	if err != nil || n == 0 {
		c.rs.eof = true
		if c.rs.readErr != nil {
			c.closeTransport()
			return true
		}
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		c.mu.Lock()
		closing := c.closeSent || c.userClosed
		c.mu.Unlock()
		if closing {
			c.rs.readErr = fmt.Errorf("%w: %w", ErrClosed, err)
		} else {
			c.rs.readErr = &CloseError{Code: StatusAbnormalClosure, err: err}
		}
		c.closeTransport()
	}
	return true
}

// startFrame checks a new frame's header against the connection's state:
// RSV1, masking by side, continuation, the read limit (of a compressed
// message's payload here; of its inflated size in endFrame).
func (c *Conn) startFrame(h header) error {
	switch {
	case h.rsv&rsv1 != 0 && c.dfl() == nil:
		return errReservedBits
	case h.rsv&rsv1 != 0 && isControl(h.op):
		return errRSV1Control
	case h.rsv&rsv1 != 0 && h.op == opContinuation:
		return errRSV1Continuation
	case !c.cfg.client && !h.masked:
		return errUnmasked
	case c.cfg.client && h.masked:
		return errMasked
	case isControl(h.op):
		c.getCtl()
		return nil
	case h.op == opContinuation && c.rs.msgOp == 0:
		return errContinuation
	case h.op != opContinuation && c.rs.msgOp != 0:
		return errExpectedCont
	}
	if h.op != opContinuation {
		c.rs.msgOp = h.op
		c.rs.partTotal = 0
		c.rs.zipped = h.rsv&rsv1 != 0
		c.rs.msg = c.rs.msg[:0]
		if cap(c.rs.msg) > 4*c.cfg.bufSize {
			c.rs.msg, c.rs.msgp = nil, nil // drop a large message's buffer
		}
		if c.rs.msg == nil && h.length <= int64(c.cfg.bufSize) {
			c.rs.msgp = getBuf(c.cfg.bufSize)
			c.rs.msg = (*c.rs.msgp)[:0]
		}
		if cap(c.rs.out) > 4*c.cfg.bufSize {
			c.rs.out, c.rs.outp = nil, nil // and of its inflated form
		}
	}
	if h.length > c.cfg.readLimit-int64(len(c.rs.msg))-c.rs.partTotal {
		return errTooBig
	}
	if c.rs.part && !c.rs.zipped {
		c.rs.partTotal += h.length
	}
	return nil
}

// wholeMessage takes, without copying it, a data message that is one
// uncompressed frame whose payload is all in rest (the input past the
// frame's header h): its payload is unmasked in place and returned as a
// slice of the read buffer, valid, like any message's, until the next
// read. k is the payload's length when the frame was taken (the message's
// Type is 0 when its text was not UTF-8: the connection is failing), 0
// when the frame goes the general way (startFrame, then its payload
// gathered in msg). Called by the reader.
func (c *Conn) wholeMessage(h header, rest []byte) (m Message, k int) {
	if !takeWhole || !h.fin || h.rsv != 0 || h.op != opText && h.op != opBinary || c.rs.msgOp != 0 ||
		h.masked == c.cfg.client || h.length > int64(len(rest)) || h.length > c.cfg.readLimit {
		return Message{}, 0
	}
	p := rest[:h.length:h.length] // an append to Data must not reach the next frame
	if h.masked {
		maskBytes(h.key, 0, p)
	}
	if h.op == opText && !validText(p) {
		c.fail(errTextUTF8)
		return Message{}, len(p)
	}
	return Message{Type: MessageType(h.op), Data: p}, len(p)
}

// takeWhole enables wholeMessage; the tests turn it off to compare its
// messages with the general path's.
var takeWhole = true

// endFrame acts on a frame whose payload is all in: a data message that
// is complete is returned; a control frame is answered.
func (c *Conn) endFrame() (Message, bool) {
	h := c.rs.hdr
	switch h.op {
	case opPing:
		c.startReply(opPing, c.rs.cs.ctl[:c.rs.cs.n])
		return Message{}, false
	case opPong:
		c.putCtl()
		return Message{}, false
	case opClose:
		code, reason, err := parseClosePayload(c.rs.cs.ctl[:c.rs.cs.n])
		if err != nil {
			c.fail(err)
			return Message{}, false
		}
		ce := &CloseError{Code: code, Reason: reason}
		c.mu.Lock()
		sent := c.closeSent
		c.closeRecv = true
		ws := c.takeWaitersLocked(true)
		c.mu.Unlock()
		wakeAll(ws)
		if sent {
			c.putCtl()
			c.rs.readErr = ce
			c.closeTransport()
			return Message{}, false
		}
		var echo []byte
		if code != StatusNoStatusRcvd {
			echo = appendClosePayload(c.rs.cs.buf[:0], code, "")
		}
		c.startReply(opClose, echo)
		c.rs.replyClose, c.rs.replyErr = true, ce
		return Message{}, false
	}
	if !h.fin {
		return Message{}, false
	}
	typ := MessageType(c.rs.msgOp)
	c.rs.msgOp = 0
	if c.rs.zipped {
		return c.endCompressed(typ)
	}
	if typ == TextMessage && !c.rs.utf.done() {
		c.fail(errTextUTF8)
		return Message{}, false
	}
	c.rs.partEnd = c.rs.part
	return Message{Type: typ, Data: c.rs.msg}, true
}

// endCompressed inflates a compressed message whose frames are all in,
// within the read limit, and checks a text message's UTF-8.
func (c *Conn) endCompressed(typ MessageType) (Message, bool) {
	r := c.rs
	r.zipped = false
	if r.out == nil {
		r.outp = getBuf(c.cfg.bufSize)
		r.out = (*r.outp)[:0]
	}
	out, err := c.dfl().inflate(c.dctx(), r.out, r.msg, c.cfg.readLimit)
	r.out = out
	if err == nil && typ == TextMessage && !validText(out) {
		err = errTextUTF8
	}
	if err != nil {
		c.fail(err)
		return Message{}, false
	}
	return Message{Type: typ, Data: out}, true
}

// startReply makes the reader write a control frame before it reads on:
// a pong with a ping's payload, or a close.
func (c *Conn) startReply(op byte, payload []byte) {
	if op == opPing {
		op = opPong
		payload = c.rs.cs.buf[:copy(c.rs.cs.buf[:], payload)]
	}
	c.rs.cs.reply = frameWrite{c: c, op: op, fin: true, payload: payload}
	c.rs.replyOn = true
}

// fail closes the connection for a protocol error: a close frame with the
// error's code, then the end of the transport; the read fails with err.
func (c *Conn) fail(err error) {
	var pe *protocolError
	code := StatusProtocolError
	if errors.As(err, &pe) {
		code = pe.code
	}
	c.getCtl()
	c.startReply(opClose, appendClosePayload(c.rs.cs.buf[:0], code, ""))
	c.rs.replyFail, c.rs.replyErr = true, err
	c.rs.msgOp, c.rs.zipped = 0, false
}

// pollDrain skips what the peer sends after a protocol error until its
// close frame or the end of the stream (true), so that the peer reads our
// close frame rather than a reset. A frame cut short by the error is
// skipped to its end. Called by the holder of reading.
func (c *Conn) pollDrain(cx *future.Context) bool {
	c.state()
	for {
		if c.rs.eof {
			return true
		}
		avail := c.rs.rbuf[c.rs.rpos:c.rs.rend]
		if !c.rs.inFrame {
			h, n, _ := parseHeader(avail)
			if n > 0 {
				c.rs.rpos += n
				if h.op == opClose {
					return true
				}
				c.rs.inFrame, c.rs.remain = true, h.length
				avail = avail[n:]
			}
		}
		if c.rs.inFrame {
			k := int(min(int64(len(avail)), c.rs.remain))
			c.rs.rpos += k
			c.rs.remain -= int64(k)
			if c.rs.remain == 0 {
				c.rs.inFrame = false
				continue
			}
		}
		if !c.fill(cx) {
			return false
		}
	}
}

// frameWrite writes one frame under the write lock, or the frames of a
// prepared message: the future of every write of the connection.
type frameWrite struct {
	c       *Conn
	op      byte
	fin     bool
	payload []byte
	// prep is the prepared message to send instead of payload (op and
	// fin unused), nil if none.
	prep *PreparedMessage
	// locked says the frame holds the write lock.
	locked bool
	phase  uint8
	// head is written first: the frame's header, and its payload unless
	// direct, from hb (a write buffer) or a prepared message's bytes.
	head    []byte
	off     int
	direct  bool
	pending bool // a PollWrite is in flight
	// rsv1 marks the first frame of a compressed message; compress says
	// build compresses payload first (a whole message, WriteMessage).
	rsv1     bool
	compress bool
	// held says the caller holds the write lock already (a
	// MessageWriter): the frame neither takes nor releases it.
	held bool
	// hb and zb are the write buffers of head and of the compressed
	// payload, from writeBufs for the time of the write; nil if none.
	hb, zb *[]byte
}

// unlock releases the write lock unless the caller holds it.
func (w *frameWrite) unlock() {
	if !w.held && w.locked {
		w.locked = false
		w.c.unlockWrite()
	}
}

// releaseBufs gives the frame's write buffers back once it is written.
func (w *frameWrite) releaseBufs() {
	if w.hb != nil {
		putWriteBuf(w.hb, w.head)
		w.hb = nil
	}
	if w.zb != nil {
		putWriteBuf(w.zb, w.payload)
		w.zb = nil
	}
	w.head, w.payload = nil, nil
}

const (
	fwLock uint8 = iota
	fwHead
	fwPayload
	fwDone
)

// poll writes the frame; it returns the write's error when done.
func (w *frameWrite) poll(cx *future.Context) (error, bool) {
	c := w.c
	for {
		switch w.phase {
		case fwLock:
			if !w.held {
				// (The caller of a held frame holds the lock.)
				if !c.tryLockWrite(cx) {
					return nil, false
				}
				w.locked = true
			}
			if skip, err := w.check(); skip || err != nil {
				w.unlock()
				w.phase = fwDone
				return err, true
			}
			w.build()
			w.phase = fwHead
		case fwHead, fwPayload:
			buf := w.head
			if w.phase == fwPayload {
				buf = w.payload
			}
			for w.off < len(buf) {
				res, ok := c.t.PollWrite(cx, buf[w.off:])
				if !ok {
					w.pending = true
					return nil, false
				}
				w.pending = false
				if res.Err != nil {
					w.hb, w.zb = nil, nil // the transport may hold them still
					w.unlock()
					w.phase = fwDone
					c.closeTransport()
					return fmt.Errorf("websocket: write: %w", res.Err), true
				}
				w.off += res.Value
			}
			w.off = 0
			if w.phase == fwHead && w.direct {
				w.phase = fwPayload
				continue
			}
			w.releaseBufs()
			w.unlock()
			w.phase = fwDone
			if w.op == opClose {
				c.mu.Lock()
				both := c.closeRecv
				c.mu.Unlock()
				if both && !c.cfg.client {
					// The server closes the TCP connection first (RFC
					// 6455 section 7.1.1).
					c.closeTransport()
				}
			}
			return nil, true
		default:
			panic(future.ErrPolledAfterCompletion)
		}
	}
}

// check decides, under the write lock, whether the frame may go: nothing
// after a close frame, and a second close frame is skipped.
func (w *frameWrite) check() (skip bool, err error) {
	c := w.c
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.tclosed:
		if w.op == opClose && c.closeSent {
			return true, nil
		}
		return false, ErrClosed
	case c.closeSent:
		if w.op == opClose {
			return true, nil
		}
		return false, ErrClosed
	case w.op == opClose:
		c.closeSent = true
	}
	return false, nil
}

// build lays the frame out in a write buffer: the header, then the
// payload, masked by a client; a server's large payload is written from
// the caller's buffer instead. A message to compress is compressed here,
// under the write lock, so that a compressor with context takeover sees
// the messages in their order on the wire. A prepared message's bytes
// are its own, shared by the connections (see PreparedMessage).
func (w *frameWrite) build() {
	c := w.c
	if w.prep != nil {
		w.buildPrepared()
		return
	}
	if w.compress {
		w.zb = getWriteBuf(len(w.payload)/2 + 64)
		w.payload, w.rsv1, w.compress = c.dfl().compress(c.dctx(), *w.zb, w.payload), true, false
	}
	w.direct = !c.cfg.client && len(w.payload) > directWrite
	n := maxHeader
	if !w.direct {
		n += len(w.payload)
	}
	w.hb = getWriteBuf(n)
	w.head = appendFrame(*w.hb, w.fin, w.op, w.rsv1, w.payload, !w.direct, c.cfg.client)
}

// maxHeader is the longest frame header: 2 bytes, 8 of length, 4 of mask.
const maxHeader = 14

// appendFrame appends a frame to b: its header, and its payload if
// withPayload, masked with a fresh key if mask.
func appendFrame(b []byte, fin bool, op byte, rsv1 bool, payload []byte, withPayload, mask bool) []byte {
	var key [4]byte
	if mask {
		k := rand.Uint32()
		key = [4]byte{byte(k), byte(k >> 8), byte(k >> 16), byte(k >> 24)}
	}
	h := len(b)
	b = appendHeader(b, fin, op, len(payload), mask, key)
	if rsv1 {
		b[h] |= 0x40
	}
	if withPayload {
		n := len(b)
		b = append(b, payload...)
		if mask {
			maskBytes(key, 0, b[n:])
		}
	}
	return b
}

// cancel abandons the write; it reports whether the frame was cut after
// some of it may have been sent (the stream is then broken).
func (w *frameWrite) cancel() bool {
	switch w.phase {
	case fwLock:
		w.phase = fwDone
		return false
	case fwHead, fwPayload:
		if w.pending {
			w.c.t.CancelWrite()
		}
		w.hb, w.zb = nil, nil // the transport may hold them still
		w.unlock()
		w.phase = fwDone
		return true
	}
	return false
}

// WriteFuture is the future of WriteMessage, WritePreparedMessage and
// Ping.
type WriteFuture struct {
	w    frameWrite
	err  error
	done bool
}

// writeFutures are the WriteFutures of the connections, taken by a write
// and given back when it completes or is cancelled.
var writeFutures = sync.Pool{New: func() any { return new(WriteFuture) }}

// newWrite returns a WriteFuture of a frame, from writeFutures.
func (c *Conn) newWrite(op byte, payload []byte) *WriteFuture {
	f := writeFutures.Get().(*WriteFuture)
	*f = WriteFuture{w: frameWrite{c: c, op: op, fin: true, payload: payload}}
	return f
}

// release gives the future back to its pool once it is done.
func (f *WriteFuture) release() {
	*f = WriteFuture{done: true}
	writeFutures.Put(f)
}

// WriteMessage returns a future that sends data as one message of type
// typ (a text message must be UTF-8; it is not checked). The frame is
// written whole under the connection's write lock, so writers may run
// concurrently. data belongs to the future until it completes. Cancelling
// it before its turn comes sends nothing; cancelling it while the frame is
// on its way breaks and closes the connection.
//
// The future comes from a pool that the connections share, and goes back
// to it once it has completed or been cancelled, to be handed out by a
// later write (so writing allocates nothing): do not keep it past that.
//
// With permessage-deflate negotiated, a message of the compression
// threshold or more is compressed when its turn comes, under the lock.
func (c *Conn) WriteMessage(typ MessageType, data []byte) *WriteFuture {
	f := c.newWrite(byte(typ), data)
	if typ != TextMessage && typ != BinaryMessage {
		f.err = fmt.Errorf("websocket: write: invalid message type %d", int(typ))
	}
	f.w.compress = c.dfl() != nil && c.dfl().useCompression(len(data))
	return f
}

// WritePreparedMessage returns a future that sends a prepared message
// (see PreparedMessage): as WriteMessage, except that the frames' bytes
// are the prepared message's, encoded once for every connection that
// negotiated the same, and written without a copy by a server. The same
// PreparedMessage may be written to any number of connections at once.
func (c *Conn) WritePreparedMessage(pm *PreparedMessage) *WriteFuture {
	f := c.newWrite(byte(pm.typ), nil)
	f.w.prep = pm
	return f
}

// Ping returns a future that sends a ping with data (at most 125 bytes).
// The peer's pong is read, and dropped, by the reader.
func (c *Conn) Ping(data []byte) *WriteFuture {
	f := c.newWrite(opPing, data)
	if len(data) > 125 {
		f.err = errors.New("websocket: ping: payload longer than 125 bytes")
	}
	return f
}

// Poll writes; see WriteMessage.
func (f *WriteFuture) Poll(cx *future.Context) (future.Result[struct{}], bool) {
	if f.done {
		panic(future.ErrPolledAfterCompletion)
	}
	if err := f.err; err != nil {
		f.release()
		return future.Fail[struct{}](err), true
	}
	err, ok := f.w.poll(cx)
	if !ok {
		return future.Result[struct{}]{}, false
	}
	f.release()
	return future.Result[struct{}]{Err: err}, true
}

// Cancel abandons the write; see WriteMessage.
func (f *WriteFuture) Cancel() {
	if f.done {
		return
	}
	c := f.w.c
	broken := f.w.cancel()
	f.release()
	if broken {
		c.closeTransport()
	}
}

// CloseFuture is the future of Close.
type CloseFuture struct {
	c       *Conn
	w       frameWrite
	err     error
	phase   uint8
	reading bool
	sleep   blitz.SleepFuture
	timed   bool
}

// Close returns a future of the close handshake: it sends a close frame
// with code and reason (code 0 sends one without a code), waits up to
// Options.CloseTimeout for the peer's close frame (read by the reader in
// progress, or by the future itself if none reads, skipping the rest of a
// message a MessageReader left unfinished), then closes the
// underlying connection. It returns nil once the connection is closed,
// whether the peer answered in time or not, and an error if the close
// frame could not be sent (ErrBadCloseCode for a code that may not be
// sent: 1005, 1006, 1015, outside 1000-4999). Data messages that arrive
// meanwhile are dropped.
func (c *Conn) Close(code StatusCode, reason string) *CloseFuture {
	f := &CloseFuture{c: c, err: checkCloseArgs(code, reason)}
	f.w = frameWrite{c: c, op: opClose, fin: true, payload: appendClosePayload(nil, code, reason)}
	return f
}

// Poll runs the handshake; see Close.
func (f *CloseFuture) Poll(cx *future.Context) (future.Result[struct{}], bool) {
	c := f.c
	switch f.phase {
	case 0:
		if f.err != nil {
			f.phase = 2
			return future.Fail[struct{}](f.err), true
		}
		err, ok := f.w.poll(cx)
		if !ok {
			return future.Result[struct{}]{}, false
		}
		if err != nil && !errors.Is(err, ErrClosed) {
			f.phase = 2
			c.closeTransport()
			return future.Fail[struct{}](err), true
		}
		f.phase = 1
		f.sleep.ResetAfter(c.cfg.closeTimeout)
		f.timed = true
		fallthrough
	case 1:
		for {
			c.mu.Lock()
			over := c.closeRecv || c.tclosed
			if !over && !f.reading {
				if c.reading.CompareAndSwap(readFree, readHeld) || // acquire: pairs with releaseRead
					c.reading.CompareAndSwap(readLeft, readHeld) { // or with leaveRead: the rest of that message is skipped
					f.reading = true
				} else {
					c.addWaiterLocked(true, cx.Waker())
				}
			}
			c.mu.Unlock()
			if over {
				f.finish()
				return future.Result[struct{}]{}, true
			}
			if !f.reading {
				break
			}
			if c.rs != nil && c.rs.draining {
				if !c.pollDrain(cx) {
					break
				}
				f.finish()
				return future.Result[struct{}]{}, true
			}
			if !c.discardPart(cx, false) { // a MessageReader's unfinished message
				break
			}
			_, err, ok := c.pollRead(cx)
			if !ok {
				break
			}
			if err != nil {
				f.finish()
				return future.Result[struct{}]{}, true
			}
			// A data message: dropped.
		}
		if _, ok := f.sleep.Poll(cx); ok {
			f.timed = false
			f.finish()
			return future.Result[struct{}]{}, true
		}
		return future.Result[struct{}]{}, false
	}
	panic(future.ErrPolledAfterCompletion)
}

// finish ends the handshake: the reader's role given back, the timer
// stopped, the connection closed.
func (f *CloseFuture) finish() {
	f.phase = 2
	if f.reading {
		f.reading = false
		f.c.cancelRead()
		f.c.pauseKeepAlive()
		f.c.releaseRead()
	}
	if f.timed {
		f.sleep.Cancel()
		f.timed = false
	}
	f.c.closeByUser()
}

// Cancel abandons the handshake and closes the connection.
func (f *CloseFuture) Cancel() {
	switch f.phase {
	case 0:
		f.w.cancel()
		f.phase = 2
		f.c.closeByUser()
	case 1:
		f.finish()
	}
}

// CloseNow closes the underlying connection at once, without a close
// handshake. Any goroutine or task may call it.
func (c *Conn) CloseNow() error {
	c.closeByUser()
	return nil
}

// The blocking API, for goroutines.

// block polls f on the calling goroutine until it completes or ctx ends. On
// a connection over a net.Conn, whose futures block inside Poll, an ending
// ctx sets a past deadline on the net.Conn to stop the I/O in progress,
// which breaks the connection.
func block[T any](ctx context.Context, c *Conn, f future.Future[future.Result[T]]) (T, error) {
	nc := c.NetConn()
	if nc != nil && ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() {
			_ = nc.SetDeadline(time.Unix(1, 0))
			c.closeTransport()
		})
		defer stop()
	}
	r, err := future.Block(ctx, f)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("websocket: %w", err)
	}
	if r.Err != nil && ctx.Err() != nil && nc != nil {
		var zero T
		return zero, fmt.Errorf("websocket: %w (%w)", ctx.Err(), r.Err)
	}
	return r.Value, r.Err
}

// Read reads the next data message on the calling goroutine (see
// ReadMessage) and returns its type and a copy of its payload. When ctx
// ends first it returns an error wrapping ctx's; on the runtime's streams
// the connection stays usable, on a net.Conn it is closed.
func (c *Conn) Read(ctx context.Context) (MessageType, []byte, error) {
	m, err := block(ctx, c, future.Future[future.Result[Message]](c.ReadMessage()))
	if err != nil {
		return 0, nil, err
	}
	return m.Type, append([]byte(nil), m.Data...), nil
}

// Write sends data as one message of type typ on the calling goroutine
// (see WriteMessage). When ctx ends while the frame is on its way the
// connection is closed.
func (c *Conn) Write(ctx context.Context, typ MessageType, data []byte) error {
	_, err := block(ctx, c, future.Future[future.Result[struct{}]](c.WriteMessage(typ, data)))
	return err
}

// WritePrepared sends a prepared message on the calling goroutine (see
// WritePreparedMessage). When ctx ends while a frame is on its way the
// connection is closed.
func (c *Conn) WritePrepared(ctx context.Context, pm *PreparedMessage) error {
	_, err := block(ctx, c, future.Future[future.Result[struct{}]](c.WritePreparedMessage(pm)))
	return err
}

// PingContext sends a ping with data on the calling goroutine.
func (c *Conn) PingContext(ctx context.Context, data []byte) error {
	_, err := block(ctx, c, future.Future[future.Result[struct{}]](c.Ping(data)))
	return err
}

// CloseContext runs the close handshake on the calling goroutine (see
// Close); ctx bounds it as well as Options.CloseTimeout.
func (c *Conn) CloseContext(ctx context.Context, code StatusCode, reason string) error {
	if nc := c.NetConn(); nc != nil {
		// The handshake's read blocks in the net.Conn: bound it there.
		_ = nc.SetReadDeadline(time.Now().Add(c.cfg.closeTimeout))
	}
	_, err := block(ctx, c, future.Future[future.Result[struct{}]](c.Close(code, reason)))
	c.closeTransport()
	return err
}

// MessageWriter streams one message as a sequence of fragments; see
// NextWriter.
type MessageWriter struct {
	c      *Conn
	ctx    context.Context
	op     byte
	closed bool
	err    error
	// zip is the compressor of a compressed message, taken at the first
	// Write (the connection's with context takeover, else a pooled one
	// given back by Close); tailOwed says the last fragment's flush tail
	// was held back and starts the next fragment (the final one's is
	// dropped, as RFC 7692 asks).
	zip      *compressor
	tailOwed bool
	// cbuf is the compressed fragment under way.
	cbuf []byte
}

// NextWriter starts a message of type typ that is written in parts, on
// the calling goroutine: each Write of the returned writer sends a
// fragment, Close sends the final one. The writer holds the connection's
// write lock from NextWriter to Close, so other writers, and the pongs and
// close replies of the reader, wait for Close: write the message without
// delay. ctx bounds the wait for the lock and every write.
//
// With permessage-deflate negotiated the message is compressed whatever
// its size: each Write is deflated and flushed into its fragment.
func (c *Conn) NextWriter(ctx context.Context, typ MessageType) (*MessageWriter, error) {
	if typ != TextMessage && typ != BinaryMessage {
		return nil, fmt.Errorf("websocket: write: invalid message type %d", int(typ))
	}
	if err := c.lockWriteBlocking(ctx); err != nil {
		return nil, err
	}
	return &MessageWriter{c: c, ctx: ctx, op: byte(typ)}, nil
}

// Write sends p as the next fragment of the message.
func (w *MessageWriter) Write(p []byte) (int, error) {
	switch {
	case w.closed:
		return 0, ErrClosed
	case w.err != nil:
		return 0, w.err
	case len(p) == 0:
		return 0, nil
	}
	payload, rsv := p, false
	if w.c.dfl() != nil {
		payload, rsv = w.deflate(p), w.op != opContinuation
	}
	if err := w.frame(false, rsv, payload); err != nil {
		w.err = err
		return 0, err
	}
	w.op = opContinuation
	return len(p), nil
}

// deflate compresses p into the connection's compression buffer (the
// writer holds the write lock): the tail owed by the last fragment, then
// p flushed, less its own tail, which the next fragment owes.
func (w *MessageWriter) deflate(p []byte) []byte {
	d := w.c.dfl()
	if w.zip == nil {
		if !d.wTakeover {
			w.zip = getCompressor(d.level)
		} else {
			x := w.c.dctx()
			if x.wctx == nil {
				x.wctx = getCompressor(d.level)
			}
			w.zip = x.wctx
		}
	}
	b := w.cbuf[:0]
	if w.tailOwed {
		b = append(b, deflateTail...)
	}
	b = w.zip.write(b, p)
	w.cbuf = b
	w.tailOwed = true
	return b[:len(b)-len(deflateTail)]
}

// releaseZip gives a pooled compressor back at the end of the message.
func (w *MessageWriter) releaseZip() {
	if w.zip != nil && !w.c.dfl().wTakeover {
		putCompressor(w.c.dfl().level, w.zip)
	}
	w.zip = nil
}

// Close ends the message with an empty final fragment (a message without
// a Write is one empty frame) and releases the write lock.
func (w *MessageWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.err
	if err == nil {
		err = w.frame(true, false, nil)
	}
	w.releaseZip()
	w.c.unlockWrite()
	return err
}

// frame writes one fragment under the lock the writer holds, with RSV1
// on the first fragment of a compressed message.
func (w *MessageWriter) frame(fin, rsv1 bool, p []byte) error {
	f := &WriteFuture{w: frameWrite{c: w.c, op: w.op, fin: fin, payload: p, held: true, rsv1: rsv1}}
	_, err := block(w.ctx, w.c, future.Future[future.Result[struct{}]](f))
	return err
}
