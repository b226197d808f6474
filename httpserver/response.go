package httpserver

// The handler's side of a request: the exchange it shares with the
// connection task, the ResponseWriter and the request body. See "Who owns
// what" in the package documentation.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/waker"
)

// opKind is what a handler goroutine asks of the connection task.
type opKind uint8

const (
	opNone   opKind = iota
	opRead          // decode body bytes into rbuf
	opWrite         // write wbufs
	opHijack        // give the connection up to the handler
)

// bufferSize is how much of a response body is buffered before the
// response is committed with chunked encoding: a handler that writes at
// most this much before it returns gets a Content-Length instead.
const bufferSize = 4096

// outPool recycles the buffers a response is built in. The buffer a
// handler finished with goes to the connection task with the final bytes,
// and the task puts it back after writing them.
var outPool = sync.Pool{New: func() any { b := make([]byte, 0, bufferSize+512); return &b }}

func getOut() *[]byte { return outPool.Get().(*[]byte) }

func putOut(b *[]byte) {
	if b == nil || cap(*b) > 64<<10 {
		return
	}
	*b = (*b)[:0]
	outPool.Put(b)
}

// exchange is one request between its connection task and its handler
// (a goroutine, or a task handler polled by the connection task itself).
// The goroutine posts one operation at a time (a body read, a write) and
// waits on done for the task to complete it; when the handler returns it
// posts the final bytes and goes.
type exchange struct {
	req  *http.Request
	ctx  reqContext
	w    response
	body requestBody
	// taskMode is set for a TaskHandler: nothing is posted, the
	// connection task collects the response when the future completes.
	// Immutable after dispatch.
	taskMode bool
	// expectContinue is the request's Expect: 100-continue; keepAlive
	// whether the client lets the connection carry another request, as
	// the request read (keepAlive; the handler may change Request.Close,
	// which then does not count, as in net/http). Immutable.
	expectContinue bool
	keepAlive      bool
	// rwc is the connection, for Hijack. Immutable.
	rwc Conn
	// url and strs hold the request's URL and its header values' backing
	// array, made by parseRequest (see parsedRequest). Immutable.
	url  url.URL
	strs [exchangeHeaderValues]string

	// mu guards the fields below, shared by the goroutine and the task.
	mu sync.Mutex
	// done carries the completion of an operation to the waiting
	// goroutine (capacity 1: one operation at a time); made by the first
	// post (a handler that only buffers its response posts nothing).
	done chan struct{}
	// op, rbuf and wbufs are the operation posted; op is opNone when none
	// is. n and err are its outcome, set by the task before it signals
	// done.
	op    opKind
	rbuf  []byte
	wbufs [][]byte
	n     int
	err   error
	// hijacked is set by the task when it gave the connection up (with
	// hijackBuf, the input it had read and not consumed); from then on
	// the goroutine owns the exchange alone.
	hijacked  bool
	hijackBuf []byte
	// taskWk is the connection task's Waker while taskWaiting: the task
	// waits for the handler to post something.
	taskWk      waker.Waker
	taskWaiting bool
	// finished is set when the handler returned; final are the last
	// bytes of the response (nil after an abort), out the buffer they
	// live in, closeAfter whether the connection must close after them.
	finished   bool
	aborted    bool
	final      []byte
	finalOut   *[]byte
	closeAfter bool
	// finalBufs is the connection task's list of buffers to write for
	// final (no allocation per response). The task's alone.
	finalBufs [1][]byte
	// dead is the connection's failure: operations posted after it fail
	// with it.
	dead error
	// The deadlines the handler set through http.ResponseController
	// (SetReadDeadline, SetWriteDeadline) since the task last took them:
	// readSet and writeSet say which, readBy and writeBy are their times
	// (zero: none). The task takes them with the next operation, or with
	// the response of a handler that returned (takeDeadlines).
	readSet, writeSet bool
	readBy, writeBy   time.Time
	// bodyDone is set by the task when the body was read to its end;
	// bodyRemaining is what is left of a Content-Length body (-1 when
	// unknown); bodyBroken is set when a read of the body failed (the
	// connection closes after the response). continueSent records the 100 Continue, headerSent the
	// first bytes of the response on the wire.
	bodyDone      bool
	bodyBroken    bool
	bodyRemaining int64
	continueSent  bool
	headerSent    bool
}

// exchangeHeaderValues is how many header lines an exchange holds the
// values of without an allocation of their own: those of a curl or a
// load generator, not those of a browser.
const exchangeHeaderValues = 6

// reqContext is a request's context: cancellable, with no deadline, and
// the connection's local address as the value of
// http.LocalAddrContextKey (read when asked for, not for every request).
// The cancellable context behind it is made by the first call that needs
// it (Done, or Value of another key), so that a handler that never looks
// at its context costs no allocation for it; cancel before then is
// recorded and applied when it is made.
type reqContext struct {
	// rwc is the connection. Immutable.
	rwc Conn
	// mu guards the fields below: the handler (and whatever it hands
	// the context to) makes inner, the connection task and Close cancel.
	mu        sync.Mutex
	inner     context.Context
	innerStop context.CancelFunc
	canceled  bool
}

// made returns the cancellable context behind c, made on the first call.
func (c *reqContext) made() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inner == nil {
		c.inner, c.innerStop = context.WithCancel(context.Background())
		if c.canceled {
			c.innerStop()
		}
	}
	return c.inner
}

// cancel cancels the context. Idempotent; any goroutine may call it.
func (c *reqContext) cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.canceled = true
	if c.innerStop != nil {
		c.innerStop() // under mu: Err and Done agree at every moment
	}
}

// Deadline reports none: a request's context has no deadline.
func (c *reqContext) Deadline() (time.Time, bool) { return time.Time{}, false }

// Done returns a channel closed when the request is cancelled.
func (c *reqContext) Done() <-chan struct{} { return c.made().Done() }

// Err returns context.Canceled once the request is cancelled, else nil.
func (c *reqContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inner != nil {
		return c.inner.Err()
	}
	if c.canceled {
		return context.Canceled
	}
	return nil
}

// Value returns the local address for http.LocalAddrContextKey, else the
// value of the context behind c (none but the context package's own).
func (c *reqContext) Value(key any) any {
	if key == http.LocalAddrContextKey {
		return c.rwc.LocalAddr()
	}
	return c.made().Value(key)
}

// String names the context, as the context package's do.
func (c *reqContext) String() string { return "httpserver request context" }

// cancel cancels the request's context. Any goroutine may call it.
func (ex *exchange) cancel() { ex.ctx.cancel() }

// post hands op to the connection task and waits for its outcome. Called
// by the handler goroutine only.
func (ex *exchange) post(op opKind, rbuf []byte, wbufs [][]byte) (int, error) {
	ex.mu.Lock()
	if ex.dead != nil {
		err := ex.dead
		ex.mu.Unlock()
		return 0, err
	}
	if ex.done == nil {
		ex.done = make(chan struct{}, 1)
	}
	ex.op, ex.rbuf, ex.wbufs = op, rbuf, wbufs
	wk, waiting := ex.taskWk, ex.taskWaiting
	ex.taskWaiting = false
	done := ex.done
	ex.mu.Unlock()
	if waiting {
		wk.Wake()
	}
	<-done
	ex.mu.Lock()
	n, err := ex.n, ex.err
	ex.mu.Unlock()
	return n, err
}

// finish hands the final bytes to the task. Called by the handler
// goroutine once, when the handler returned (or panicked: aborted).
func (ex *exchange) finish(final []byte, out *[]byte, closeAfter, aborted bool) {
	ex.mu.Lock()
	ex.finished, ex.final, ex.finalOut, ex.closeAfter, ex.aborted = true, final, out, closeAfter, aborted
	wk, waiting := ex.taskWk, ex.taskWaiting
	ex.taskWaiting = false
	ex.mu.Unlock()
	if waiting {
		wk.Wake()
	}
}

// complete ends the posted operation with n and err and lets the
// goroutine go on. Called by the connection task.
func (ex *exchange) complete(n int, err error) {
	ex.mu.Lock()
	ex.op, ex.rbuf, ex.wbufs, ex.n, ex.err = opNone, nil, nil, n, err
	done := ex.done
	ex.mu.Unlock()
	done <- struct{}{}
}

// runHandler is the handler goroutine: it runs the handler, recovers its
// panic, and hands the rest of the response to the connection task.
func (s *Server) runHandler(ex *exchange, h http.Handler) {
	defer s.sem.Release(1)
	returned := false
	defer func() {
		v := recover()
		if v == nil && returned {
			return
		}
		// A panic, or runtime.Goexit (which recover does not see): as
		// net/http does, the connection is closed (and nothing is logged
		// for Goexit or http.ErrAbortHandler).
		if v != nil && v != http.ErrAbortHandler {
			s.logf("httpserver: panic serving %s: %v\n%s", ex.req.RemoteAddr, v, debug.Stack())
		}
		ex.finish(nil, ex.w.out, true, true)
		ex.w.out = nil
	}()
	h.ServeHTTP(&ex.w, ex.req)
	returned = true
	if ex.w.hijacked {
		// The connection is the handler's; the task is gone.
		s.trackHijacked(ex, false)
		ex.cancel()
		putOut(ex.w.out)
		ex.w.out = nil
		return
	}
	final, closeAfter := ex.w.finishResponse()
	ex.finish(final, ex.w.out, closeAfter, false)
	ex.w.out = nil
}

// response is the http.ResponseWriter of a request. Its fields are the
// handler's (one goroutine, or the task handler's task).
type response struct {
	ex *exchange
	s  *Server
	// header is made by the first call of Header; nil until then (reads
	// and deletes of a nil map are those of an empty one).
	header http.Header
	status int
	// out holds the bytes not yet handed to the task: from WriteHeader
	// the status line and the handler's header fields, the whole header
	// block once committed, then body bytes (chunk-framed when chunked).
	// Before the commit, body holds the body bytes (of a HEAD response,
	// the first for sniffing), in bodyBuf (a buffer of outPool, given
	// back at the commit).
	out     *[]byte
	body    []byte
	bodyBuf *[]byte
	// declared is the handler's Content-Length, -1 if none; written
	// counts the body bytes the handler wrote.
	declared, written int64
	// trailers are the trailer names the header declared (see
	// declareTrailers); nil when it declared none.
	trailers *[]string
	// err is the first failure of a write to the connection: later
	// writes return it.
	err error

	// The flags, together (the exchange is kept within a size class).
	//
	// wroteHeader is set by WriteHeader (the status is fixed);
	// committed once the header block is built (and handed over or
	// about to be).
	wroteHeader, committed bool
	// chunked: the body goes out in chunks. raw: with neither chunks nor
	// a Content-Length, the end of the body is the connection's close.
	chunked, raw bool
	// noBody: HEAD, or a status without a body; written bytes are
	// counted and dropped.
	noBody     bool
	closeAfter bool
	// hijacked is set once Hijack succeeded.
	hijacked bool
	// facts is what the header said at WriteHeader.
	facts headerFacts
}

// Header returns the response header map; see http.ResponseWriter.
func (w *response) Header() http.Header {
	if w.header == nil {
		w.header = make(http.Header) // on first use: a handler that sets none costs no map
	}
	return w.header
}

// WriteHeader sends the status with the header as it is now; see
// http.ResponseWriter. A 1xx status other than 101 is sent as an
// interim response and the header stays open.
func (w *response) WriteHeader(code int) {
	if w.hijacked {
		w.s.logf("httpserver: response.WriteHeader on hijacked connection")
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if w.wroteHeader {
		w.s.logf("httpserver: superfluous response.WriteHeader call (status %d after %d)", code, w.status)
		return
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		w.writeInterim(code)
		return
	}
	w.wroteHeader = true
	w.status = code
	if cl := w.header.Get("Content-Length"); cl != "" {
		if n, ok := parseContentLength(cl); ok {
			w.declared = n
		} else {
			w.s.logf("httpserver: invalid Content-Length %q", cl)
			w.header.Del("Content-Length")
			w.facts.badLength = true // as net/http: no length computed either
		}
	}
	w.noBody = w.ex.req.Method == http.MethodHead || !bodyAllowed(code)
	w.freezeHeader()
}

// freezeHeader writes the status line and the handler's header fields
// into out, and notes what the commit decides from them: the header sent
// is the header as it was at WriteHeader, explicit or implied by the
// first Write (changes made later are ignored, as net/http's contract
// says). The fields the server adds (Content-Length, Content-Type, Date,
// Transfer-Encoding, Connection) are appended by the commit.
func (w *response) freezeHeader() {
	h := w.header
	f := &w.facts
	_, f.hasType = h["Content-Type"]
	_, f.hasDate = h["Date"]
	te := h.Get("Transfer-Encoding")
	f.hasTE, f.teIdentity = te != "", te == "identity"
	f.hasEncoding = h.Get("Content-Encoding") != ""
	w.declareTrailers()
	conn, connSet := h["Connection"]
	f.connSet = connSet
	if len(conn) > 0 {
		f.connClose = conn[0] == "close"
		f.connFirstClose = containsToken(conn[0], "close")
	}
	f.protocolSwitch = w.status == http.StatusSwitchingProtocols && h.Get("Upgrade") != "" && hasToken(conn, "upgrade")
	if w.out == nil {
		w.out = getOut()
	}
	skip := skipTransferEncoding
	if w.status == http.StatusNoContent || w.status < 200 {
		skip |= skipContentLength
	}
	b := appendStatusLine(*w.out, w.status, w.ex.req.ProtoAtLeast(1, 1))
	*w.out = appendHeader(b, h, skip, &f.connLines)
}

// headerFacts is what the commit needs to know of the header as it was at
// WriteHeader.
type headerFacts struct {
	hasType, hasDate, hasEncoding bool
	// hasTE: the handler set Transfer-Encoding (the server frames the
	// body itself: chunked, or by the close for identity).
	hasTE, teIdentity bool
	// What the handler's Connection field says, as net/http reads it:
	// connClose, that its first value is exactly "close" (the response
	// then closes the connection); connFirstClose, that its first value
	// holds close between boundaries (a closing response then keeps the
	// field); connSet, that the field is there at all. connLines is where
	// its lines are in the header block (offsets in out; empty when none).
	connClose, connFirstClose, connSet bool
	connLines                          [2]int
	// protocolSwitch: a 101 with an Upgrade field and Connection:
	// upgrade, whose Connection field net/http keeps even when the
	// connection closes after it.
	protocolSwitch bool
	// trailers: the response has trailers (a Trailer field, or a field
	// named with http.TrailerPrefix), so its length is not computed.
	trailers bool
	// badLength: the handler's Content-Length was invalid (dropped), so
	// its length is not computed.
	badLength bool
}

// declareTrailers notes the trailers the header announces, as net/http
// does: the names its Trailer fields list (less those RFC 9110 section
// 6.5.1 forbids in a trailer), and the fields named with
// http.TrailerPrefix, whose values are read when the handler returns.
func (w *response) declareTrailers() {
	h := w.header
	for k := range h {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			w.facts.trailers = true
			break
		}
	}
	for _, v := range h["Trailer"] {
		w.facts.trailers = true
		for name := range strings.SplitSeq(v, ",") {
			if name = trimOWS(name); name == "" {
				continue
			}
			if name = http.CanonicalHeaderKey(name); validTrailer(name) {
				if w.trailers == nil {
					w.trailers = new([]string)
				}
				*w.trailers = append(*w.trailers, name)
			}
		}
	}
}

// forbiddenTrailers are the fields a trailer may not carry (RFC 9110
// section 6.5.1; net/http's list), besides the If- fields.
var forbiddenTrailers = map[string]bool{
	"Authorization": true, "Cache-Control": true, "Connection": true, "Content-Encoding": true,
	"Content-Length": true, "Content-Range": true, "Content-Type": true, "Expect": true, "Host": true,
	"Keep-Alive": true, "Max-Forwards": true, "Pragma": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Proxy-Connection": true, "Range": true, "Realm": true, "Te": true,
	"Trailer": true, "Transfer-Encoding": true, "Www-Authenticate": true,
}

func validTrailer(name string) bool {
	return !strings.HasPrefix(name, "If-") && !forbiddenTrailers[name]
}

// appendTrailers writes the trailer section's fields: those named with
// http.TrailerPrefix, and the declared names' values, as the header holds
// them now that the handler returned.
func (w *response) appendTrailers(b []byte) []byte {
	var t http.Header
	for k, vs := range w.header {
		if name, ok := strings.CutPrefix(k, http.TrailerPrefix); ok {
			if t == nil {
				t = make(http.Header)
			}
			t[name] = vs
		}
	}
	var declared []string
	if w.trailers != nil {
		declared = *w.trailers
	}
	for _, k := range declared {
		for _, v := range w.header[k] {
			if t == nil {
				t = make(http.Header)
			}
			t.Add(k, v)
		}
	}
	return appendHeader(b, t, 0, nil)
}

// writeInterim sends a 1xx response (103 Early Hints, ...) at once.
func (w *response) writeInterim(code int) {
	if w.ex.taskMode {
		return // a task handler's response goes out at its end
	}
	b := make([]byte, 0, 256)
	b = appendStatusLine(b, code, w.ex.req.ProtoAtLeast(1, 1))
	b = appendHeader(b, w.header, 0, nil)
	b = append(b, "\r\n"...)
	if _, err := w.ex.post(opWrite, nil, [][]byte{b}); err != nil && w.err == nil {
		w.err = err
	}
}

// Write writes body bytes; see http.ResponseWriter.
func (w *response) Write(p []byte) (int, error) {
	if w.hijacked {
		return 0, http.ErrHijacked
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return 0, w.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.declared >= 0 && w.written+int64(len(p)) > w.declared {
		return 0, http.ErrContentLength
	}
	if w.noBody { // HEAD: counted, kept for sniffing, dropped
		if !w.committed {
			w.keepForSniff(p)
		}
		w.written += int64(len(p))
		return len(p), nil
	}
	w.written += int64(len(p))
	if !w.committed {
		if len(w.body)+len(p) <= bufferSize || w.ex.taskMode {
			if w.bodyBuf == nil {
				w.bodyBuf = getOut()
				w.body = *w.bodyBuf
			}
			w.body = append(w.body, p...)
			return len(p), nil
		}
		w.commit(false, p)
	}
	if w.ex.taskMode {
		w.appendBody(p)
		return len(p), nil
	}
	// Committed: stage small writes, hand big ones over without a copy
	// (the goroutine waits while the task writes p).
	if len(*w.out)+len(p) <= bufferSize {
		w.appendBody(p)
		return len(p), nil
	}
	var pre, post []byte
	if w.chunked {
		*w.out = appendChunkHeader(*w.out, len(p))
		post = crlf
	}
	pre = *w.out
	bufs := [][]byte{pre, p}
	if post != nil {
		bufs = append(bufs, post)
	}
	_, err := w.ex.post(opWrite, nil, bufs)
	*w.out = (*w.out)[:0]
	if err != nil {
		w.err = err
		return 0, err
	}
	return len(p), nil
}

// WriteString is Write for a string.
func (w *response) WriteString(s string) (int, error) {
	return w.Write([]byte(s))
}

// appendBody stages p (committed), framed as a chunk when chunked.
func (w *response) appendBody(p []byte) {
	if w.chunked {
		*w.out = appendChunkHeader(*w.out, len(p))
		*w.out = append(*w.out, p...)
		*w.out = append(*w.out, "\r\n"...)
		return
	}
	*w.out = append(*w.out, p...)
}

// Flush sends what is buffered; see http.Flusher. A TaskHandler's Flush
// does nothing: its response goes out when its future completes.
func (w *response) Flush() { _ = w.FlushError() }

// FlushError is Flush that reports the failure (http.ResponseController
// uses it).
func (w *response) FlushError() error {
	if w.hijacked {
		return http.ErrHijacked
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.ex.taskMode {
		return nil
	}
	if w.err != nil {
		return w.err
	}
	if !w.committed {
		w.commit(false, nil)
	}
	if len(*w.out) == 0 {
		return nil
	}
	_, err := w.ex.post(opWrite, nil, [][]byte{*w.out})
	*w.out = (*w.out)[:0]
	if err != nil {
		w.err = err
	}
	return err
}

// SetReadDeadline sets the deadline for reading the rest of the request
// body, in place of ReadTimeout's (http.ResponseController uses it); the
// zero time means none. A read of the body past it fails with a timeout
// error, and the connection closes after the response, as in net/http. It
// takes effect at the handler's next read; a deadline already exceeded is
// not extended (the read that exceeded it closed the connection).
func (w *response) SetReadDeadline(t time.Time) error {
	w.ex.mu.Lock()
	w.ex.readSet, w.ex.readBy = true, t
	w.ex.mu.Unlock()
	return nil
}

// SetWriteDeadline sets the deadline for writing the rest of the
// response, in place of WriteTimeout's (http.ResponseController uses it,
// a streaming handler to extend it); the zero time means none. A write
// past it fails with a timeout error and the connection is closed. It
// takes effect at the handler's next write or flush, or for the response
// of a handler that returned.
func (w *response) SetWriteDeadline(t time.Time) error {
	w.ex.mu.Lock()
	w.ex.writeSet, w.ex.writeBy = true, t
	w.ex.mu.Unlock()
	return nil
}

// errHijackUnsupported is the failure of Hijack on a connection that is
// not one of the runtime's TCP or Unix streams, or in a TaskHandler.
var errHijackUnsupported = fmt.Errorf("httpserver: Hijack: %w", http.ErrNotSupported)

// Hijack gives the connection to the handler (see http.Hijacker): the
// connection's task stops and forgets it (Shutdown and Close no longer
// see it), and the handler gets a net.Conn over the stream (made by
// blitz.NetConn) and a bufio.ReadWriter whose Reader first returns the
// bytes the server had read past the request. What the response had
// buffered is sent first if its header was committed, else dropped. Only
// the runtime's TCP and Unix streams can be hijacked, and only by a
// Handler (not a TaskHandler); otherwise the error matches
// http.ErrNotSupported.
func (w *response) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.hijacked {
		return nil, nil, http.ErrHijacked
	}
	var nc net.Conn
	switch s := w.ex.rwc.(type) {
	case *blitz.TCPStream:
		nc = blitz.NetConn(s)
	case *blitz.UnixStream:
		nc = blitz.NetConn(s)
	}
	if nc == nil {
		return nil, nil, errHijackUnsupported
	}
	_, buf, err := w.hijackStream()
	if err != nil {
		return nil, nil, err
	}
	var r io.Reader = nc
	if len(buf) > 0 {
		r = io.MultiReader(bytes.NewReader(buf), nc)
	}
	return nc, bufio.NewReadWriter(bufio.NewReader(r), bufio.NewWriter(nc)), nil
}

// HijackConn is Hijack for code that goes on with the runtime's futures
// (a WebSocket connection served as a task): it gives up the connection
// of w, a ResponseWriter of this package's Handler (or one wrapping it,
// with an Unwrap method as http.ResponseController expects), as the
// stream itself, with the bytes the server had read past the request.
// The caller owns the stream from then on and closes it. Unlike Hijack,
// it gives up a TLS stream (a *blitz.TLSStream of a server on a
// blitz.TLSListener) too. It fails as Hijack does otherwise, and with an
// error matching http.ErrNotSupported for a ResponseWriter of another
// server.
func HijackConn(w http.ResponseWriter) (Conn, []byte, error) {
	for {
		switch rw := w.(type) {
		case *response:
			if rw.hijacked {
				return nil, nil, http.ErrHijacked
			}
			switch rw.ex.rwc.(type) {
			case *blitz.TCPStream, *blitz.UnixStream, *blitz.TLSStream:
				// A TLS stream's cancelled read loses nothing (its
				// transport keeps the records received): the stream goes
				// on with its new owner.
			default:
				return nil, nil, errHijackUnsupported
			}
			return rw.hijackStream()
		case interface{ Unwrap() http.ResponseWriter }:
			w = rw.Unwrap()
		default:
			return nil, nil, errHijackUnsupported
		}
	}
}

// hijackStream takes the connection from its task: the common part of
// Hijack and HijackConn, for a stream that can be hijacked.
func (w *response) hijackStream() (Conn, []byte, error) {
	ex := w.ex
	if ex.taskMode {
		return nil, nil, errHijackUnsupported
	}
	if w.committed && len(*w.out) > 0 {
		if err := w.FlushError(); err != nil {
			return nil, nil, err
		}
	}
	if _, err := ex.post(opHijack, nil, nil); err != nil {
		return nil, nil, err
	}
	w.hijacked = true
	ex.mu.Lock()
	buf := ex.hijackBuf
	ex.hijackBuf = nil
	ex.mu.Unlock()
	return ex.rwc, buf, nil
}

// finishResponse builds the last bytes of the response once the handler
// returned, and says whether the connection must close after them.
func (w *response) finishResponse() ([]byte, bool) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.committed {
		w.commit(true, nil)
	}
	if w.chunked && w.err == nil {
		b := append(*w.out, "0\r\n"...)
		if w.facts.trailers {
			b = w.appendTrailers(b)
		}
		*w.out = append(b, "\r\n"...)
	}
	if w.declared >= 0 && w.written < w.declared && !w.noBody {
		// The handler promised more than it wrote: the client would wait
		// for the rest, so the connection must end.
		w.closeAfter = true
	}
	return *w.out, w.closeAfter
}

// sniffLen is how much of a body Content-Type sniffing reads
// (http.DetectContentType's limit).
const sniffLen = 512

// keepForSniff keeps the first bytes a handler writes for a response
// without a body (HEAD), for the Content-Type the response would have had.
func (w *response) keepForSniff(p []byte) {
	if len(w.body) >= sniffLen {
		return
	}
	if w.bodyBuf == nil {
		w.bodyBuf = getOut()
		w.body = *w.bodyBuf
	}
	w.body = append(w.body, p[:min(len(p), sniffLen-len(w.body))]...)
}

// sniffBytes returns the start of the body for Content-Type sniffing: what
// is buffered, followed by the start of next (the write that commits the
// response) when that is short of sniffLen, as net/http sniffs its first
// write to the connection.
func (w *response) sniffBytes(next []byte) []byte {
	if len(w.body) >= sniffLen || len(next) == 0 {
		return w.body
	}
	if len(w.body) == 0 {
		return next
	}
	// Into body's spare capacity (a buffer of outPool, with room past
	// bufferSize): body's own length is unchanged.
	return append(w.body, next[:min(len(next), sniffLen-len(w.body))]...)
}

// commit completes the header block in out (the status line and the
// handler's fields are there since WriteHeader) with the fields the server
// adds, followed by the body bytes buffered so far. final: the handler has
// returned, so the length of the body is known. next is the write that
// commits the response, if one does (for sniffing).
func (w *response) commit(final bool, next []byte) {
	w.committed = true
	req := w.ex.req
	ex := w.ex
	f := &w.facts

	// Connection management.
	if !ex.keepAlive || w.s.keepAlivesDisabled() || w.s.shuttingDown.Load() || f.connClose {
		w.closeAfter = true
	}
	ex.mu.Lock()
	bodyDone, remaining, continueSent := ex.bodyDone, ex.bodyRemaining, ex.continueSent
	if ex.bodyBroken {
		w.closeAfter = true
	}
	ex.mu.Unlock()
	if !bodyDone {
		switch {
		case ex.expectContinue && !continueSent:
			// The client may or may not send the body it announced.
			w.closeAfter = true
		case final && remaining > maxDrainBytes:
			// Too much left to drain (a chunked body, of unknown length,
			// is drained up to the bound after the response).
			w.closeAfter = true
		}
	}

	// Framing. The Content-Length and Content-Type the server adds go
	// straight into the header block (as net/http's do).
	addLength := false
	if !w.noBody || (req.Method == http.MethodHead && bodyAllowed(w.status)) {
		switch {
		case w.declared >= 0:
		case final && !f.trailers && !f.hasTE && !f.badLength && (!w.noBody || (w.written > 0 && w.written <= bufferSize)):
			// A response to HEAD gets the length its GET would have
			// had: one written whole within the buffer.
			w.declared = int64(len(w.body))
			if w.noBody {
				w.declared = w.written
			}
			addLength = true
		case w.noBody:
		case req.ProtoAtLeast(1, 1) && !f.teIdentity:
			w.chunked = true
		default:
			w.raw = true
			w.closeAfter = true
		}
	}
	ctype := ""
	if bodyAllowed(w.status) && !f.hasType && !f.hasEncoding && !f.hasTE {
		if sniff := w.sniffBytes(next); len(sniff) > 0 {
			ctype = http.DetectContentType(sniff)
		}
	}

	b := *w.out
	if addLength {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, w.declared, 10)
		b = append(b, "\r\n"...)
	}
	if ctype != "" {
		b = append(b, "Content-Type: "...)
		b = append(b, ctype...)
		b = append(b, "\r\n"...)
	}
	if !f.hasDate {
		b = append(b, "Date: "...)
		b = append(b, httpDate()...)
		b = append(b, "\r\n"...)
	}
	if w.chunked {
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	}
	switch {
	case w.closeAfter && (w.s.keepAlivesDisabled() || !f.connFirstClose) && !f.protocolSwitch:
		// As net/http: the handler's Connection field goes, and an
		// HTTP/1.1 response says close (an HTTP/1.0 one closes unless
		// it says keep-alive).
		if at := f.connLines; at[1] > at[0] {
			b = append(b[:at[0]], b[at[1]:]...)
		}
		if req.ProtoAtLeast(1, 1) {
			b = append(b, "Connection: close\r\n"...)
		}
	case !w.closeAfter && !req.ProtoAtLeast(1, 1) && !f.connSet:
		// (net/http adds it only when the handler set no Connection line.)
		b = append(b, "Connection: keep-alive\r\n"...)
	}
	b = append(b, "\r\n"...)
	*w.out = b
	if len(w.body) > 0 && !w.noBody {
		w.appendBody(w.body)
	}
	if w.bodyBuf != nil {
		*w.bodyBuf = w.body
		putOut(w.bodyBuf)
		w.bodyBuf = nil
	}
	w.body = nil
}

// bodyAllowed reports whether a response with status may have a body.
func bodyAllowed(status int) bool {
	switch {
	case status >= 100 && status <= 199:
		return false
	case status == http.StatusNoContent, status == http.StatusNotModified:
		return false
	}
	return true
}

// statusLines caches the status lines of the common statuses.
var statusLines = func() map[int]string {
	m := make(map[int]string)
	for _, c := range []int{100, 101, 103, 200, 201, 202, 204, 206, 301, 302, 303, 304, 307, 308,
		400, 401, 403, 404, 405, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 429, 431,
		500, 501, 502, 503, 504, 505} {
		m[c] = "HTTP/1.1 " + strconv.Itoa(c) + " " + http.StatusText(c) + "\r\n"
	}
	return m
}()

// appendStatusLine writes the status line of code, in HTTP/1.1 or (for an
// HTTP/1.0 request, as net/http answers one) HTTP/1.0.
func appendStatusLine(b []byte, code int, is11 bool) []byte {
	if s, ok := statusLines[code]; ok {
		if !is11 {
			b = append(b, "HTTP/1.0"...)
			return append(b, s[len("HTTP/1.1"):]...)
		}
		return append(b, s...)
	}
	if is11 {
		b = append(b, "HTTP/1.1 "...)
	} else {
		b = append(b, "HTTP/1.0 "...)
	}
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, ' ')
	text := http.StatusText(code)
	if text == "" {
		text = "status code " + strconv.Itoa(code)
	}
	b = append(b, text...)
	return append(b, "\r\n"...)
}

// headerSkip names the fields appendHeader leaves out.
type headerSkip uint8

const (
	skipTransferEncoding headerSkip = 1 << iota // the server frames the body
	skipContentLength                           // a status without a length
)

// appendHeader writes h's fields in key order, dropping invalid names,
// trailers and those skip names, and turning line breaks in values into
// spaces (as net/http does). conn, if not nil, receives the offsets in b
// of the Connection lines (start, end; left as they are when there are
// none).
func appendHeader(b []byte, h http.Header, skip headerSkip, conn *[2]int) []byte {
	var arr [16]string
	keys := arr[:0]
	for k := range h {
		keys = append(keys, k)
	}
	if len(keys) > 1 {
		slices.Sort(keys)
	}
	for _, k := range keys {
		if !validToken([]byte(k)) || strings.HasPrefix(k, http.TrailerPrefix) ||
			(skip&skipTransferEncoding != 0 && k == "Transfer-Encoding") ||
			(skip&skipContentLength != 0 && k == "Content-Length") {
			continue
		}
		lines := len(b)
		for _, v := range h[k] {
			b = append(b, k...)
			b = append(b, ": "...)
			start := len(b)
			b = append(b, strings.TrimSpace(v)...)
			for i := start; i < len(b); i++ {
				if b[i] == '\r' || b[i] == '\n' {
					b[i] = ' '
				}
			}
			b = append(b, "\r\n"...)
		}
		if k == "Connection" && conn != nil {
			conn[0], conn[1] = lines, len(b)
		}
	}
	return b
}

func appendChunkHeader(b []byte, n int) []byte {
	b = strconv.AppendInt(b, int64(n), 16)
	return append(b, "\r\n"...)
}

// dateCache is the Date header of the current second.
type dateCache struct {
	sec int64
	b   []byte
}

var currentDate atomic.Pointer[dateCache]

// httpDate returns the Date header value for now, formatted once a second.
func httpDate() []byte {
	now := time.Now()
	sec := now.Unix()
	if d := currentDate.Load(); d != nil && d.sec == sec {
		return d.b
	}
	d := &dateCache{sec: sec, b: now.UTC().AppendFormat(nil, http.TimeFormat)}
	currentDate.Store(d)
	return d.b
}

// requestBody is the Body of a request for a goroutine handler: its reads
// are decoded by the connection task.
type requestBody struct {
	ex     *exchange
	closed bool
	eof    bool
	// mu serialises the handler's reads (a body may be read from more
	// than one goroutine, one at a time).
	mu sync.Mutex
}

// errBodyReadAfterClose is http.ErrBodyReadAfterClose.
var errBodyReadAfterClose = http.ErrBodyReadAfterClose

// Read reads body bytes: the first read of a request that expects 100
// Continue sends it.
func (b *requestBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.closed:
		return 0, errBodyReadAfterClose
	case b.eof:
		return 0, io.EOF
	case len(p) == 0:
		return 0, nil
	}
	n, err := b.ex.post(opRead, p, nil)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

// Close marks the body closed; the server drains or discards what is
// left when the handler returns.
func (b *requestBody) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return nil
}
