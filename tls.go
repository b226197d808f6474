package blitz

// TLS over the runtime's streams: crypto/tls driven by the task that reads
// or writes, with no goroutine held while a connection is idle.
//
// # How crypto/tls is driven
//
// A TLSStream owns a tls.Conn over a private net.Conn, the shim (tlsShim),
// that never touches the socket: its Read serves ciphertext the task has
// already received from the transport, and its Write queues ciphertext for
// the task to send. The transport is read and written only by the task,
// with the transport's own futures (a pooled read for TCP and Unix streams,
// so an idle connection holds no read buffer either).
//
// Records (after the handshake). PollRead first calls tls.Conn.Read on the
// task itself. If crypto/tls needs bytes the shim does not have, the shim's
// Read fails with errTLSWouldBlock, a net.Error whose Timeout and Temporary
// report true: crypto/tls's record layer treats such an error as it treats
// a read deadline on a net.Conn, keeping the partial record in its input
// buffer and leaving the connection usable (it poisons the connection only
// with a non-temporary error). PollRead then waits for the transport
// asynchronously, gives the bytes to the shim and calls tls.Conn.Read
// again. So decryption runs on the worker, in the task's poll, and a task
// waiting for data holds an async read and nothing else. PollWrite calls
// tls.Conn.Write on the task too: the shim's Write only appends to a queue,
// so it cannot block, and the task then sends the queue with the
// transport's write futures (or its PollWrite). Nothing is lost on the way: bytes the shim has not
// given to crypto/tls stay in the shim, bytes it has stay in crypto/tls's
// buffers, and records are queued and sent in the order crypto/tls made
// them, whichever side made them (a read can make a record too: the answer
// to a TLS 1.3 key update, an alert). Only the write side sends: a record a
// read made waits in the queue for the next write or CloseWrite, so that
// the transport has one writer.
//
// The handshake. crypto/tls's handshake is a function that calls Read and
// Write and keeps its state on its stack; it cannot be left and resumed,
// and it fails for good at its first error. So it runs on a goroutine of
// its own (started at the first Handshake, PollRead or PollWrite) whose
// shim Read waits, on a condition variable, for bytes the task feeds it.
// The task that drives the handshake (the driver, see tlsSeat) sends what
// the goroutine queued, and reads from the transport only when the
// goroutine waits for bytes. The goroutine ends with the handshake; it is
// not taken from the runtime's blocking pool because it waits for the peer,
// and a bounded pool full of handshakes waiting for peers whose own
// handshakes are queued behind them would stall. Cancelling the driving
// future (or closing the stream) ends the handshake with an error, so the
// goroutine never outlives the task that owns it.
//
// Ownership. One task reads (PollRead, CancelRead) and one task writes
// (PollWrite, CancelWrite, CloseWrite) at a time; they may be different
// tasks. The read side (TLSStream.rd) is owned by the reader, the write
// side (TLSStream.wr) by the writer. During the handshake the driver uses
// both sides' transport operations; the other task waits for the
// handshake, so the two never use a side at once. The shim's fields are
// guarded by its mutex.

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

var (
	// ErrTLSHandshakeCancelled is the error of a TLS handshake whose driving
	// future was cancelled (a Handshake future, or a PollRead or PollWrite
	// that started the handshake, abandoned by a timeout or a select): the
	// handshake cannot resume, so the stream fails with it.
	ErrTLSHandshakeCancelled = errors.New("blitz: TLS handshake cancelled")
)

// TLSTransport is the stream a TLSStream runs over: *TCPStream and
// *UnixStream, or any AsyncReader and AsyncWriter with a Close. A transport
// with ReadPooled (TCPStream, UnixStream) is read with pooled reads, so an
// idle TLS connection holds no read buffer; others are read into a buffer
// of the TLSStream's while a read waits. Optional methods are used when
// present: LocalAddr and RemoteAddr, SetReadTimeout and SetWriteTimeout.
type TLSTransport interface {
	AsyncReader
	AsyncWriter
	io.Closer
}

// pooledReader is a transport with pooled reads (conn's ReadPooled).
type pooledReader interface {
	ReadPooled() *ReadPooledFuture
}

// futureWriter is a transport whose writes are futures of their own
// (conn's Write). The TLSStream writes with them rather than with PollWrite,
// whose state, kept in the stream between writes, would keep the last
// buffer written (a 16 KiB buffer of tlsBufs) alive while the connection
// is idle.
type futureWriter interface {
	Write(buf []byte) *WriteFuture
}

// TLSStream is a TLS connection over a runtime stream, used by tasks: an
// AsyncReader and AsyncWriter (so Read, ReadFull, WriteAll, Copy and
// BufReader work on it), with futures like TCPStream's. Make one with
// TLSServer or TLSClient, or accept one from a TLSListener.
//
// The handshake runs at the first Handshake, read or write, in the task
// that polls it; see Handshake. While the connection waits for data it
// holds no goroutine (a TCP or Unix transport does not even hold a read
// buffer): records are decrypted and encrypted by the polling task.
//
// Errors are crypto/tls's and the transport's: io.EOF after the peer's
// close_notify (or when the peer closes at a record boundary without one,
// as crypto/tls accepts), io.ErrUnexpectedEOF in the middle of a record,
// TLS alerts as crypto/tls reports them, the transport's timeout error
// (os.ErrDeadlineExceeded) and net.ErrClosed after Close.
//
// A record that a read makes (the answer to a TLS 1.3 key update) is sent
// with the next write or CloseWrite.
//
// A cancelled read (CancelRead) loses nothing and leaves the stream
// usable. A cancelled write (CancelWrite) has already encrypted its bytes
// (up to 64 KiB of them): they stay queued, and the next write or CloseWrite
// sends them first. Cancelling the future that drives the handshake fails
// the stream with ErrTLSHandshakeCancelled.
type TLSStream struct {
	_      noCopy
	tr     TLSTransport
	pooled pooledReader // tr's pooled reads; nil when tr has none. Immutable.
	fw     futureWriter // tr's write futures; nil when tr has none. Immutable.
	tc     *tls.Conn    // immutable; used by the handshake goroutine until the handshake ends, then by the tasks
	sh     tlsShim

	// hs is the handshake's state (tlsHS*): stored with release once
	// hsErr is set (by the driver that completes the handshake); loaded
	// with acquire by the fast path of every read and write.
	hs    atomic.Uint32
	hsErr error

	// rd is the read side: the transport read in flight. Owned by the
	// reading task, or by the handshake's driver while it holds the seat.
	rd tlsReadSide
	// wr is the write side: the ciphertext being sent. Owned by the writing
	// task, or by the handshake's driver while it holds the seat.
	wr tlsWriteSide
}

// The handshake's states (TLSStream.hs).
const (
	tlsHSIdle     uint32 = iota // not started
	tlsHSRunning                // the goroutine runs, or ended and its outcome is not yet taken
	tlsHSComplete               // ended, its ciphertext sent; hsErr is the outcome
)

// tlsSeat marks who drives the handshake: the read side, the write side or
// a Handshake future each have one, and the shim's driver points at the
// seat of the one driving. Non-empty so that each seat has its own address.
type tlsSeat struct{ _ byte }

// tlsReadSide is the state of the transport read in flight.
type tlsReadSide struct {
	seat  tlsSeat
	pf    *ReadPooledFuture // the pooled read in flight, or nil
	plain bool              // a PollRead of the transport into buf is in flight
	buf   []byte            // the plain read's buffer (from tlsBufs)
}

// tlsWriteSide is the state of the ciphertext being sent.
type tlsWriteSide struct {
	seat    tlsSeat
	sending []byte       // ciphertext taken from the shim's queue, being written; nil when none
	wf      *WriteFuture // the transport's write of sending[off:] in flight, with fw
	off     int          // bytes of sending written
	active  bool         // a PollWrite's plaintext is encrypted and being sent
	n       int          // that PollWrite's count of plaintext bytes
	err     error        // a transport write failed: a record may be cut, so every later write fails
}

// tlsWriteChunk bounds the plaintext one PollWrite encrypts (a few records).
const tlsWriteChunk = 64 << 10

// tlsBufSize is the size of the buffers of tlsBufs: a full TLS record and
// its header, with room to spare.
const tlsBufSize = 16<<10 + 512

// tlsBufs recycles the shim's and the plain reads' buffers between
// connections, so an idle connection keeps none.
var tlsBufs = sync.Pool{New: func() any { b := make([]byte, tlsBufSize); return &b }}

func getTLSBuf() []byte { return (*tlsBufs.Get().(*[]byte))[:tlsBufSize] }

// putTLSBuf recycles b unless it grew much larger than the pool's size.
func putTLSBuf(b []byte) {
	if cap(b) < tlsBufSize || cap(b) > 8*tlsBufSize {
		return
	}
	b = b[:cap(b)]
	tlsBufs.Put(&b)
}

// TLSServer returns the server side of a TLS connection over tr, which it
// owns from now on (Close closes it). cfg must have a certificate (see
// tls.Server); it must not be modified afterwards.
func TLSServer(tr TLSTransport, cfg *tls.Config) *TLSStream {
	s := newTLSStream(tr)
	s.tc = tls.Server(&s.sh, cfg)
	return s
}

// TLSClient returns the client side of a TLS connection over tr, which it
// owns from now on (Close closes it). cfg needs ServerName or
// InsecureSkipVerify (see tls.Client); it must not be modified afterwards.
func TLSClient(tr TLSTransport, cfg *tls.Config) *TLSStream {
	s := newTLSStream(tr)
	s.tc = tls.Client(&s.sh, cfg)
	return s
}

func newTLSStream(tr TLSTransport) *TLSStream {
	s := &TLSStream{tr: tr}
	s.pooled, _ = tr.(pooledReader)
	s.fw, _ = tr.(futureWriter)
	s.sh.cond.L = &s.sh.mu
	s.sh.tr = tr
	return s
}

// Handshake returns a future that runs the TLS handshake, or waits for the
// one already running, and resolves to its error (nil once the connection
// is established). Reads and writes run it themselves when it has not run,
// so calling Handshake is needed only to learn its outcome first (to see
// ConnectionState, to bound it with Timeout). The handshake's crypto/tls
// code runs on a goroutine of its own while it lasts; the task reads and
// writes the transport for it. Cancelling the future while it drives the
// handshake fails the stream with ErrTLSHandshakeCancelled.
func (s *TLSStream) Handshake() *TLSHandshakeFuture { return &TLSHandshakeFuture{s: s} }

// TLSHandshakeFuture is the future of Handshake: its pointer is a
// future.Future[future.Result[struct{}]] and a future.Canceler.
type TLSHandshakeFuture struct {
	_    noCopy
	s    *TLSStream
	seat tlsSeat
	done bool
}

// Poll drives the handshake.
func (f *TLSHandshakeFuture) Poll(cx *future.Context) (future.Result[struct{}], bool) {
	if f.done {
		panic(future.ErrPolledAfterCompletion)
	}
	err, ok := f.s.handshake(cx, &f.seat)
	if !ok {
		return future.Result[struct{}]{}, false
	}
	f.done = true
	return future.Result[struct{}]{Err: err}, true
}

// Cancel abandons the wait; if this future drives the handshake, the
// handshake fails with ErrTLSHandshakeCancelled.
func (f *TLSHandshakeFuture) Cancel() {
	if !f.done {
		f.done = true
		f.s.leaveHandshake(&f.seat)
	}
}

// ConnectionState returns the connection's TLS details (version, cipher
// suite, peer certificates, negotiated protocol) once the handshake has
// completed, and the zero ConnectionState before.
func (s *TLSStream) ConnectionState() tls.ConnectionState {
	if s.hs.Load() != tlsHSComplete { // acquire: pairs with the driver's Store in finishHandshake
		return tls.ConnectionState{}
	}
	return s.tc.ConnectionState()
}

// Transport returns the stream the TLS connection runs over. Reading or
// writing it directly corrupts the TLS connection; it is for its options
// (SetNoDelay, SetKeepAlive) and its addresses.
func (s *TLSStream) Transport() TLSTransport { return s.tr }

// LocalAddr and RemoteAddr return the transport's addresses, or an address
// of network "tls" with an empty string when the transport has none.
func (s *TLSStream) LocalAddr() net.Addr  { return s.sh.LocalAddr() }
func (s *TLSStream) RemoteAddr() net.Addr { return s.sh.RemoteAddr() }

// SetReadTimeout bounds each later read of the transport, when the
// transport has timeouts (TCPStream, UnixStream): a read that waits longer
// fails with the transport's timeout error (errors.Is ErrTimeout and
// os.ErrDeadlineExceeded), and the TLS stream stays usable. It bounds the
// handshake's reads too, and a handshake read that times out fails the
// handshake. 0 removes the bound.
func (s *TLSStream) SetReadTimeout(d time.Duration) {
	if t, ok := s.tr.(interface{ SetReadTimeout(time.Duration) }); ok {
		t.SetReadTimeout(d)
	}
}

// SetWriteTimeout bounds each later send of ciphertext on the transport,
// when the transport has timeouts. A send that times out may have cut a
// record, so the stream's writes fail from then on.
func (s *TLSStream) SetWriteTimeout(d time.Duration) {
	if t, ok := s.tr.(interface{ SetWriteTimeout(time.Duration) }); ok {
		t.SetWriteTimeout(d)
	}
}

// Read returns a future of one read of plaintext into buf (PollRead as a
// future): the count, io.EOF at the end of the stream.
func (s *TLSStream) Read(buf []byte) *StreamFuture[int] { return Read(s, buf) }

// Write returns a future of one write of plaintext from buf, which may be
// short (at most 64 KiB is encrypted per write); WriteAll writes it all.
func (s *TLSStream) Write(buf []byte) *StreamFuture[int] { return Write(s, buf) }

// WriteAll returns a future that writes all of buf.
func (s *TLSStream) WriteAll(buf []byte) *StreamFuture[int] { return WriteAll(s, buf) }

// Close closes the transport at once, without a close_notify (complete
// CloseWrite first for a clean end): reads and writes in flight fail with
// net.ErrClosed, and so does a handshake running, whose goroutine ends.
func (s *TLSStream) Close() error {
	s.sh.fail(net.ErrClosed)
	return s.tr.Close()
}

// CloseWrite returns a future that sends the TLS close_notify alert, after
// any ciphertext still queued: the peer's reads then end with io.EOF. Later
// writes fail (crypto/tls's error); reading goes on. It does not shut down
// the transport's sending side (as tls.Conn.CloseWrite does not); Close
// the stream when done. It is a write: it must not run with another write
// of the stream. It waits for a handshake that is running; before any
// handshake, or after a failed one, it fails with crypto/tls's error.
func (s *TLSStream) CloseWrite() *StreamFuture[struct{}] {
	started := false
	return &StreamFuture[struct{}]{
		poll: func(cx *future.Context) (future.Result[struct{}], bool) {
			if !started {
				if s.hs.Load() != tlsHSIdle { // acquire: pairs with handshake's Store
					if _, ok := s.handshake(cx, &s.wr.seat); !ok {
						return future.Result[struct{}]{}, false
					}
				}
				started = true
				if err := s.tc.CloseWrite(); err != nil {
					return future.Fail[struct{}](err), true
				}
			}
			if err, ok := s.pollFlushQueue(cx); !ok {
				return future.Result[struct{}]{}, false
			} else if err != nil {
				return future.Fail[struct{}](err), true
			}
			return future.Ok(struct{}{}), true
		},
		// Abandoned after the alert was queued, the alert stays queued
		// (writes fail after CloseWrite, so only another CloseWrite sends
		// it); abandoned while driving the handshake, the handshake fails.
		cancel: func() {
			if !started {
				s.leaveHandshake(&s.wr.seat)
			}
		},
	}
}

// PollRead reads plaintext; see AsyncReader. It runs the handshake first if
// it has not completed.
func (s *TLSStream) PollRead(cx *future.Context, buf []byte) (future.Result[int], bool) {
	if err, ok := s.handshake(cx, &s.rd.seat); !ok {
		return future.Result[int]{}, false
	} else if err != nil {
		return future.Fail[int](err), true
	}
	if len(buf) == 0 {
		return future.Ok(0), true
	}
	if !cx.Proceed() {
		return future.Result[int]{}, false
	}
	for {
		if !s.rd.inFlight() {
			n, err := s.tc.Read(buf)
			if n > 0 {
				// A close_notify read behind the data comes with it as
				// io.EOF; the next read reports it (crypto/tls keeps it).
				cx.Spend()
				return future.Ok(n), true
			}
			if err != nil && !errors.Is(err, errTLSWouldBlock) {
				cx.Spend()
				return future.Fail[int](err), true
			}
		}
		err, ok := s.pollFeed(cx)
		if !ok {
			return future.Result[int]{}, false
		}
		if err != nil {
			// The transport's error (a timeout, a reset, Close): crypto/tls
			// never saw it, so the stream is as it was and a timed-out read
			// can be retried.
			return future.Fail[int](err), true
		}
	}
}

// CancelRead abandons the read in flight, losing nothing: the transport
// keeps what it received for the next read. If the read was driving the
// handshake, the handshake fails with ErrTLSHandshakeCancelled.
func (s *TLSStream) CancelRead() {
	if s.leaveHandshake(&s.rd.seat) {
		return
	}
	if s.hs.Load() == tlsHSComplete { // acquire: the read side is the reader's again
		s.cancelFeed()
	}
}

// PollWrite encrypts up to 64 KiB of buf and sends it; see AsyncWriter. The
// count is reported once the ciphertext is written to the transport. It
// runs the handshake first if it has not completed.
func (s *TLSStream) PollWrite(cx *future.Context, buf []byte) (future.Result[int], bool) {
	if err, ok := s.handshake(cx, &s.wr.seat); !ok {
		return future.Result[int]{}, false
	} else if err != nil {
		return future.Fail[int](err), true
	}
	w := &s.wr
	for {
		if err, ok := s.pollFlushQueue(cx); !ok {
			return future.Result[int]{}, false
		} else if err != nil {
			w.active = false
			return future.Fail[int](err), true
		}
		if w.active {
			w.active = false
			return future.Ok(w.n), true
		}
		if len(buf) == 0 {
			return future.Ok(0), true
		}
		n, err := s.tc.Write(buf[:min(len(buf), tlsWriteChunk)])
		if err != nil {
			// crypto/tls's error (after CloseWrite, after a failure): it
			// queued nothing it would not send before the error.
			return future.Result[int]{Value: n, Err: err}, true
		}
		w.active, w.n = true, n
	}
}

// CancelWrite abandons the write in flight. Its bytes are encrypted
// already, and crypto/tls's record sequence counts them: they stay queued
// (the transport's write of them too), and the next write or CloseWrite
// sends them first. If the write was driving the handshake, the handshake
// fails with ErrTLSHandshakeCancelled.
func (s *TLSStream) CancelWrite() {
	if s.leaveHandshake(&s.wr.seat) {
		return
	}
	s.wr.active = false
}

// pollFlushQueue sends the ciphertext being sent and everything queued
// behind it, in order, until the queue is empty; ready with nil then, or
// with the transport's error (which fails every later write). The writer
// (or the handshake's driver) calls it.
func (s *TLSStream) pollFlushQueue(cx *future.Context) (error, bool) {
	w := &s.wr
	for {
		if w.err != nil {
			return w.err, true
		}
		if w.sending == nil {
			w.sending, w.off = s.sh.takeOut(), 0
			if w.sending == nil {
				return nil, true
			}
		}
		r, ok := s.pollTransportWrite(cx)
		if !ok {
			return nil, false
		}
		if r.Err != nil {
			w.err = r.Err
			w.sending = nil // the transport is done with it, but may have kept nothing: drop, not recycle
			return w.err, true
		}
		w.off += r.Value
		if w.off == len(w.sending) {
			putTLSBuf(w.sending)
			w.sending = nil
		}
	}
}

// pollTransportWrite polls the transport's write of sending[off:],
// starting it if none is in flight. The writer calls it.
func (s *TLSStream) pollTransportWrite(cx *future.Context) (future.Result[int], bool) {
	w := &s.wr
	if s.fw == nil {
		return s.tr.PollWrite(cx, w.sending[w.off:])
	}
	if w.wf == nil {
		w.wf = s.fw.Write(w.sending[w.off:])
	}
	r, ok := w.wf.Poll(cx)
	if ok {
		w.wf = nil
	}
	return r, ok
}

// cancelTransportWrite cancels the transport's write in flight, if any.
func (s *TLSStream) cancelTransportWrite() {
	w := &s.wr
	switch {
	case w.wf != nil:
		w.wf.Cancel()
		w.wf = nil
	case w.sending != nil:
		s.tr.CancelWrite()
	}
}

// inFlight reports whether a transport read is in flight.
func (r *tlsReadSide) inFlight() bool { return r.pf != nil || r.plain }

// pollFeed polls the transport read in flight, starting one if none is,
// and gives the shim what it received: ready with nil when the shim got
// bytes or the end of the stream, or with the transport's error. The
// reader (or the handshake's driver) calls it.
func (s *TLSStream) pollFeed(cx *future.Context) (error, bool) {
	r := &s.rd
	if s.pooled != nil {
		if r.pf == nil {
			r.pf = s.pooled.ReadPooled()
		}
		res, ok := r.pf.Poll(cx)
		if !ok {
			return nil, false
		}
		r.pf = nil
		if res.Err != nil {
			if errors.Is(res.Err, io.EOF) {
				s.sh.feedEOF()
				return nil, true
			}
			return res.Err, true
		}
		s.sh.feed(res.Value.Bytes())
		res.Value.Release()
		return nil, true
	}
	if !r.plain {
		r.buf, r.plain = getTLSBuf(), true
	}
	res, ok := s.tr.PollRead(cx, r.buf)
	if !ok {
		return nil, false
	}
	r.plain = false
	if res.Value > 0 {
		s.sh.feed(r.buf[:res.Value])
	}
	putTLSBuf(r.buf)
	r.buf = nil
	switch {
	case res.Err == nil:
		return nil, true
	case errors.Is(res.Err, io.EOF):
		s.sh.feedEOF()
		return nil, true
	}
	return res.Err, true
}

// cancelFeed cancels the transport read in flight, if any; what it
// received goes to the transport's next read (see AsyncReader).
func (s *TLSStream) cancelFeed() {
	r := &s.rd
	if r.pf != nil {
		r.pf.Cancel()
		r.pf = nil
	}
	if r.plain {
		s.tr.CancelRead()
		r.plain = false
		putTLSBuf(r.buf)
		r.buf = nil
	}
}

// handshake runs the handshake for the caller owning seat, or waits for it:
// ready with its outcome once it has completed. The first caller takes the
// driver's seat and keeps it until the handshake completes or it leaves
// (leaveHandshake); the others wait. See "How crypto/tls is driven".
func (s *TLSStream) handshake(cx *future.Context, seat *tlsSeat) (error, bool) {
	if s.hs.Load() == tlsHSComplete { // acquire: pairs with finishHandshake's Store; hsErr is set
		return s.hsErr, true
	}
	if h, ok := Current(cx); ok {
		if err := h.rt.refuseSimulated("a TLS handshake"); err != nil {
			return err, true
		}
	}
	sh := &s.sh
	sh.mu.Lock()
	if s.hs.Load() == tlsHSComplete {
		sh.mu.Unlock()
		return s.hsErr, true
	}
	if sh.driver != nil && sh.driver != seat {
		sh.addWaiter(cx.Waker())
		sh.mu.Unlock()
		return nil, false
	}
	sh.driver = seat
	if wk := cx.Waker(); !sh.wk.WillWake(wk) {
		sh.wk = wk
	}
	if s.hs.Load() == tlsHSIdle {
		s.hs.Store(tlsHSRunning)
		sh.blocking = true
		go s.runHandshake()
	}
	sh.mu.Unlock()
	for {
		err, flushed := s.pollFlushQueue(cx)
		if flushed && err != nil {
			sh.fail(err)
		}
		sh.mu.Lock()
		ended, hsErr, queued := sh.hsDone, sh.hsErr, len(sh.out) > 0
		wants := sh.wantRead && sh.inEmptyLocked() && sh.readErr == nil && !sh.eof && sh.closedErr == nil
		sh.mu.Unlock()
		switch {
		case ended && (flushed && !queued || s.wr.err != nil):
			s.cancelFeed()
			s.finishHandshake(hsErr)
			return s.hsErr, true
		case ended && flushed:
			continue // the goroutine queued more before it ended
		case !ended && (wants || s.rd.inFlight()):
			err, ok := s.pollFeed(cx)
			if !ok {
				return nil, false
			}
			if err != nil {
				sh.setReadErr(err)
			}
			continue
		}
		// Waiting for the transport's write, or for the goroutine (it
		// wakes sh.wk when it queues, waits for bytes or ends).
		return nil, false
	}
}

// runHandshake is the handshake's goroutine: it runs crypto/tls's
// handshake over the shim and records its outcome for the driver.
func (s *TLSStream) runHandshake() {
	err := s.tc.HandshakeContext(context.Background())
	sh := &s.sh
	sh.mu.Lock()
	sh.hsDone, sh.hsErr = true, err
	sh.blocking, sh.wantRead = false, false
	wk := sh.wk
	sh.mu.Unlock()
	wk.Wake()
}

// finishHandshake records the handshake's outcome, releases the driver's
// seat and wakes the tasks waiting for the handshake. The driver calls it.
func (s *TLSStream) finishHandshake(err error) {
	sh := &s.sh
	sh.mu.Lock()
	s.hsErr = err
	s.hs.Store(tlsHSComplete) // release: hsErr, and the tls.Conn's state, to the fast path of handshake
	sh.driver = nil
	sh.wk = waker.Waker{}
	ws := sh.waiters
	sh.waiters = nil
	sh.mu.Unlock()
	for _, wk := range ws {
		wk.Wake()
	}
}

// leaveHandshake is the cancel of the future that owns seat: if it drives
// the handshake, the handshake fails with ErrTLSHandshakeCancelled (the
// goroutine ends at its next read or write) and its transport operations
// are cancelled. It reports whether seat was driving. The seat's owner
// calls it.
func (s *TLSStream) leaveHandshake(seat *tlsSeat) bool {
	if s.hs.Load() == tlsHSComplete { // acquire: pairs with finishHandshake
		return false
	}
	sh := &s.sh
	sh.mu.Lock()
	if sh.driver != seat {
		sh.mu.Unlock()
		return false
	}
	sh.driver = nil
	sh.wk = waker.Waker{}
	ws := sh.waiters
	sh.waiters = nil
	sh.failLocked(ErrTLSHandshakeCancelled)
	sh.mu.Unlock()
	s.cancelFeed()
	if s.wr.sending != nil {
		// A cut record: the stream is failed anyway; the transport may
		// still hold the buffer, so it is dropped, not recycled.
		s.cancelTransportWrite()
		s.wr.sending = nil
		s.wr.err = ErrTLSHandshakeCancelled
	}
	// A waiter takes the seat and collects the goroutine's outcome.
	for _, wk := range ws {
		wk.Wake()
	}
	return true
}
