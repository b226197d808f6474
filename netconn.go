package blitz

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
)

// NetConn adapts a TCPStream or UnixStream (anything with the stream
// methods) to net.Conn, so that ordinary Go code (net/http, crypto/tls,
// bufio) runs over the runtime's I/O: its blocking Read and Write submit
// the stream's ops and wait on the calling goroutine, and deadlines cancel
// the op in flight. Any goroutine may call its methods, concurrently; Reads
// are serialized among themselves, Writes too. Do not use the stream's
// futures and the adapter on the same stream at once.
func NetConn(s interface{ stream() *conn }) net.Conn {
	return newNetConn(s.stream())
}

func (c *conn) stream() *conn { return c }

func newNetConn(c *conn) *netConn {
	nc := &netConn{c: c}
	nc.rd.init()
	nc.wd.init()
	return nc
}

// netConn is the adapter. rmu and wmu serialize reads and writes; rf and wf
// are the futures they reuse (so a Read allocates nothing), owned by the
// holder of the mutex.
type netConn struct {
	c      *conn
	rmu    sync.Mutex
	rf     ReadFuture
	wmu    sync.Mutex
	wf     WriteFuture
	rd, wd deadline
}

// Read reads into b, waiting for data, the end of the stream (io.EOF), an
// error, or the read deadline (os.ErrDeadlineExceeded).
func (nc *netConn) Read(b []byte) (int, error) {
	nc.rmu.Lock()
	defer nc.rmu.Unlock()
	if len(b) == 0 {
		return 0, nil
	}
	if nc.rd.expired() {
		return 0, nc.c.n.opError("read", timeoutError{errDeadline})
	}
	nc.rf = ReadFuture{n: nc.c.n, buf: b, f: ioFuture{fast: true}}
	r := waitWithDeadline(&nc.rf, &nc.rf.f, &nc.rd)
	switch {
	case !r.expired, r.res.Err == nil, r.res.Err == io.EOF, errors.Is(r.res.Err, ErrClosed):
		// A result that won the race with the deadline's cancel is
		// delivered as it is.
		return r.res.Value, r.res.Err
	}
	return 0, nc.c.n.opError("read", timeoutError{errDeadline})
}

// Write writes all of b, or returns how much it wrote with the error.
func (nc *netConn) Write(b []byte) (int, error) {
	nc.wmu.Lock()
	defer nc.wmu.Unlock()
	written := 0
	for written < len(b) {
		if nc.wd.expired() {
			return written, nc.c.n.opError("write", timeoutError{errDeadline})
		}
		nc.wf = WriteFuture{n: nc.c.n, buf: b[written:], f: ioFuture{fast: true}}
		r := waitWithDeadline(&nc.wf, &nc.wf.f, &nc.wd)
		written += r.res.Value
		if r.expired && (r.res.Err == nil || errors.Is(r.res.Err, backend.ErrCanceled)) && written < len(b) {
			// The deadline's cancel stopped the send (or it finished a
			// part first).
			return written, nc.c.n.opError("write", timeoutError{errDeadline})
		}
		if r.res.Err != nil {
			return written, r.res.Err
		}
	}
	return written, nil
}

// outcome is what waitWithDeadline saw.
type outcome struct {
	res     future.Result[int]
	expired bool
}

// waitWithDeadline polls f on the calling goroutine until it completes.
// When dl expires first, the op is cancelled and waited for (its buffer is
// the caller's again only after its final completion), and the outcome says
// expired.
func waitWithDeadline(f future.Future[future.Result[int]], io *ioFuture, dl *deadline) outcome {
	var sw signalWaker
	cx := sw.context()
	expired := false
	for {
		if r, ok := f.Poll(cx); ok {
			return outcome{res: r, expired: expired}
		}
		if expired {
			sw.wait()
			continue
		}
		select {
		case <-sw.sig.Chan():
		case <-dl.wait():
			expired = true
			if io.slot != nil {
				io.slot.io.requestCancel()
			}
		}
	}
}

// Close closes the connection; blocked Reads and Writes return ErrClosed.
func (nc *netConn) Close() error {
	err := nc.c.Close()
	nc.rd.set(time.Time{})
	nc.wd.set(time.Time{})
	return err
}

func (nc *netConn) LocalAddr() net.Addr  { return nc.c.LocalAddr() }
func (nc *netConn) RemoteAddr() net.Addr { return nc.c.RemoteAddr() }

// SetDeadline sets both deadlines.
func (nc *netConn) SetDeadline(t time.Time) error {
	if nc.c.n.isClosed() {
		return nc.c.n.opError("set", ErrClosed)
	}
	nc.rd.set(t)
	nc.wd.set(t)
	return nil
}

// SetReadDeadline sets the read deadline; it applies to a Read in progress
// too.
func (nc *netConn) SetReadDeadline(t time.Time) error {
	if nc.c.n.isClosed() {
		return nc.c.n.opError("set", ErrClosed)
	}
	nc.rd.set(t)
	return nil
}

// SetWriteDeadline sets the write deadline; it applies to a Write in
// progress too.
func (nc *netConn) SetWriteDeadline(t time.Time) error {
	if nc.c.n.isClosed() {
		return nc.c.n.opError("set", ErrClosed)
	}
	nc.wd.set(t)
	return nil
}

// CloseWrite and CloseRead shut down one half, as *net.TCPConn's do (so
// that code probing for them, like io.Copy's users and net/http, finds
// them).
func (nc *netConn) CloseWrite() error { return nc.c.CloseWrite() }
func (nc *netConn) CloseRead() error  { return nc.c.CloseRead() }

// deadline is one direction's deadline: a channel closed when it passes,
// replaced when the deadline is moved. mu guards all fields.
type deadline struct {
	mu    sync.Mutex
	t     time.Time
	timer *time.Timer
	ch    chan struct{}
	fired bool
}

func (d *deadline) init() { d.ch = make(chan struct{}) }

// set moves the deadline to t (the zero time: none). A blocked op sees the
// change: a past t fires at once.
func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	if d.fired {
		d.ch = make(chan struct{})
		d.fired = false
	}
	d.t = t
	if t.IsZero() {
		return
	}
	dur := time.Until(t)
	if dur <= 0 {
		close(d.ch)
		d.fired = true
		return
	}
	ch := d.ch
	d.timer = time.AfterFunc(dur, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.ch == ch && !d.fired {
			close(ch)
			d.fired = true
		}
	})
}

// wait returns the channel closed when the current deadline passes.
func (d *deadline) wait() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ch
}

// expired reports whether the deadline has passed.
func (d *deadline) expired() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fired || (!d.t.IsZero() && !time.Now().Before(d.t))
}

// NetListener adapts a TCPListener or UnixListener to net.Listener: Accept
// blocks the calling goroutine and returns NetConn adapters.
func NetListener(l interface{ base() *listener }) net.Listener {
	return &netListener{l: l.base()}
}

func (l *listener) base() *listener { return l }

// netListener is the adapter; mu serializes Accepts.
type netListener struct {
	l  *listener
	mu sync.Mutex
}

// Accept waits for a connection. Out of descriptors it backs off and
// retries, and it skips a connection reset or aborted before it was taken
// (see AcceptFuture), rather than returning an error.
func (nl *netListener) Accept() (net.Conn, error) {
	nl.mu.Lock()
	defer nl.mu.Unlock()
	f := AcceptFuture[*conn]{l: nl.l, wrap: func(r *ioRing, fd backend.FD, kind netKind, peer backend.Addr) *conn {
		return acceptStream(r, fd, kind, peer, func(c *conn, n *netFD) { c.n = n })
	}}
	var sw signalWaker
	cx := sw.context()
	for {
		if r, ok := f.Poll(cx); ok {
			if r.Err != nil {
				return nil, r.Err
			}
			return newNetConn(r.Value), nil
		}
		sw.wait()
	}
}

// Close closes the listener; a blocked Accept returns ErrClosed.
func (nl *netListener) Close() error { return nl.l.Close() }

// Addr returns the listener's address.
func (nl *netListener) Addr() net.Addr { return nl.l.Addr() }
