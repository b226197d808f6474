package websocket

// Upgrading a stream that no HTTP server holds: a connection accepted
// from a blitz.TLSListener (wss://), or any other stream of the runtime.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// Stream is a byte stream of the runtime that a connection can run on:
// *blitz.TCPStream, *blitz.UnixStream, *blitz.TLSStream.
type Stream interface {
	blitz.AsyncReader
	blitz.AsyncWriter
	Close() error
}

// maxRequestHeader bounds the request header block UpgradeStream reads.
const maxRequestHeader = 16 << 10

// UpgradeFuture is the future of UpgradeStream.
type UpgradeFuture struct {
	u     *Upgrader
	s     Stream
	extra http.Header
	phase uint8
	// pooled says that buf, while the answer is written, is a buffer of
	// answerBufs, which goes back there once the answer is written.
	pooled bool
	// rd is the pooled read in flight, on a stream with pooled reads.
	rd *blitz.ReadPooledFuture
	// Reading (phase 0), buf[:n] is the request read so far when it took
	// more than one pooled read, or the read buffer of a stream without
	// pooled reads; writing (phase 1), buf is the answer and n how much of
	// it is written.
	buf []byte
	n   int
	// head is a copy of the request head, for Request: a head checked on
	// its raw bytes had no http.Request made for it.
	head []byte
	req  *http.Request
	c    *Conn
	err  error // the refusal's, returned once its response is written
}

// UpgradeStream returns a future that reads an HTTP/1.1 request from s,
// checks it as Upgrade does and answers it, for a server without an HTTP
// server: a task per connection accepted from a blitz.TLSListener (a
// wss:// server; the TLS handshake runs at the first read) or a
// blitz.TCPListener (blitz.Serve). Its value is the connection, on s. A
// request that is not an opening handshake is answered as by Upgrade (400,
// 403, 405, 426, 500; 431 for a header block over 16 KiB, 400 for one that
// is not HTTP/1.1), s is closed, and the error wraps ErrBadHandshake; a
// stream that fails or ends first is closed too. Bound the wait for the
// request with blitz.Timeout or the stream's read timeout. Cancelling the
// future closes s.
//
// The request is read into the runtime's pool of read buffers where s has
// pooled reads (blitz.TCPStream, blitz.UnixStream), and the request head
// that every client sends is checked on its bytes, without an
// http.Request: a connection's handshake then leaves a few hundred bytes
// of garbage, where an HTTP server's Handler and Upgrade leave a few
// kilobytes. An Upgrader with a CheckOrigin gets the http.Request it
// takes, read with http.ReadRequest, as does any request of another shape.
func (u *Upgrader) UpgradeStream(s Stream, responseHeader http.Header) *UpgradeFuture {
	return &UpgradeFuture{u: u, s: s, extra: responseHeader}
}

// Request returns the request read, once the future completed (nil if
// none was read whole), read with http.ReadRequest at the first call.
func (f *UpgradeFuture) Request() *http.Request {
	if f.req == nil && f.head != nil {
		f.req, _ = readRequest(f.head)
	}
	return f.req
}

// Poll reads the request and answers it; see UpgradeStream.
func (f *UpgradeFuture) Poll(cx *future.Context) (future.Result[*Conn], bool) {
	for {
		switch f.phase {
		case 0:
			if pr, ok := f.s.(pooledReader); ok {
				r, pending, ended := f.readPooled(cx, pr)
				if pending || ended {
					return r, ended
				}
				continue
			}
			if f.buf == nil {
				f.buf = make([]byte, 2048)
			}
			if f.n == len(f.buf) {
				if len(f.buf) >= maxRequestHeader {
					f.refuse(tooLarge())
					continue
				}
				f.buf = append(f.buf, make([]byte, len(f.buf))...)
			}
			r, ok := f.s.PollRead(cx, f.buf[f.n:])
			if !ok {
				return future.Result[*Conn]{}, false
			}
			if r.Err != nil || r.Value == 0 {
				return f.readFailed(r.Err)
			}
			f.n += r.Value
			if headEnd(f.buf[:f.n]) >= 0 {
				f.answer(f.buf[:f.n])
			}
		case 1:
			for f.n < len(f.buf) {
				r, ok := f.s.PollWrite(cx, f.buf[f.n:])
				if !ok {
					return future.Result[*Conn]{}, false
				}
				if r.Err != nil {
					return f.fail(fmt.Errorf("websocket: upgrade: %w", r.Err))
				}
				f.n += r.Value
			}
			if f.err != nil {
				return f.fail(f.err)
			}
			if f.pooled {
				f.pooled = false
				answerBufs.Put((*[answerRoom]byte)(f.buf[:answerRoom]))
			}
			f.phase = 2
			c := f.c
			f.c, f.buf = nil, nil
			return future.Ok(c), true
		default:
			panic(future.ErrPolledAfterCompletion)
		}
	}
}

// readPooled reads the request through pooled reads: a request that came
// whole in one read is answered from the pool's buffer, and only one that
// did not is gathered in a buffer of its own. It reports pending while a
// read is, and ended with the future's outcome when the read failed;
// otherwise the phase moved on, or the request is not whole yet.
func (f *UpgradeFuture) readPooled(cx *future.Context, pr pooledReader) (res future.Result[*Conn], pending, ended bool) {
	if f.rd == nil {
		f.rd = pr.ReadPooled()
	}
	r, ok := f.rd.Poll(cx)
	if !ok {
		return res, true, false
	}
	f.rd = nil
	if r.Err != nil {
		res, _ = f.readFailed(r.Err)
		return res, false, true
	}
	data := r.Value.Bytes()
	defer r.Value.Release() // after answer, which copies what it keeps
	if f.n == 0 && headEnd(data) >= 0 {
		f.answer(data)
		return res, false, false
	}
	f.buf = append(f.buf[:f.n], data...)
	f.n = len(f.buf)
	switch end := headEnd(f.buf); {
	case end > maxRequestHeader || end < 0 && f.n >= maxRequestHeader:
		f.refuse(tooLarge())
	case end >= 0:
		f.answer(f.buf)
	}
	return res, false, false
}

// readFailed ends a read that failed (err, nil for a read of nothing) or
// found the end of the stream before a whole request.
func (f *UpgradeFuture) readFailed(err error) (future.Result[*Conn], bool) {
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return f.fail(fmt.Errorf("%w: reading the request: %w", ErrBadHandshake, err))
}

// answer checks the request at the start of b (whose head is whole) and
// moves on to writing the answer. b may be a pool buffer: what the
// connection keeps of it (the bytes past the head, the head for Request)
// is copied.
func (f *UpgradeFuture) answer(b []byte) {
	end := headEnd(b)
	if end > maxRequestHeader {
		f.refuse(tooLarge())
		return
	}
	room := answerBufs.Get().(*[answerRoom]byte)
	resp, proto, dfl, req, ref := f.u.answerHead(room[:0], b[:end], f.extra)
	f.req = req
	if req == nil { // checked on its bytes: Request reads it if asked
		f.head = bytes.Clone(b[:end])
	}
	if f.pooled = len(resp) > 0 && &resp[:1][0] == &room[0]; !f.pooled {
		answerBufs.Put(room)
	}
	if ref != nil {
		f.refuse(ref)
		return
	}
	var rest []byte
	if end < len(b) {
		rest = bytes.Clone(b[end:])
	}
	f.c = newConn(f.s, false, proto, &f.u.Options, rest)
	f.c.setDeflate(dfl)
	f.buf, f.n = resp, 0
	f.phase = 1
}

// answerRoom is the size of the buffers that 101 answers are written
// from: room for the answer with a subprotocol, permessage-deflate's
// parameters and a few fields of the caller's. A longer answer is an
// allocation of its own.
const answerRoom = 320

// answerBufs holds the buffers of answerRoom bytes that 101 answers are
// written from: a handshake leaves no garbage for its answer.
var answerBufs = sync.Pool{New: func() any { return new([answerRoom]byte) }}

// tooLarge is the refusal of a request head over maxRequestHeader.
func tooLarge() *refusal {
	return &refusal{status: http.StatusRequestHeaderFieldsTooLarge, msg: "request header too large",
		err: fmt.Errorf("%w: request header over %d bytes", ErrBadHandshake, maxRequestHeader)}
}

// refuse makes the future write ref's response, then fail.
func (f *UpgradeFuture) refuse(ref *refusal) {
	body := ref.body()
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", ref.status, http.StatusText(ref.status))
	_ = ref.header().Write(&b)
	b.WriteString("Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(body)+1) + "\r\n\r\n")
	b.WriteString(body + "\n")
	f.buf, f.n, f.err = b.Bytes(), 0, ref.err
	f.phase = 1
}

func (f *UpgradeFuture) fail(err error) (future.Result[*Conn], bool) {
	f.phase = 2
	f.c, f.buf, f.rd = nil, nil, nil
	_ = f.s.Close()
	return future.Fail[*Conn](err), true
}

// Cancel abandons the upgrade and closes the stream.
func (f *UpgradeFuture) Cancel() {
	if f.phase == 2 {
		return
	}
	switch {
	case f.rd != nil:
		f.rd.Cancel()
		f.rd = nil
	case f.phase == 0:
		f.s.CancelRead()
	case f.phase == 1:
		f.s.CancelWrite()
	}
	f.phase = 2
	f.c, f.buf = nil, nil
	_ = f.s.Close()
}
