package httpserver

// The connection task: one per connection, it reads and parses requests,
// hands each to its handler, performs the handler's body reads and writes,
// and keeps the connection alive between requests. See "The connection
// task" in the package documentation.

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
	"github.com/blitz-go/blitz/waker"
)

// errTimeout is the failure of a read or write past its deadline: a
// timeout that matches os.ErrDeadlineExceeded.
var errTimeout = fmt.Errorf("httpserver: i/o timeout: %w", os.ErrDeadlineExceeded)

// errConnClosed is the failure of a handler's read or write once its
// connection is gone.
var errConnClosed = fmt.Errorf("httpserver: connection closed: %w", net.ErrClosed)

// unboundedStart is the headerStart of a request that no timeout bounds:
// not zero (a request has begun), and never read as a time.
var unboundedStart = time.Unix(0, 1)

// lingerTime bounds the reading and discarding after an error response,
// before the close (so that the client reads the response rather than a
// reset), as net/http's.
const lingerTime = 500 * time.Millisecond

// connPhase is where a connection task is.
type connPhase uint8

const (
	phRead        connPhase = iota // waiting for, or reading, a request's header block
	phDispatch                     // waiting for a handler goroutine
	phServe                        // a handler goroutine runs: doing what it asks
	phTaskBody                     // reading a task handler's request body in full
	phTaskRun                      // polling a task handler's future
	phFinal                        // writing the last bytes of a response
	phDrain                        // discarding the body the handler left
	phError                        // writing an error response
	phLinger                       // discarding input for a while before closing
	phWaitHandler                  // the connection failed: waiting for the handler to return
	phPlainHint                    // writing the 400 of plain HTTP sent to a TLS server
	phDone
)

// connTask is the future a connection's task runs, held by value in the
// task (one allocation for the task and it).
type connTask struct{ c *conn }

// Poll runs the connection.
func (t *connTask) Poll(cx *future.Context) (struct{}, bool) { return t.c.poll(cx) }

// Cancel closes the connection (the runtime is shutting down).
func (t *connTask) Cancel() { t.c.cancel() }

// conn is a connection being served: what it holds while idle. The
// state of a request in progress (and of input not consumed yet) is in
// active, which exists only then; an idle keep-alive connection holds this
// struct, its task and its socket, and nothing else. Every field is owned
// by the task, except those under mu and the atomics.
type conn struct {
	s      *Server
	rwc    Conn
	remote string
	phase  connPhase
	// leadCRLF is how many CR or LF bytes may still be skipped before the
	// next request line: maxLeadingCRLF after a POST, else none.
	leadCRLF uint8
	// afterPost is set when the last request was a POST.
	afterPost bool
	// pooled: rwc is a pooledReader.
	pooled bool
	// reading is set while a read is in flight: a PollReadPooled of a
	// pooled Conn (the read is the stream's own), or a PollRead of
	// another (into rbuf, its buffer, kept across reads).
	reading bool
	// timerOn is set while timer is armed (for timer.Deadline()).
	timerOn bool
	rbuf    []byte

	// timer bounds the wait in progress, made at the first timed wait.
	timer *blitz.SleepFuture

	// prev and next link the server's connections (Server.conns), under
	// the server's mu: a list rather than a set, so that a connection
	// costs two pointers there and the set never grows by copying. A
	// connection is in the list while prev is set or it is its head.
	prev, next *conn

	// reqs counts the requests started on this connection; idleSince is
	// when it went idle (or was accepted).
	reqs      int
	idleSince time.Time

	// The request in progress, and the input not consumed yet; nil while
	// idle.
	*active

	// killed is set by Close (and by Shutdown's deadline); the task then
	// closes the connection at its next poll. Loaded by the task.
	killed atomic.Bool
	// rwcClosed makes the close of rwc happen once (the task, or Close).
	rwcClosed atomic.Bool
	// cur is the exchange of the request in progress, for Close to
	// cancel its context: stored by the task when the request starts,
	// cleared when it ends (or is hijacked); loaded by Close.
	cur atomic.Pointer[exchange]

	// mu guards wk and idle, shared with Shutdown and Close.
	mu sync.Mutex
	// wk is the task's Waker (written by the task, under mu, when it
	// changes); idle is set while the task waits for a request with
	// nothing of it read.
	wk   waker.Waker
	idle bool
}

// active is the state of a connection between the first byte of a
// request and the moment it goes idle again. Owned by the task; recycled
// through activePool.
type active struct {
	// in is the input not consumed yet: a view of pb (a pooled buffer,
	// held while hasPB), of the conn's rbuf, or of acc (a header block
	// gathered over several reads). scanned is how much of a partial
	// header block was searched for its end.
	pb      blitz.PooledBuf
	hasPB   bool
	in      []byte
	acc     []byte
	scanned int

	// Output in flight: the buffers left to write, to rwc, or to
	// plainTo when it is set: the transport under a TLS stream whose
	// client spoke plain HTTP (see startPlainHTTPHint).
	wbufs   [][]byte
	writing bool
	plainTo blitz.AsyncWriter

	ex            *exchange
	dec           bodyDecoder
	headerStart   time.Time // the first byte of the request's header block
	readDeadline  time.Time // ReadTimeout's end for this request, zero if none
	writeDeadline time.Time // WriteTimeout's end, zero if none
	acquire       syncprim.AcquireFuture
	acquiring     bool
	taskFut       future.Future[struct{}]
	taskBody      []byte
	// curOp is the handler's operation being done (phServe).
	curOp opKind
	// continueStaged is set while the 100 Continue is being written.
	continueStaged bool
	// closeAfter: the connection closes after this response.
	closeAfter bool
	// bodyErr is the failure of the request body, returned to every read
	// after it.
	bodyErr error
	// peerGone: the read kept pending while the handler ran failed (the
	// client closed the connection).
	peerGone bool
	drained  int64
	lingered int
}

// activePool recycles the request state of connections going idle.
var activePool = sync.Pool{New: func() any { return new(active) }}

// ensureActive gives the connection its request state.
func (c *conn) ensureActive() {
	if c.active == nil {
		c.active = activePool.Get().(*active)
	}
}

// releaseActive returns the request state of a connection going idle (or
// closing); nothing of it may be in use.
func (c *conn) releaseActive() {
	a := c.active
	if a == nil {
		return
	}
	c.active = nil
	putActive(a)
}

// putActive clears a request state nothing uses any more and gives it back
// to activePool.
func putActive(a *active) {
	*a = active{}
	activePool.Put(a)
}

func newConn(s *Server, c Conn) *conn {
	cn := &conn{s: s, rwc: c, idleSince: time.Now()}
	_, cn.pooled = c.(pooledReader)
	if a := c.RemoteAddr(); a != nil {
		cn.remote = a.String()
	}
	return cn
}

// wakeIfIdle wakes the task if it waits idle, so that it sees the
// shutdown. Any goroutine may call it.
func (c *conn) wakeIfIdle() {
	c.mu.Lock()
	wk, idle := c.wk, c.idle
	c.mu.Unlock()
	if idle {
		wk.Wake()
	}
}

// kill closes the connection from outside its task (Close): the task's
// operations fail and its next poll ends it. Any goroutine may call it.
func (c *conn) kill() {
	c.killed.Store(true)
	if ex := c.cur.Load(); ex != nil {
		ex.cancel()
	}
	c.closeRWC()
	c.mu.Lock()
	wk := c.wk
	c.mu.Unlock()
	wk.Wake()
}

func (c *conn) closeRWC() {
	if c.rwcClosed.CompareAndSwap(false, true) {
		_ = c.rwc.Close()
	}
}

func (c *conn) setIdle(idle bool) {
	c.mu.Lock()
	c.idle = idle
	c.mu.Unlock()
}

// poll runs the connection as far as it can go.
func (c *conn) poll(cx *future.Context) (struct{}, bool) {
	if wk := cx.Waker(); wk != c.wk {
		c.mu.Lock()
		c.wk = wk
		c.mu.Unlock()
	}
	for {
		if c.killed.Load() && c.phase != phWaitHandler && c.phase != phDone {
			c.fail(errConnClosed)
			continue
		}
		var ready bool
		switch c.phase {
		case phRead:
			ready = c.pollRequest(cx)
		case phDispatch:
			ready = c.pollDispatch(cx)
		case phServe:
			ready = c.pollServe(cx)
		case phTaskBody:
			ready = c.pollTaskBody(cx)
		case phTaskRun:
			ready = c.pollTaskRun(cx)
		case phFinal:
			ready = c.pollFinal(cx)
		case phDrain:
			ready = c.pollDrain(cx)
		case phError:
			ready = c.pollError(cx)
		case phLinger:
			ready = c.pollLinger(cx)
		case phWaitHandler:
			ready = c.pollWaitHandler(cx)
		case phPlainHint:
			ready = c.pollPlainHint(cx)
		case phDone:
			return struct{}{}, true
		}
		if !ready {
			return struct{}{}, false
		}
	}
}

// ---- Input ----

// fill reads the next data into c.in (which must be empty), waiting at
// most until deadline (none if zero). ok is false while the read is
// pending (or on err).
func (c *conn) fill(cx *future.Context, deadline time.Time) (ok bool, err error) {
	var n int
	if c.pooled {
		r, done := c.rwc.(pooledReader).PollReadPooled(cx)
		c.reading = !done
		if done {
			if r.Err != nil {
				return false, r.Err
			}
			c.ensureActive()
			c.pb, c.hasPB = r.Value, true
			c.in = c.pb.Bytes()
			return true, nil
		}
	} else {
		if c.rbuf == nil {
			c.rbuf = make([]byte, 4096)
		}
		r, done := c.rwc.PollRead(cx, c.rbuf)
		c.reading = !done
		if done {
			if r.Err != nil && r.Value == 0 {
				return false, r.Err
			}
			n = r.Value
			c.ensureActive()
			c.in = c.rbuf[:n]
			return true, nil
		}
	}
	if !deadline.IsZero() && c.timerFired(cx, deadline) {
		c.cancelRead()
		return false, errTimeout
	}
	return false, nil
}

func (c *conn) cancelRead() {
	if c.reading { // a pooled read's too: what it received goes to the stream's next read
		c.rwc.CancelRead()
		c.reading = false
	}
}

// consume drops n bytes of input, and the buffer they were in once it is
// used up.
func (c *conn) consume(n int) {
	c.in = c.in[n:]
	if len(c.in) == 0 {
		c.in = nil
		c.acc = nil
		c.releasePB()
	}
}

func (c *conn) releasePB() {
	if c.active != nil && c.hasPB {
		c.pb.Release()
		c.pb, c.hasPB = blitz.PooledBuf{}, false
	}
}

// timerFired arms the timer for deadline if it is not, and reports
// whether it has passed.
func (c *conn) timerFired(cx *future.Context, deadline time.Time) bool {
	if c.timer == nil {
		c.timer = timerPool.Get().(*blitz.SleepFuture)
	}
	if !c.timerOn || !c.timer.Deadline().Equal(deadline) {
		c.timer.Reset(deadline)
		c.timerOn = true
	}
	_, fired := c.timer.Poll(cx)
	return fired
}

func (c *conn) stopTimer() {
	if c.timerOn {
		c.timer.Cancel()
		c.timerOn = false
	}
}

// dropTimer stops the timer and gives it back to timerPool: the next timed
// wait takes another.
func (c *conn) dropTimer() {
	if c.timer == nil {
		return
	}
	c.stopTimer()
	timerPool.Put(c.timer)
	c.timer = nil
}

// timerPool holds the timers of connections that no longer wait with a
// bound (idle without one, or closed), stopped: a connection's first
// request takes one rather than making it, so that connections that come
// and go leave no timer behind them. Every timer taken is Reset before it
// is polled (timerFired, startLinger), and Reset frees it from the runtime
// that last polled it.
var timerPool = sync.Pool{New: func() any { return new(blitz.SleepFuture) }}

// ---- Output ----

// flush writes c.wbufs, waiting at most until deadline. done is false
// while a write is pending.
func (c *conn) flush(cx *future.Context, deadline time.Time) (done bool, err error) {
	for len(c.wbufs) > 0 {
		b := c.wbufs[0]
		if len(b) == 0 {
			c.wbufs = c.wbufs[1:]
			continue
		}
		if !c.writing && !deadline.IsZero() && !time.Now().Before(deadline) {
			// Past the deadline nothing more goes out, as with a
			// net.Conn's write deadline: a write that the socket could
			// take at once would otherwise beat the timer.
			return true, errTimeout
		}
		var r future.Result[int]
		var ok bool
		if c.plainTo == nil {
			r, ok = c.rwc.PollWrite(cx, b)
		} else {
			r, ok = c.plainTo.PollWrite(cx, b)
		}
		if !ok {
			c.writing = true
			if !deadline.IsZero() && c.timerFired(cx, deadline) {
				if c.plainTo == nil {
					c.rwc.CancelWrite()
				} else {
					c.plainTo.CancelWrite()
				}
				c.writing = false
				return true, errTimeout
			}
			return false, nil
		}
		c.writing = false
		if r.Err != nil {
			return true, r.Err
		}
		c.wbufs[0] = b[r.Value:]
	}
	c.wbufs = nil
	return true, nil
}

// ---- Requests ----

// pollRequest waits for a request and parses its header block.
func (c *conn) pollRequest(cx *future.Context) bool {
	maxHeader := c.s.maxHeaderBytes()
	for {
		if c.active != nil && len(c.in) > 0 && c.skipLeadingCRLF() {
			if c.headerStart.IsZero() {
				switch {
				case c.reqs == 0:
					c.headerStart = c.idleSince // the first request's bound runs from the accept
				case c.s.headerTimeout() > 0:
					c.headerStart = time.Now()
				default:
					c.headerStart = unboundedStart // no bound reads it
				}
				c.setIdle(false)
			}
			end := findHeaderEnd(c.in, c.scanned)
			if end < 0 {
				if len(c.in) > maxHeader {
					c.startError(errHeaderTooLarge)
					return true
				}
				c.scanned = len(c.in)
				// Gather the partial block at the start of a buffer of its
				// own (acc), so that the pooled one goes back and the
				// next read is appended to it. acc != nil means in is a
				// view of acc, perhaps past an earlier request.
				if c.acc == nil {
					c.acc = make([]byte, 0, max(2*len(c.in), 1024))
				}
				if len(c.acc) == 0 || &c.in[0] != &c.acc[0] {
					c.acc = append(c.acc[:0], c.in...)
					c.releasePB()
					c.in = c.acc
				}
			} else {
				if end > maxHeader {
					c.startError(errHeaderTooLarge)
					return true
				}
				// The exchange holds the request's URL and header values
				// (see parsedRequest).
				ex := new(exchange)
				p := parsedRequest{url: &ex.url, strs: ex.strs[:]}
				perr := parseRequest(c.in[:end], &p)
				c.consume(end)
				c.scanned = 0
				if perr != nil {
					c.startError(perr)
					return true
				}
				c.startRequest(&p, ex)
				return true
			}
		} else if c.closeIdle() {
			// Idle at a shutdown, or after a request with keep-alives
			// turned off: nothing of a next request was read.
			c.close()
			return true
		}
		var deadline time.Time
		if c.active == nil || c.headerStart.IsZero() {
			if !c.idleSinceMarked() {
				return true // closed: a shutdown began, or keep-alives were turned off
			}
			if c.reqs == 0 {
				if d := c.s.headerTimeout(); d > 0 {
					deadline = c.idleSince.Add(d)
				}
			} else if d := c.s.idleTimeout(); d > 0 {
				deadline = c.idleSince.Add(d)
			}
		} else if d := c.s.headerTimeout(); d > 0 {
			deadline = c.headerStart.Add(d)
		}
		if deadline.IsZero() {
			// An unbounded wait for the next request (no IdleTimeout nor
			// ReadTimeout): the timer of an earlier bound would only
			// fire for nothing, and an idle connection would keep it.
			c.dropTimer()
		}
		ok, err := c.fill(cx, deadline)
		if err != nil {
			// End of stream, a reset, a timeout: close without a word
			// (as net/http does for a read error before a request).
			if c.reqs == 0 && c.startPlainHTTPHint(err) {
				return true
			}
			if errors.Is(err, io.EOF) && c.partialAtEOF() {
				// The stream ended within a header block: net/http
				// answers 400 (the client may have shut only its
				// sending side).
				c.startError(badRequest("malformed HTTP request"))
				return true
			}
			c.close()
			return true
		}
		if !ok {
			return false
		}
		if c.acc != nil {
			// Append to the gathered block and give the buffer back.
			c.acc = append(c.acc, c.in...)
			c.releasePB()
			c.in = c.acc
		}
	}
}

// plainHTTPHint is net/http's answer to plain HTTP sent to its TLS port,
// byte for byte.
var plainHTTPHint = []byte("HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n")

// tlsTransporter is a TLS stream (blitz.TLSStream): the stream its
// records travel on.
type tlsTransporter interface {
	Transport() blitz.TLSTransport
}

// startPlainHTTPHint answers, as net/http does, a client that sent plain
// HTTP to a TLS server (err, the failed handshake, saw a record header
// that is the start of a request line): a plain-text 400 on the transport,
// then the close. It reports false, doing nothing, for any other error.
func (c *conn) startPlainHTTPHint(err error) bool {
	var re tls.RecordHeaderError
	if !errors.As(err, &re) || re.Conn == nil || !looksLikeHTTP(re.RecordHeader) {
		return false
	}
	tt, ok := c.rwc.(tlsTransporter)
	if !ok {
		return false
	}
	c.ensureActive()
	c.plainTo = tt.Transport()
	c.wbufs = [][]byte{plainHTTPHint}
	c.writeDeadline = time.Now().Add(lingerTime)
	c.setIdle(false)
	c.phase = phPlainHint
	return true
}

// looksLikeHTTP reports whether the five bytes a TLS record header would
// be are the start of an HTTP request (net/http's test).
func looksLikeHTTP(hdr [5]byte) bool {
	switch string(hdr[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO":
		return true
	}
	return false
}

// pollPlainHint writes the plain-text 400, then closes.
func (c *conn) pollPlainHint(cx *future.Context) bool {
	if done, _ := c.flush(cx, c.writeDeadline); !done {
		return false
	}
	c.close()
	return true
}

// skipLeadingCRLF consumes the CR and LF bytes that may come before the
// request line after a POST, and reports whether input is left.
func (c *conn) skipLeadingCRLF() bool {
	for c.leadCRLF > 0 && len(c.in) > 0 && (c.in[0] == '\r' || c.in[0] == '\n') {
		c.consume(1)
		c.leadCRLF--
	}
	return len(c.in) > 0
}

// partialAtEOF reports whether the stream ended within a request's header
// block where net/http answers 400: anything of a first request, or at
// least 4 bytes (the skipped CR and LF bytes included) of a later one,
// since net/http waits for 4 bytes before it reads a request that follows
// another and closes without a word when the stream ends first.
func (c *conn) partialAtEOF() bool {
	if c.active == nil || len(c.in) == 0 {
		return false
	}
	got := len(c.in)
	if c.afterPost {
		got += maxLeadingCRLF - int(c.leadCRLF)
	}
	return c.reqs == 0 || got >= 4
}

// idleSinceMarked marks the connection idle (if it is not yet) and
// reports false if it must close instead (closeIdle): then it was closed.
func (c *conn) idleSinceMarked() bool {
	c.mu.Lock()
	c.idle = true
	c.mu.Unlock()
	if c.closeIdle() {
		c.close()
		return false
	}
	return true
}

// closeIdle reports whether the connection, idle, must close: a shutdown
// began, or keep-alives were turned off after it served a request (a new
// connection still gets its first request served, as in net/http).
func (c *conn) closeIdle() bool {
	return c.s.shuttingDown.Load() || (c.reqs > 0 && c.s.keepAlivesOff.Load())
}

// tlsStater is a Conn over TLS (blitz.TLSStream): its requests get
// Request.TLS.
type tlsStater interface {
	ConnectionState() tls.ConnectionState
}

// startRequest sets up ex, the exchange of the parsed request p, and moves
// on to its handler.
func (c *conn) startRequest(p *parsedRequest, ex *exchange) {
	s := c.s
	c.reqs++
	c.afterPost = p.req.Method == http.MethodPost
	c.leadCRLF = 0
	if c.afterPost {
		c.leadCRLF = maxLeadingCRLF
	}
	// The context has no parent, so nothing shared is touched per
	// request: Close cancels it through c.cur (or, once the connection is
	// hijacked, through the server's hijacked set).
	ex.expectContinue, ex.keepAlive, ex.rwc = p.expectContinue, p.keepAlive, c.rwc
	ex.ctx.rwc = c.rwc
	req := p.req.WithContext(&ex.ctx)
	req.RemoteAddr = c.remote
	if ts, ok := c.rwc.(tlsStater); ok {
		st := ts.ConnectionState()
		req.TLS = &st
	}
	ex.req = req
	ex.w = response{ex: ex, s: s, declared: -1}
	ex.body.ex = ex
	c.dec.reset(p.bodyKind, p.contentLength)
	ex.bodyDone = c.dec.done
	ex.bodyRemaining = p.contentLength
	if p.bodyKind == bodyNone {
		req.Body = http.NoBody
	} else {
		req.Body = &ex.body
	}
	c.ex = ex
	c.cur.Store(ex)
	c.closeAfter = !p.keepAlive
	c.readDeadline, c.writeDeadline = time.Time{}, time.Time{}
	if s.ReadTimeout > 0 {
		c.readDeadline = c.headerStart.Add(s.ReadTimeout)
	}
	if s.WriteTimeout > 0 {
		c.writeDeadline = time.Now().Add(s.WriteTimeout)
	}
	if s.TaskHandler != nil {
		ex.taskMode = true
		c.phase = phTaskBody
		return
	}
	c.phase = phDispatch
}

// pollDispatch gets a handler goroutine for the request.
func (c *conn) pollDispatch(cx *future.Context) bool {
	if !c.acquiring {
		if c.s.sem.TryAcquire(1) {
			c.startHandler()
			return true
		}
		c.acquire = *c.s.sem.Acquire(1)
		c.acquiring = true
	}
	err, ok := c.acquire.Poll(cx)
	if !ok {
		return false
	}
	c.acquiring = false
	if err != nil {
		c.fail(err)
		return true
	}
	c.startHandler()
	return true
}

// startHandler hands the request to a handler goroutine (a parked one of
// the pool, or a new one) and yields to it. Go queues the goroutine it
// wakes first on this worker's P, so the yield runs the handler now, as if
// inline, while the worker goroutine waits in Go's global queue (another P
// takes it if the handler blocks or runs long). A handler that answers at
// once has returned when the yield does, and pollServe takes its response
// in the same poll: no wake of the task, and no handler left queued behind
// a worker that parks in the backend's wait (which keeps its P until Go's
// sysmon takes it back).
func (c *conn) startHandler() {
	c.phase = phServe
	c.s.dispatch(c.ex)
	goruntime.Gosched()
}

// pollServe does what the handler goroutine asks, until it returns.
func (c *conn) pollServe(cx *future.Context) bool {
	ex := c.ex
	watched := false
	for {
		switch c.curOp {
		case opRead:
			n, err, ok := c.bodyRead(cx, ex.rbuf)
			if !ok {
				return false
			}
			c.curOp = opNone
			if err != nil && err != io.EOF {
				// The body is broken (malformed, cut short, too slow): the
				// handler may still answer, then the connection closes.
				c.bodyErr, c.closeAfter = err, true
				ex.mu.Lock()
				ex.bodyBroken = true
				ex.mu.Unlock()
			}
			ex.complete(n, err)
			continue
		case opHijack:
			c.hijack()
			return true
		case opWrite:
			done, err := c.flush(cx, c.writeDeadline)
			if !done {
				return false
			}
			c.curOp = opNone
			ex.mu.Lock()
			ex.headerSent = true
			ex.mu.Unlock()
			ex.complete(0, err)
			if err != nil {
				c.fail(err)
				return true
			}
			continue
		}
		ex.mu.Lock()
		switch {
		case ex.op != opNone:
			c.takeDeadlines()
			c.curOp = ex.op
			if ex.op == opWrite {
				c.wbufs = ex.wbufs
			}
			ex.mu.Unlock()
		case ex.finished:
			c.takeDeadlines()
			ex.mu.Unlock()
			c.startFinal()
			return true
		case !watched:
			// About to wait for the handler: keep the peer watched (a
			// handler that already returned needs no watch), then look
			// again, since the handler may have posted meanwhile.
			ex.mu.Unlock()
			c.watchPeer(cx)
			watched = true
		default:
			ex.taskWk, ex.taskWaiting = cx.Waker(), true
			ex.mu.Unlock()
			return false
		}
	}
}

// takeDeadlines applies the deadlines the handler set since the last
// call (response.SetReadDeadline, SetWriteDeadline) to the request's
// reads and the response's writes. Called by the task with ex.mu held,
// as it takes an operation or the finished response.
func (c *conn) takeDeadlines() {
	ex := c.ex
	if ex.readSet {
		c.readDeadline, ex.readSet = ex.readBy, false
	}
	if ex.writeSet {
		c.writeDeadline, ex.writeSet = ex.writeBy, false
	}
}

// hijack gives the connection up to the handler goroutine that asked
// (Hijack): the read in flight is cancelled (what it received goes to the
// stream's next read, the handler's), the input read past the request is
// handed over, and the task ends without closing the socket. A Close that
// got to the socket first wins: the Hijack fails.
func (c *conn) hijack() {
	ex := c.ex
	c.curOp = opNone
	if !c.rwcClosed.CompareAndSwap(false, true) {
		ex.complete(0, errConnClosed)
		c.fail(errConnClosed)
		return
	}
	c.cancelRead()
	buf := append([]byte(nil), c.in...)
	c.consume(len(c.in))
	ex.mu.Lock()
	ex.hijacked, ex.hijackBuf = true, buf
	ex.mu.Unlock()
	ex.complete(0, nil)
	// The exchange is the goroutine's now: it cancels the request's
	// context when the handler returns (or Close does, before).
	c.s.trackHijacked(ex, true)
	c.cur.Store(nil)
	c.active.ex = nil
	a := c.active
	c.close() // rwcClosed is set: the socket stays open
	// Unlike a connection closed under a running handler, this one's
	// request state is the task's alone: the handler waited for the
	// hijack, every operation it posted is over, and it took a copy of the
	// input. It goes back to the pool for the next connection.
	putActive(a)
}

// watchPeer keeps a read pending while the handler runs with the request
// body consumed, as net/http's background read does: if the client closes
// the connection (or it fails), the request's context is cancelled and the
// connection closes after the response; data that arrives (the next
// request) is kept for later, and no more is read meanwhile.
func (c *conn) watchPeer(cx *future.Context) {
	if !c.dec.done || len(c.in) > 0 || c.peerGone {
		return
	}
	if _, err := c.fill(cx, time.Time{}); err != nil {
		c.peerGone, c.closeAfter = true, true
		c.ex.cancel()
	}
}

// bodyRead decodes request body bytes into p, reading as needed; the
// first read of a request that expects 100 Continue writes it first.
func (c *conn) bodyRead(cx *future.Context, p []byte) (n int, err error, ok bool) {
	if !c.continueDone(cx) {
		return 0, nil, false
	}
	if c.continueStaged {
		done, err := c.flush(cx, c.writeDeadline)
		if !done {
			return 0, nil, false
		}
		c.continueStaged = false
		if err != nil {
			return 0, err, true
		}
	}
	if c.bodyErr != nil {
		return 0, c.bodyErr, true
	}
	for {
		if c.dec.done {
			c.bodyEnded()
			return 0, io.EOF, true
		}
		if len(c.in) > 0 {
			consumed, produced, derr := c.dec.decode(c.in, p)
			c.consume(consumed)
			c.noteRemaining()
			if derr != nil {
				return produced, derr, true
			}
			if c.dec.done {
				c.bodyEnded()
				return produced, io.EOF, true
			}
			if produced > 0 {
				return produced, nil, true
			}
			continue
		}
		got, ferr := c.fill(cx, c.readDeadline)
		if ferr != nil {
			if errors.Is(ferr, io.EOF) {
				ferr = io.ErrUnexpectedEOF
			}
			return 0, ferr, true
		}
		if !got {
			return 0, nil, false
		}
	}
}

// continueDone stages the 100 Continue if the request expects one and no
// response is on the wire yet; it reports false only when it could not
// decide (never, today: staging needs no I/O).
func (c *conn) continueDone(*future.Context) bool {
	ex := c.ex
	if !ex.expectContinue {
		return true
	}
	ex.mu.Lock()
	send := !ex.continueSent && !ex.headerSent
	if send {
		ex.continueSent = true
	}
	ex.mu.Unlock()
	if send {
		c.wbufs = [][]byte{continueLine}
		c.continueStaged = true
	}
	return true
}

var continueLine = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// bodyEnded records the end of the body; the trailer fields read go to
// the request before the handler's read returns io.EOF.
func (c *conn) bodyEnded() {
	c.dec.mergeTrailer(&c.ex.req.Trailer)
	c.ex.mu.Lock()
	c.ex.bodyDone = true
	c.ex.bodyRemaining = 0
	c.ex.mu.Unlock()
}

func (c *conn) noteRemaining() {
	if c.dec.kind == bodyLength {
		c.ex.mu.Lock()
		c.ex.bodyRemaining = c.dec.remaining
		c.ex.mu.Unlock()
	}
}

// startFinal moves on to writing the last bytes of the response.
func (c *conn) startFinal() {
	ex := c.ex
	ex.mu.Lock()
	final, aborted, closeAfter := ex.final, ex.aborted, ex.closeAfter
	ex.mu.Unlock()
	if aborted {
		// A panicking handler: the connection closes, with whatever was
		// sent (as net/http does).
		c.finishExchange()
		c.close()
		return
	}
	c.closeAfter = c.closeAfter || closeAfter
	ex.finalBufs[0] = final
	c.wbufs = ex.finalBufs[:]
	c.phase = phFinal
}

// pollFinal writes the response's last bytes, then keeps the connection
// for the next request, drains the body left, or closes.
func (c *conn) pollFinal(cx *future.Context) bool {
	done, err := c.flush(cx, c.writeDeadline)
	if !done {
		return false
	}
	bodyDone := c.dec.done
	c.finishExchange()
	switch {
	case err != nil:
		c.close()
	case c.closeAfter && !bodyDone:
		c.startLinger()
	case c.closeAfter:
		c.close()
	case !bodyDone:
		c.drained = 0
		c.phase = phDrain
	default:
		c.nextRequest()
	}
	return true
}

// finishExchange ends the request: its context is cancelled and its
// buffer goes back to the pool.
func (c *conn) finishExchange() {
	if c.active == nil {
		return
	}
	ex := c.ex
	if ex == nil {
		return
	}
	ex.cancel()
	ex.mu.Lock()
	out := ex.finalOut
	ex.final, ex.finalOut = nil, nil
	ex.mu.Unlock()
	ex.finalBufs[0] = nil
	putOut(out)
	c.ex = nil
	c.cur.Store(nil)
	c.taskBody = nil
}

// nextRequest readies the connection for its next request.
func (c *conn) nextRequest() {
	c.phase = phRead
	if c.s.idleTimeout() > 0 {
		c.idleSince = time.Now() // read only for the idle bound after the first request
	}
	if len(c.in) == 0 {
		c.releaseActive()
		return
	}
	// Pipelined input: keep it, start the next request's state afresh.
	a := c.active
	*a = active{pb: a.pb, hasPB: a.hasPB, in: a.in, acc: a.acc}
}

// pollDrain discards the request body the handler left, up to
// maxDrainBytes, then goes on to the next request (or closes).
func (c *conn) pollDrain(cx *future.Context) bool {
	for !c.dec.done {
		if c.drained > maxDrainBytes {
			c.close()
			return true
		}
		if len(c.in) > 0 {
			consumed, _, err := c.dec.decode(c.in, nil)
			c.consume(consumed)
			c.drained += int64(consumed)
			if err != nil {
				c.close()
				return true
			}
			continue
		}
		ok, err := c.fill(cx, c.readDeadline)
		if err != nil {
			c.close()
			return true
		}
		if !ok {
			return false
		}
	}
	c.nextRequest()
	return true
}

// ---- Errors and closing ----

// startError answers a request the server refuses, then closes.
func (c *conn) startError(e *protoError) {
	text := strconv.Itoa(e.status) + " " + http.StatusText(e.status)
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 ")
	b.WriteString(text)
	b.WriteString("\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: ")
	b.WriteString(strconv.Itoa(len(text)))
	b.WriteString("\r\n\r\n")
	b.WriteString(text)
	c.wbufs = [][]byte{b.Bytes()}
	c.writeDeadline = time.Time{}
	if c.s.WriteTimeout > 0 {
		c.writeDeadline = time.Now().Add(c.s.WriteTimeout)
	}
	c.setIdle(false)
	c.phase = phError
}

// pollError writes the error response, then lingers.
func (c *conn) pollError(cx *future.Context) bool {
	done, err := c.flush(cx, c.writeDeadline)
	if !done {
		return false
	}
	if err != nil {
		c.close()
		return true
	}
	c.startLinger()
	return true
}

// startLinger shuts the sending side and reads what the client still
// sends for a while, so that it reads the response before the close (a
// close with unread input sends a reset, which may discard it).
func (c *conn) startLinger() {
	if cw, ok := c.rwc.(closeWriter); ok {
		_ = cw.CloseWrite()
	}
	c.ensureActive()
	c.lingered = 0
	if c.timer == nil {
		c.timer = timerPool.Get().(*blitz.SleepFuture)
	}
	c.timer.Reset(time.Now().Add(lingerTime))
	c.timerOn = true
	c.phase = phLinger
}

func (c *conn) pollLinger(cx *future.Context) bool {
	for {
		if len(c.in) > 0 {
			c.lingered += len(c.in)
			c.consume(len(c.in))
		}
		if c.lingered > maxDrainBytes {
			c.close()
			return true
		}
		ok, err := c.fill(cx, c.timer.Deadline())
		if err != nil {
			c.close()
			return true
		}
		if !ok {
			return false
		}
	}
}

// fail ends the connection after err: if a handler goroutine still runs,
// the task first waits for it to return (its operations fail with err).
func (c *conn) fail(err error) {
	c.cancelRead()
	if c.active == nil {
		c.close()
		return
	}
	if c.writing {
		c.rwc.CancelWrite()
		c.writing = false
	}
	if c.acquiring {
		c.acquire.Cancel()
		c.acquiring = false
	}
	c.closeRWC()
	ex := c.ex
	if ex != nil && !ex.taskMode && (c.phase == phServe || c.phase == phFinal) {
		ex.cancel()
		ex.mu.Lock()
		if ex.dead == nil {
			ex.dead = fmt.Errorf("httpserver: connection failed: %w", err)
		}
		ex.mu.Unlock()
		if c.curOp != opNone {
			c.curOp = opNone
			ex.complete(0, ex.dead)
		}
		c.phase = phWaitHandler
		return
	}
	c.finishExchange()
	c.close()
}

// pollWaitHandler fails the handler's operations until it returns.
func (c *conn) pollWaitHandler(cx *future.Context) bool {
	ex := c.ex
	for {
		ex.mu.Lock()
		switch {
		case ex.op != opNone:
			ex.mu.Unlock()
			ex.complete(0, ex.dead)
			continue
		case ex.finished:
			ex.mu.Unlock()
			c.finishExchange()
			c.close()
			return true
		}
		ex.taskWk, ex.taskWaiting = cx.Waker(), true
		ex.mu.Unlock()
		return false
	}
}

// close ends the task: everything it holds is released.
func (c *conn) close() {
	c.cancelRead()
	if c.active != nil {
		if c.writing {
			c.rwc.CancelWrite()
			c.writing = false
		}
		if c.acquiring {
			c.acquire.Cancel()
			c.acquiring = false
		}
		if c.taskFut != nil {
			future.Cancel(c.taskFut)
			c.taskFut = nil
		}
		c.finishExchange()
		c.releasePB()
		c.active = nil // not recycled: a handler goroutine may still see parts of it
	}
	c.rbuf = nil
	c.cur.Store(nil)
	c.dropTimer()
	c.closeRWC()
	c.setIdle(false)
	c.phase = phDone
	c.s.removeConn(c)
}

// cancel is the task's cancellation (the runtime shuts down): the
// connection closes; a handler goroutine still running finds its
// operations failing.
func (c *conn) cancel() {
	if c.phase == phDone {
		return
	}
	if c.active == nil {
		c.close()
		return
	}
	if ex := c.ex; ex != nil && !ex.taskMode {
		ex.cancel()
		ex.mu.Lock()
		if ex.dead == nil {
			ex.dead = errConnClosed
		}
		ex.mu.Unlock()
		if c.curOp != opNone {
			c.curOp = opNone
			ex.complete(0, ex.dead)
		}
		c.ex = nil // the goroutine still uses it: its buffer is not recycled
	}
	c.close()
}

// ---- Task handlers ----

// pollTaskBody reads a task handler's request body in full, then starts
// the handler's future.
func (c *conn) pollTaskBody(cx *future.Context) bool {
	ex := c.ex
	limit := c.s.maxTaskBody()
	for !c.dec.done {
		if !c.continueStaged && ex.expectContinue && !ex.continueSent {
			c.continueDone(cx)
		}
		if c.continueStaged {
			done, err := c.flush(cx, c.writeDeadline)
			if !done {
				return false
			}
			c.continueStaged = false
			if err != nil {
				c.fail(err)
				return true
			}
		}
		if len(c.in) > 0 {
			if len(c.taskBody) == cap(c.taskBody) {
				c.taskBody = append(c.taskBody, make([]byte, 4096)...)[:len(c.taskBody)]
			}
			consumed, produced, err := c.dec.decode(c.in, c.taskBody[len(c.taskBody):cap(c.taskBody)])
			c.consume(consumed)
			c.taskBody = c.taskBody[:len(c.taskBody)+produced]
			if err != nil {
				c.finishExchange()
				c.startError(badRequest("malformed request body"))
				return true
			}
			if int64(len(c.taskBody)) > limit {
				c.finishExchange()
				c.startError(&protoError{status: http.StatusRequestEntityTooLarge, msg: "request body too large"})
				return true
			}
			continue
		}
		ok, err := c.fill(cx, c.readDeadline)
		if err != nil {
			c.fail(err)
			return true
		}
		if !ok {
			return false
		}
	}
	ex.bodyDone = true
	c.dec.mergeTrailer(&ex.req.Trailer)
	if len(c.taskBody) > 0 {
		ex.req.Body = io.NopCloser(bytes.NewReader(c.taskBody))
	}
	c.startTaskHandler()
	return true
}

// startTaskHandler calls the task handler for its future.
func (c *conn) startTaskHandler() {
	ex := c.ex
	var f future.Future[struct{}]
	if !c.guard(func() { f = c.s.TaskHandler.ServeHTTPTask(&ex.w, ex.req) }) {
		return
	}
	if f == nil {
		f = future.Ready(struct{}{})
	}
	c.taskFut = f
	c.phase = phTaskRun
}

// pollTaskRun polls the task handler's future; when it completes, the
// response goes out.
func (c *conn) pollTaskRun(cx *future.Context) bool {
	var ok bool
	if !c.guard(func() { _, ok = c.taskFut.Poll(cx) }) {
		return true
	}
	if !ok {
		return false
	}
	c.taskFut = nil
	ex := c.ex
	var final []byte
	var closeAfter bool
	if !c.guard(func() { final, closeAfter = ex.w.finishResponse() }) {
		return true
	}
	ex.final, ex.finalOut, ex.closeAfter = final, ex.w.out, closeAfter
	ex.w.out = nil
	ex.mu.Lock()
	c.takeDeadlines()
	ex.mu.Unlock()
	c.startFinal()
	return true
}

// guard runs fn (the task handler's code) and reports false if it
// panicked: the panic is logged and the connection closed.
func (c *conn) guard(fn func()) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				c.s.logf("httpserver: panic serving %s: %v\n%s", c.remote, v, debug.Stack())
			}
			if c.taskFut != nil {
				func() {
					defer func() { _ = recover() }()
					future.Cancel(c.taskFut)
				}()
				c.taskFut = nil
			}
			c.close()
			ok = false
		}
	}()
	fn()
	return true
}
