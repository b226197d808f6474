package blitz

// The shim: the net.Conn a TLSStream's tls.Conn runs over, which never
// touches the socket (see "How crypto/tls is driven" in tls.go).

import (
	"io"
	"net"
	"sync"
	"time"

	"github.com/blitz-go/blitz/waker"
)

// errTLSWouldBlock is the shim's Read error when it has no bytes and the
// handshake goroutine is not the reader: a net.Error whose Timeout and
// Temporary report true, which crypto/tls's record layer returns without
// failing the connection (as for a read deadline), keeping the partial
// record it has. PollRead then waits for the transport and reads again.
var errTLSWouldBlock error = tlsWouldBlock{}

type tlsWouldBlock struct{}

func (tlsWouldBlock) Error() string   { return "blitz: TLS record incomplete (internal)" }
func (tlsWouldBlock) Timeout() bool   { return true }
func (tlsWouldBlock) Temporary() bool { return true }

// tlsShim is the net.Conn under a TLSStream's tls.Conn. Its Read serves the
// ciphertext the task received from the transport (in); its Write queues
// ciphertext for the task to send (out). During the handshake (blocking),
// Read waits on cond for the task to feed it; otherwise it never waits.
//
// Every field below mu is guarded by mu. Read and Write are called by the
// handshake goroutine during the handshake, and by the reading and writing
// tasks (inside tls.Conn.Read and Write) after it; feed, feedEOF and
// setReadErr by the read side; takeOut by the write side.
type tlsShim struct {
	tr TLSTransport // immutable: for the addresses

	mu   sync.Mutex
	cond sync.Cond // L is &mu; signalled when in, eof, readErr or closedErr change

	in    []byte // received ciphertext: in[inOff:] is not read yet; a tlsBufs buffer or nil
	inOff int
	eof   bool   // the transport reached its end: Read reports io.EOF once in is read
	out   []byte // queued ciphertext, not yet taken by the write side; nil when empty

	// readErr is a transport read error for the handshake's Read (a
	// timeout, a reset); the records' reads do not see transport errors.
	readErr error
	// closedErr, once set, fails every Read and Write: net.ErrClosed after
	// Close, ErrTLSHandshakeCancelled, a transport write error during the
	// handshake.
	closedErr error

	// Handshake state. blocking is true while the handshake goroutine runs
	// (Read waits instead of failing with errTLSWouldBlock); wantRead is
	// set by that goroutine while it waits in Read; hsDone and hsErr are
	// its outcome. driver is the seat of the task driving the handshake,
	// wk that task's waker (woken when the goroutine queues, waits or
	// ends), waiters the wakers of the other tasks waiting for the
	// handshake.
	blocking bool
	wantRead bool
	hsDone   bool
	hsErr    error
	driver   *tlsSeat
	wk       waker.Waker
	waiters  []waker.Waker
}

// Read gives crypto/tls received ciphertext; see tlsShim.
func (c *tlsShim) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		switch {
		case c.closedErr != nil:
			return 0, c.closedErr
		case !c.inEmptyLocked():
			n := copy(p, c.in[c.inOff:])
			c.inOff += n
			if c.inEmptyLocked() {
				putTLSBuf(c.in)
				c.in, c.inOff = nil, 0
			}
			return n, nil
		case c.readErr != nil:
			err := c.readErr
			c.readErr = nil
			return 0, err
		case c.eof:
			return 0, io.EOF
		case !c.blocking:
			return 0, errTLSWouldBlock
		}
		c.wantRead = true
		c.wk.Wake()
		c.cond.Wait()
		c.wantRead = false
	}
}

// Write queues ciphertext for the write side; it never blocks.
func (c *tlsShim) Write(p []byte) (int, error) {
	c.mu.Lock()
	if err := c.closedErr; err != nil {
		c.mu.Unlock()
		return 0, err
	}
	if c.out == nil {
		c.out = getTLSBuf()[:0]
	}
	c.out = append(c.out, p...)
	wk := c.wk
	c.mu.Unlock()
	wk.Wake()
	return len(p), nil
}

// inEmptyLocked reports whether all received ciphertext was read. mu is
// held.
func (c *tlsShim) inEmptyLocked() bool { return c.inOff == len(c.in) }

// feed appends ciphertext the transport delivered, for Read, and wakes the
// handshake goroutine if it waits.
func (c *tlsShim) feed(b []byte) {
	c.mu.Lock()
	if c.in == nil {
		c.in = getTLSBuf()[:0]
	} else if c.inOff > 0 && c.inOff == len(c.in) {
		c.in, c.inOff = c.in[:0], 0
	}
	c.in = append(c.in, b...)
	c.cond.Signal()
	c.mu.Unlock()
}

// feedEOF records the transport's end of stream.
func (c *tlsShim) feedEOF() {
	c.mu.Lock()
	c.eof = true
	c.cond.Signal()
	c.mu.Unlock()
}

// setReadErr gives the handshake goroutine a transport read error.
func (c *tlsShim) setReadErr(err error) {
	c.mu.Lock()
	c.readErr = err
	c.cond.Signal()
	c.mu.Unlock()
}

// takeOut takes the queued ciphertext, or nil when none is queued.
func (c *tlsShim) takeOut() []byte {
	c.mu.Lock()
	b := c.out
	c.out = nil
	c.mu.Unlock()
	return b
}

// fail makes every later Read and Write fail with err (the first error
// set stays) and wakes the handshake goroutine and its driver.
func (c *tlsShim) fail(err error) {
	c.mu.Lock()
	c.failLocked(err)
	wk := c.wk
	c.mu.Unlock()
	wk.Wake()
}

// failLocked is fail with mu held, waking only the goroutine.
func (c *tlsShim) failLocked(err error) {
	if c.closedErr == nil {
		c.closedErr = err
	}
	c.cond.Broadcast()
}

// addWaiter records wk to be woken when the handshake completes or its
// driver leaves, unless it is there already. mu is held.
func (c *tlsShim) addWaiter(wk waker.Waker) {
	for _, w := range c.waiters {
		if w.WillWake(wk) {
			return
		}
	}
	c.waiters = append(c.waiters, wk)
}

// Close is called by crypto/tls only when a handshake's context ends,
// which the TLSStream's does not; TLSStream.Close closes the transport.
func (c *tlsShim) Close() error {
	c.fail(net.ErrClosed)
	return nil
}

// LocalAddr and RemoteAddr are the transport's, if it has them.
func (c *tlsShim) LocalAddr() net.Addr {
	if a, ok := c.tr.(interface{ LocalAddr() net.Addr }); ok {
		return a.LocalAddr()
	}
	return tlsNoAddr{}
}

func (c *tlsShim) RemoteAddr() net.Addr {
	if a, ok := c.tr.(interface{ RemoteAddr() net.Addr }); ok {
		return a.RemoteAddr()
	}
	return tlsNoAddr{}
}

// The deadlines are the TLSStream's business (SetReadTimeout,
// SetWriteTimeout, Timeout): the shim never waits for the network, and
// crypto/tls sets a write deadline only around its close_notify.
func (c *tlsShim) SetDeadline(time.Time) error      { return nil }
func (c *tlsShim) SetReadDeadline(time.Time) error  { return nil }
func (c *tlsShim) SetWriteDeadline(time.Time) error { return nil }

// tlsNoAddr is the address of a transport that has none.
type tlsNoAddr struct{}

func (tlsNoAddr) Network() string { return "tls" }
func (tlsNoAddr) String() string  { return "" }

var _ net.Conn = (*tlsShim)(nil)
