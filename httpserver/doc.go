// Package httpserver is an HTTP/1.1 server on the blitz runtime that serves
// ordinary net/http Handlers. Each connection is a task of the runtime, not
// a goroutine: a keep-alive connection waiting for its next request holds
// a small state machine and no goroutine, and (on the runtime's sockets)
// no read buffer either. A handler runs on a goroutine only while it has a
// request to answer.
//
//	rt, _ := blitz.New(blitz.Config{})
//	l, _ := blitz.ListenTCP(rt.Handle(), ":8080")
//	srv := &httpserver.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
//	go srv.Serve(rt.Handle(), l) // returns ErrServerClosed after Shutdown
//	...
//	srv.Shutdown(ctx)
//	rt.Shutdown(ctx)
//
// Server's fields and methods have net/http's names and meanings where
// net/http has them (Handler, ReadHeaderTimeout, ReadTimeout, WriteTimeout,
// IdleTimeout, MaxHeaderBytes, ErrorLog, ListenAndServe, ListenAndServeTLS,
// RegisterOnShutdown, SetKeepAlivesEnabled, Shutdown, Close; the methods
// that listen take the runtime's Handle first), so most programs move over
// by changing the type of their server and passing the Handle.
//
// # The connection task
//
// A connection is owned by its task from the accept to the close; nothing
// else reads or writes it. The task:
//
//  1. Waits for a request. Reads go into a buffer of the runtime's pool
//     taken when data arrives (blitz.TCPStream.PollReadPooled), and the
//     buffer goes back as soon as its bytes are consumed, so an idle
//     connection holds none. A header block that spans reads is gathered
//     in a buffer of its own, up to MaxHeaderBytes.
//  2. Parses the request line and header block itself, as net/http
//     parses them, or more strictly where RFC 9112 lets a server refuse
//     (see "Differences from net/http"). A request it refuses gets
//     net/http's status (400, 417, 431, 501 for a transfer coding other
//     than chunked, 505 for a version other than HTTP/1.x) and the
//     connection closes, after a short linger so that the client reads
//     the answer.
//  3. Hands the request to a Handler on a goroutine (see below), or polls a
//     TaskHandler's future itself.
//  4. While the handler runs, performs what it asks: a read of the request
//     body is decoded (Content-Length or chunked; the trailer fields go to
//     Request.Trailer before the read that returns io.EOF) by the task
//     straight into the handler's buffer; a write or a Flush is written by
//     the task, the handler's goroutine waiting.
//  5. When the handler returns, writes the rest of the response, discards
//     what the handler left of the request body (up to 256 KiB, else the
//     connection closes), and goes back to 1 for the next request. Requests
//     that arrived early (pipelining) are already buffered; they are
//     answered in order.
//
// The goroutine of a Handler comes from a pool bounded by
// MaxHandlerGoroutines: a request that finds it full waits, as a task,
// for a goroutine to finish. The goroutine is taken when the request's
// header block has been parsed and given back when the handler returns;
// between requests, and while a client is slow to send its header, the
// connection holds none. A goroutine whose handler returned parks for the
// next request of any connection (at most max(64, 4*GOMAXPROCS) of them
// park; one parked for more than 10 seconds ends when another parks, and
// Shutdown and Close end them all), so a request does not start a
// goroutine. The connection's task yields
// to the goroutine it hands a request to, so a handler that answers at
// once runs straight away on the same processor.
//
// # Responses
//
// The ResponseWriter is an http.ResponseWriter, an http.Flusher and an
// http.Hijacker, and has what http.ResponseController looks for
// (FlushError, SetReadDeadline, SetWriteDeadline: a handler may move or
// lift ReadTimeout's and WriteTimeout's bounds for the rest of its
// request, a streaming one to go on past WriteTimeout). It
// buffers: a response whose handler returns having written at most 4 KiB,
// without a Flush, gets a Content-Length; a larger or flushed one is sent with chunked
// encoding (HTTP/1.1) or delimited by the close (HTTP/1.0). A write of
// more than 4 KiB goes to the connection without a copy. The header sent
// is the header as it was at WriteHeader, explicit or implied by the first
// Write: changes made later are ignored, as the http.ResponseWriter
// contract says. The Date header is added, and Content-Type is sniffed
// where net/http sniffs it (from the first bytes written, a response to
// HEAD included, unless the handler set Content-Type, Content-Encoding or
// Transfer-Encoding). A response to HEAD carries no body (and the
// Content-Length a GET would have, when the handler wrote one), nor do
// 1xx, 204 and 304. A 1xx other than 101 from WriteHeader is sent at once
// as an interim response. The connection is kept alive unless the request
// or the handler's header says Connection: close, the request is HTTP/1.0
// without keep-alive, DisableKeepAlives is set (or SetKeepAlivesEnabled
// turned keep-alives off), or the server is shutting down.
//
// Expect: 100-continue is answered with 100 Continue when the handler
// first reads the body, and not at all if it answers without reading (the
// connection then closes after the response, since the client may or may
// not send the body).
//
// A Handler may hijack the connection (http.Hijacker, for WebSockets and
// the like) when it is one of the runtime's TCP or Unix streams: the task
// gives it up and ends, and the handler gets it as a net.Conn
// (blitz.NetConn) with the bytes already read past the request; see
// Hijack. Not supported: hijacking other Conns or from a TaskHandler, and
// full-duplex handlers (a body read and a write of one request are done
// one at a time, in the order the handler asks; ResponseController's
// EnableFullDuplex reports http.ErrNotSupported). Response trailers are
// sent as net/http sends them (declared in a Trailer field, or named with
// http.TrailerPrefix, on a chunked response).
//
// A request's context is cancelled when its handler returns, when the
// client closes the connection while the handler runs (once the handler
// has read the body, the task keeps a read pending, as net/http's
// background read does; a pipelined next request that arrives meanwhile
// is kept for later), and by Close or the end of Shutdown's context.
//
// # Task handlers
//
// A TaskHandler answers a request with a future that the connection's
// task polls: no goroutine at all, for handlers that wait on the
// runtime's own timers, sockets and channels. It receives the whole
// request body at once (bounded by MaxTaskBodyBytes) and its response goes
// out when the future completes. See TaskHandler and ExampleTaskHandler.
//
// # Limits and timeouts
//
// ReadHeaderTimeout bounds the header block from its first byte (the
// first request's from the accept); IdleTimeout bounds the wait for the
// next request on a keep-alive connection; ReadTimeout bounds a whole
// request, body included; WriteTimeout bounds a response from the end of
// its request's header block. A connection past a read bound is closed
// without an answer, as net/http does. MaxHeaderBytes bounds the header
// block (431). A chunk-size line is bounded to 4 KiB and the trailer
// section to 16 KiB.
//
// # Parsing, and the differences from net/http
//
// Every header field that decides the framing of a body
// (Transfer-Encoding, Content-Length), the reuse of the connection
// (Connection) or an expectation (Expect) is read as net/http reads it:
// trimmed of spaces and tabs only and compared in ASCII only, so that
// Unicode case folds (U+212A KELVIN SIGN for k) and Unicode white space
// (U+00A0, U+0085) make a value that is not the token. Field names must be
// tokens; field values must not hold control bytes (CR, LF, NUL) or DEL;
// Host must hold only the bytes net/http allows (a@b or a#b is 400), and
// is required in HTTP/1.1 except for CONNECT. Lines may end with CRLF or a
// bare LF in the request line and header block, but only with CRLF in a
// chunked body. An empty line before a request line is skipped only after
// a POST (up to four CR or LF bytes, as net/http skips them). HTTP/1.x
// with x above 1 is served as HTTP/1.1, its Proto as the client sent it;
// an HTTP/1.0 request gets an HTTP/1.0 status line, as from net/http. A chunked request that declares trailers
// (Trailer: names) has them as the keys of Request.Trailer, filled when
// the body has been read to its end; a declared Content-Length,
// Transfer-Encoding or Trailer is 400. Plain HTTP sent to a TLS listener
// gets net/http's plain-text 400 before the close.
//
// Where the server deliberately differs from net/http, it is stricter, as
// RFC 9112 allows:
//
//   - A request with both Transfer-Encoding and Content-Length is 400
//     (net/http uses the chunked framing): RFC 9112 section 6.1 lets a
//     server reject it, and a proxy in front may have framed it by the
//     length.
//   - Transfer-Encoding in an HTTP/1.0 request is 400 (net/http ignores
//     the field): RFC 9112 section 6.1 says such framing is faulty.
//   - Obsolete line folding (a field line starting with a space or tab)
//     is 400 (net/http joins the lines): RFC 9112 section 5.2.
//   - A target in asterisk-form (*) is 400 for a method other than
//     OPTIONS, and one in absolute-form must be http or https (RFC 9112
//     section 3.2); net/http hands both to the handler.
//   - The HTTP/2 connection preface (PRI * HTTP/2.0) is 505: there is no
//     h2c upgrade to hand it to.
//   - A chunk extension may not hold control bytes (RFC 9112 section
//     7.1.1), and a chunk size must be below 2^63.
//
// And two differences in the framing of responses, both valid HTTP/1.1
// (RFC 9112 section 6): a response written whole within 4 KiB gets a
// Content-Length where net/http, whose buffer is 2 KiB, sends those
// between 2 and 4 KiB chunked; and an invalid Content-Length set by a
// handler is dropped from a response to HEAD, which net/http sends as
// it is.
//
// # Shutdown
//
// Shutdown closes the listeners, closes the connections that wait idle,
// lets each request in flight finish (its response says Connection:
// close) and returns when no connection is left, or closes them all when
// its context ends. Close closes everything at once and cancels the
// requests' contexts; a TaskHandler's future is cancelled.
//
// # Other connections
//
// The server reads and writes a connection through the Conn interface
// (blitz.AsyncReader, blitz.AsyncWriter, Close and the addresses), so
// a stream that wraps a socket can be served: ServeAcceptor serves any
// listener of the runtime whose streams are Conns (HTTPS on a
// blitz.TLSListener, a blitz.UnixListener), ServeConn a single
// connection accepted elsewhere. Requests over a blitz.TLSStream get
// Request.TLS (from the stream's ConnectionState). A Conn that is not one of the runtime's sockets is
// read into a 4 KiB buffer of its own, which it keeps while idle.
package httpserver
