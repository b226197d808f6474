package websocket

// Upgrading a stream that no HTTP server holds: a connection accepted
// from a blitz.TLSListener (wss://), or any other stream of the runtime.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"

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
	buf   []byte
	n     int
	out   []byte
	off   int
	req   *http.Request
	c     *Conn
	err   error // the refusal's, returned once its response is written
}

// UpgradeStream returns a future that reads an HTTP/1.1 request from s,
// checks it as Upgrade does and answers it, for a server without an HTTP
// server: a task per connection accepted from a blitz.TLSListener (a
// wss:// server; the TLS handshake runs at the first read) or a
// blitz.TCPListener. Its value is the connection, on s. A request that is
// not an opening handshake is answered as by Upgrade (400, 403, 405, 426,
// 500; 431 for a header block over 16 KiB, 400 for one that is not
// HTTP/1.1), s is closed, and the error wraps ErrBadHandshake; a stream
// that fails or ends first is closed too. Bound the wait for the request
// with blitz.Timeout or the stream's read timeout. Cancelling the future
// closes s.
func (u *Upgrader) UpgradeStream(s Stream, responseHeader http.Header) *UpgradeFuture {
	return &UpgradeFuture{u: u, s: s, extra: responseHeader}
}

// Request returns the request read, once the future completed (nil if
// none was read whole).
func (f *UpgradeFuture) Request() *http.Request { return f.req }

// Poll reads the request and answers it; see UpgradeStream.
func (f *UpgradeFuture) Poll(cx *future.Context) (future.Result[*Conn], bool) {
	for {
		switch f.phase {
		case 0:
			if f.buf == nil {
				f.buf = make([]byte, 2048)
			}
			if f.n == len(f.buf) {
				if len(f.buf) >= maxRequestHeader {
					f.refuse(&refusal{status: http.StatusRequestHeaderFieldsTooLarge, msg: "request header too large",
						err: fmt.Errorf("%w: request header over %d bytes", ErrBadHandshake, maxRequestHeader)})
					continue
				}
				f.buf = append(f.buf, make([]byte, len(f.buf))...)
			}
			r, ok := f.s.PollRead(cx, f.buf[f.n:])
			if !ok {
				return future.Result[*Conn]{}, false
			}
			if r.Err != nil || r.Value == 0 {
				err := r.Err
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return f.fail(fmt.Errorf("%w: reading the request: %w", ErrBadHandshake, err))
			}
			f.n += r.Value
			end := bytes.Index(f.buf[:f.n], []byte("\r\n\r\n"))
			if end < 0 {
				continue
			}
			end += 4
			req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(f.buf[:end])))
			if err != nil || req.ProtoMajor != 1 || req.ProtoMinor != 1 {
				f.refuse(&refusal{status: http.StatusBadRequest, msg: "not an HTTP/1.1 request",
					err: fmt.Errorf("%w: not an HTTP/1.1 request", ErrBadHandshake)})
				continue
			}
			f.req = req
			resp, proto, dfl, ref := f.u.prepare(req, f.extra)
			if ref != nil {
				f.refuse(ref)
				continue
			}
			f.out = resp
			f.c = newConn(f.s, false, proto, &f.u.Options, f.buf[end:f.n])
			f.c.setDeflate(dfl)
			f.buf = nil
			f.phase = 1
		case 1:
			for f.off < len(f.out) {
				r, ok := f.s.PollWrite(cx, f.out[f.off:])
				if !ok {
					return future.Result[*Conn]{}, false
				}
				if r.Err != nil {
					return f.fail(fmt.Errorf("websocket: upgrade: %w", r.Err))
				}
				f.off += r.Value
			}
			if f.err != nil {
				return f.fail(f.err)
			}
			f.phase = 2
			c := f.c
			f.c, f.out = nil, nil
			return future.Ok(c), true
		default:
			panic(future.ErrPolledAfterCompletion)
		}
	}
}

// refuse makes the future write ref's response, then fail.
func (f *UpgradeFuture) refuse(ref *refusal) {
	body := ref.body()
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", ref.status, http.StatusText(ref.status))
	_ = ref.header().Write(&b)
	b.WriteString("Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(body)+1) + "\r\n\r\n")
	b.WriteString(body + "\n")
	f.out, f.err, f.buf = b.Bytes(), ref.err, nil
	f.phase = 1
}

func (f *UpgradeFuture) fail(err error) (future.Result[*Conn], bool) {
	f.phase = 2
	f.c, f.buf, f.out = nil, nil, nil
	_ = f.s.Close()
	return future.Fail[*Conn](err), true
}

// Cancel abandons the upgrade and closes the stream.
func (f *UpgradeFuture) Cancel() {
	if f.phase == 2 {
		return
	}
	switch f.phase {
	case 0:
		f.s.CancelRead()
	case 1:
		f.s.CancelWrite()
	}
	f.phase = 2
	f.c, f.buf, f.out = nil, nil, nil
	_ = f.s.Close()
}
