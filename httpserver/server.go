package httpserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// Conn is a connection the server can serve: a byte stream read and
// written by polling, with its addresses. *blitz.TCPStream and
// *blitz.UnixStream are Conns; so is any stream that wraps one (a TLS
// stream, for instance). A Conn that also has the method
//
//	PollReadPooled(cx *future.Context) (future.Result[blitz.PooledBuf], bool)
//
// (the runtime's sockets; their CancelRead abandons that read too) is
// read into the runtime's buffer pool, so that it holds no read buffer
// while it waits for a request; another Conn is read into a buffer of its
// own. A Conn with a CloseWrite() error method gets a lingering close
// after an error response, as net/http gives one.
type Conn interface {
	blitz.AsyncReader
	blitz.AsyncWriter
	Close() error
	LocalAddr() net.Addr
	RemoteAddr() net.Addr
}

// pooledReader is a Conn that reads into the runtime's pool.
type pooledReader interface {
	PollReadPooled(cx *future.Context) (future.Result[blitz.PooledBuf], bool)
}

// closeWriter is a Conn whose sending side can be shut down alone.
type closeWriter interface {
	CloseWrite() error
}

// ErrServerClosed is what Serve returns after Shutdown or Close: it is
// http.ErrServerClosed, so code written for net/http checks it unchanged.
var ErrServerClosed = http.ErrServerClosed

// ErrNilConn is the error of ServeConn given a nil Conn.
var ErrNilConn = errors.New("httpserver: nil Conn")

// DefaultMaxHandlerGoroutines is the bound on the goroutines that run
// handlers at once when Server.MaxHandlerGoroutines is zero.
const DefaultMaxHandlerGoroutines = 10000

// DefaultMaxTaskBodyBytes bounds the request body a TaskHandler receives
// when Server.MaxTaskBodyBytes is zero.
const DefaultMaxTaskBodyBytes = 1 << 20

// maxDrainBytes is how much of a request body the handler left unread the
// server reads and discards to keep the connection; past it, the
// connection is closed instead (as net/http's 256 KiB).
const maxDrainBytes = 256 << 10

// Server serves HTTP/1.1 (and 1.0) on a blitz runtime. Its fields are
// read when Serve or ServeConn is first called; do not change them after.
// The zero Server serves with no timeouts, http.DefaultServeMux when
// Handler is nil, net/http's default header limit (1 MiB) and
// DefaultMaxHandlerGoroutines handler goroutines.
type Server struct {
	// Handler answers requests on goroutines; nil means
	// http.DefaultServeMux. Ignored when TaskHandler is set.
	Handler http.Handler
	// TaskHandler, when set, answers every request as a task on the
	// runtime instead of on a goroutine; see TaskHandler.
	TaskHandler TaskHandler

	// ReadHeaderTimeout bounds the reading of a request's header block,
	// from its first byte (from the accept, for a connection's first
	// request); zero means ReadTimeout, and both zero means no bound. A
	// client that is too slow is disconnected.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the reading of a whole request, body included:
	// a body read after it fails with a timeout error (and the connection
	// is closed).
	ReadTimeout time.Duration
	// WriteTimeout bounds the writing of a response, from the end of the
	// request's header block: a write after it fails, and the connection
	// is closed.
	WriteTimeout time.Duration
	// IdleTimeout is how long a keep-alive connection may wait for its
	// next request; zero means ReadTimeout, and both zero means no bound.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request line and header block; a longer
	// one is answered with 431 Request Header Fields Too Large. Zero means
	// http.DefaultMaxHeaderBytes (1 MiB).
	MaxHeaderBytes int
	// MaxHandlerGoroutines bounds the goroutines that run Handler at
	// once; a request that finds them all busy waits, as a task, for one.
	// Zero means DefaultMaxHandlerGoroutines.
	MaxHandlerGoroutines int
	// MaxTaskBodyBytes bounds the body of a request for a TaskHandler,
	// which the server reads in full first: a longer one is answered with
	// 413 Request Entity Too Large. Zero means DefaultMaxTaskBodyBytes.
	MaxTaskBodyBytes int64
	// DisableKeepAlives closes every connection after one response.
	DisableKeepAlives bool
	// ErrorLog receives the panics of handlers and the failures of
	// accept; nil means the standard logger.
	ErrorLog *log.Logger

	// initOnce makes the fields below.
	initOnce sync.Once
	// sem bounds the handler goroutines (acquired by a connection task,
	// released by the goroutine when its handler returns).
	sem *syncprim.Semaphore
	// pool keeps the goroutines of returned handlers for the next
	// requests.
	pool handlerPool

	// shuttingDown is set once by Shutdown or Close and never cleared;
	// loaded by connection tasks (before they wait idle) and handler
	// goroutines (as they build a response's Connection header).
	shuttingDown atomic.Bool

	// mu guards the fields below.
	mu sync.Mutex
	// conns is the list of every connection being served, from its
	// accept until its task ends, linked through conn.prev and conn.next;
	// nconns counts them.
	conns  *conn
	nconns int
	// listeners holds the listeners of the running Serve calls.
	listeners map[io.Closer]struct{}
	// hijacked holds the exchanges of hijacked connections whose
	// handlers still run, for Close to cancel their contexts.
	hijacked map[*exchange]struct{}
	// keepAlivesOff is set by SetKeepAlivesEnabled(false) and cleared by
	// SetKeepAlivesEnabled(true); read by every response's commit and by
	// connections going idle (idleSinceMarked), which pairs with the
	// setter's look at c.idle under c.mu, as shuttingDown does.
	keepAlivesOff atomic.Bool
	// onShutdown are the functions RegisterOnShutdown registered, which
	// each Shutdown starts. Guarded by mu.
	onShutdown []func()
	// closed is set by Close (force), after which nothing is served.
	closed bool
	// drained is closed once shuttingDown is set and conns and listeners
	// are both empty; made by the first Shutdown.
	drained chan struct{}
}

func (s *Server) init() {
	s.initOnce.Do(func() {
		n := s.MaxHandlerGoroutines
		if n <= 0 {
			n = DefaultMaxHandlerGoroutines
		}
		s.sem = syncprim.NewSemaphore(n)
		s.pool.init()
		s.listeners = make(map[io.Closer]struct{})
	})
}

func (s *Server) maxHeaderBytes() int {
	if s.MaxHeaderBytes > 0 {
		return s.MaxHeaderBytes
	}
	return http.DefaultMaxHeaderBytes
}

func (s *Server) headerTimeout() time.Duration {
	if s.ReadHeaderTimeout > 0 {
		return s.ReadHeaderTimeout
	}
	return s.ReadTimeout
}

func (s *Server) idleTimeout() time.Duration {
	if s.IdleTimeout > 0 {
		return s.IdleTimeout
	}
	return s.ReadTimeout
}

func (s *Server) maxTaskBody() int64 {
	if s.MaxTaskBodyBytes > 0 {
		return s.MaxTaskBodyBytes
	}
	return DefaultMaxTaskBodyBytes
}

func (s *Server) handler() http.Handler {
	if s.Handler != nil {
		return s.Handler
	}
	return http.DefaultServeMux
}

func (s *Server) logf(format string, args ...any) {
	if s.ErrorLog != nil {
		s.ErrorLog.Printf(format, args...)
	} else {
		log.Printf(format, args...)
	}
}

// Serve accepts connections on l, on h's runtime, and serves each as a
// task, until Shutdown or Close; then it returns ErrServerClosed. Another
// failure of the listener (l closed by someone else: an error matching
// net.ErrClosed; the runtime shutting down: blitz.ErrShutdown) is
// returned wrapped; a connection reset or aborted before its accept
// completed is skipped. The connections already accepted are served on. Serve blocks the calling
// goroutine (call it from a goroutine, not from a task); the accept loop
// itself is a task of h's runtime. Serve owns l and closes it. Several
// Serve calls may share a Server.
func (s *Server) Serve(h blitz.Handle, l *blitz.TCPListener) error {
	return ServeAcceptor[*blitz.TCPStream](s, h, l)
}

// ListenAndServe listens on the TCP address addr (":http" if empty; see
// blitz.ListenTCP for the forms it takes) on h's runtime and serves it, as
// Serve does, until Shutdown or Close: it then returns ErrServerClosed, as
// it does at once, without listening, on a server already shut down. A
// listen that fails returns its error.
func (s *Server) ListenAndServe(h blitz.Handle, addr string) error {
	if s.shuttingDown.Load() {
		return ErrServerClosed
	}
	if addr == "" {
		addr = ":http"
	}
	l, err := blitz.ListenTCP(h, addr)
	if err != nil {
		return err
	}
	return s.Serve(h, l)
}

// ListenAndServeTLS is ListenAndServe over TLS (":https" if addr is empty)
// with the certificate and key of the PEM files certFile and keyFile (the
// certificate file may hold the chain after the leaf). For any other TLS
// configuration, listen with blitz.ListenTLS and serve with ServeAcceptor.
func (s *Server) ListenAndServeTLS(h blitz.Handle, addr, certFile, keyFile string) error {
	if s.shuttingDown.Load() {
		return ErrServerClosed
	}
	if addr == "" {
		addr = ":https"
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return err
	}
	l, err := blitz.ListenTLS(h, addr, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}})
	if err != nil {
		return err
	}
	return ServeAcceptor[*blitz.TLSStream](s, h, l)
}

// ServeAcceptor is Serve for any listener of the runtime whose streams are
// Conns: a *blitz.TLSListener serves HTTPS, a *blitz.UnixListener
// serves on a Unix socket.
func ServeAcceptor[S Conn](s *Server, h blitz.Handle, l blitz.Acceptor[S]) error {
	s.init()
	s.mu.Lock()
	if s.shuttingDown.Load() {
		s.mu.Unlock()
		_ = l.Close()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	jh := blitz.SpawnOn(h, blitz.Named("http accept loop", future.Future[error](&acceptLoop[S]{s: s, l: l, name: connTaskName(l)})))
	err, werr := jh.Wait(context.Background())
	_ = l.Close()
	s.mu.Lock()
	delete(s.listeners, l)
	s.checkDrainedLocked()
	s.mu.Unlock()
	if werr != nil {
		err = werr
	}
	if s.shuttingDown.Load() {
		return ErrServerClosed
	}
	return err
}

// ServeConn serves one connection that was accepted elsewhere, as a task
// of h's runtime, and returns at once; the server owns c from then on and
// closes it. Shutdown waits for it as for the connections of Serve. After
// Shutdown or Close it closes c and returns ErrServerClosed; a nil c is
// refused with ErrNilConn.
func (s *Server) ServeConn(h blitz.Handle, c Conn) error {
	if c == nil {
		return ErrNilConn
	}
	s.init()
	cn, err := s.newConn(c)
	if err != nil {
		return err
	}
	blitz.SpawnValueDetachedNamedOn[struct{}](h, serveConnName, connTask{cn})
	return nil
}

// newConn registers a connection; it refuses (and closes c) once the
// server shuts down.
func (s *Server) newConn(c Conn) (*conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shuttingDown.Load() {
		_ = c.Close()
		return nil, ErrServerClosed
	}
	cn := newConn(s, c)
	cn.next = s.conns
	if s.conns != nil {
		s.conns.prev = cn
	}
	s.conns = cn
	s.nconns++
	return cn, nil
}

// removeConn forgets a connection whose task ended. Idempotent.
func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	if c.prev != nil || s.conns == c { // in the list
		if c.prev != nil {
			c.prev.next = c.next
		} else {
			s.conns = c.next
		}
		if c.next != nil {
			c.next.prev = c.prev
		}
		c.prev, c.next = nil, nil
		s.nconns--
	}
	s.checkDrainedLocked()
	s.mu.Unlock()
}

// trackHijacked adds (on) or removes the exchange of a hijacked
// connection from the set whose contexts Close cancels; one added after
// Close is cancelled at once.
func (s *Server) trackHijacked(ex *exchange, on bool) {
	s.mu.Lock()
	closed := s.closed
	switch {
	case on && !closed:
		if s.hijacked == nil {
			s.hijacked = make(map[*exchange]struct{})
		}
		s.hijacked[ex] = struct{}{}
	case !on:
		delete(s.hijacked, ex)
	}
	s.mu.Unlock()
	if on && closed {
		ex.cancel()
	}
}

// checkDrainedLocked closes drained once a shutdown found nothing left.
// s.mu must be held.
func (s *Server) checkDrainedLocked() {
	if s.drained != nil && s.nconns == 0 && len(s.listeners) == 0 {
		select {
		case <-s.drained:
		default:
			close(s.drained)
		}
	}
}

// Shutdown stops the server gracefully: it closes the listeners, closes
// every connection waiting idle for a request, and waits for the requests
// in flight to be answered (their connections close after the response).
// It returns nil once every connection is gone; if ctx ends first, it
// closes the connections left (as Close does) and returns ctx.Err(). A
// request's context is not cancelled by a graceful Shutdown, only by
// Close or by the end of Shutdown's ctx.
//
// Shutdown blocks its goroutine: call it from a goroutine, not from a
// task. Any goroutine may call it, more than once.
func (s *Server) Shutdown(ctx context.Context) error {
	s.init()
	s.mu.Lock()
	s.shuttingDown.Store(true)
	if s.drained == nil {
		s.drained = make(chan struct{})
	}
	drained := s.drained
	s.closeListenersLocked()
	conns := s.connsLocked()
	s.checkDrainedLocked()
	for _, f := range s.onShutdown {
		go f()
	}
	s.mu.Unlock()
	s.pool.close()
	for _, c := range conns {
		c.wakeIfIdle()
	}
	select {
	case <-drained:
		return nil
	case <-ctx.Done():
		_ = s.Close()
		return ctx.Err()
	}
}

// SetKeepAlivesEnabled turns keep-alives off (false) or back on (true)
// while the server runs, as net/http's does: with them off, each response
// closes its connection after it, and the connections waiting idle for a
// next request are closed at once. DisableKeepAlives, when set, keeps
// them off whatever this says. Any goroutine may call it.
func (s *Server) SetKeepAlivesEnabled(v bool) {
	s.keepAlivesOff.Store(!v)
	if v {
		return
	}
	s.mu.Lock()
	conns := s.connsLocked()
	s.mu.Unlock()
	for _, c := range conns {
		c.wakeIfIdle()
	}
}

// keepAlivesDisabled reports whether responses close their connections:
// DisableKeepAlives, or SetKeepAlivesEnabled(false).
func (s *Server) keepAlivesDisabled() bool {
	return s.DisableKeepAlives || s.keepAlivesOff.Load()
}

// RegisterOnShutdown registers f to be called, on a goroutine of its
// own, by Shutdown (by each call of it; not by Close), as net/http's
// does: the place to start the graceful end of the connections the server
// no longer sees, hijacked ones (WebSockets) for instance. f should start
// that end, not wait for it. Any goroutine may call it.
func (s *Server) RegisterOnShutdown(f func()) {
	s.mu.Lock()
	s.onShutdown = append(s.onShutdown, f)
	s.mu.Unlock()
}

// Close stops the server at once: it closes the listeners and every
// connection, and cancels the context of every request. Handlers still
// running go on (their writes and body reads fail); Close does not wait
// for them. Any goroutine may call it.
func (s *Server) Close() error {
	s.init()
	s.mu.Lock()
	s.shuttingDown.Store(true)
	s.closed = true
	if s.drained == nil {
		s.drained = make(chan struct{})
	}
	s.closeListenersLocked()
	conns := s.connsLocked()
	s.checkDrainedLocked()
	hijacked := make([]*exchange, 0, len(s.hijacked))
	for ex := range s.hijacked {
		hijacked = append(hijacked, ex)
	}
	s.mu.Unlock()
	s.pool.close()
	for _, ex := range hijacked {
		ex.cancel()
	}
	for _, c := range conns {
		c.kill()
	}
	return nil
}

func (s *Server) closeListenersLocked() {
	for l := range s.listeners {
		_ = l.Close()
	}
}

func (s *Server) connsLocked() []*conn {
	cs := make([]*conn, 0, s.nconns)
	for c := s.conns; c != nil; c = c.next {
		cs = append(cs, c)
	}
	return cs
}

// acceptLoop is the task of Serve: it accepts connections and starts a
// task for each. Owned by its task.
type acceptLoop[S Conn] struct {
	s   *Server
	l   blitz.Acceptor[S]
	acc *blitz.AcceptFuture[S]
	// name names the connection tasks in task dumps: "http" and the
	// listener's address. Shared by every connection (no allocation).
	name *blitz.TaskName
}

// Poll accepts until the listener is closed.
func (a *acceptLoop[S]) Poll(cx *future.Context) (error, bool) {
	for {
		if a.acc == nil {
			a.acc = a.l.Accept()
		}
		r, ok := a.acc.Poll(cx)
		if !ok {
			return nil, false
		}
		if r.Err != nil {
			a.acc = nil
		} else {
			a.acc.Rearm() // the next accept, in the same memory
		}
		// A connection reset or aborted before its accept never gets
		// here: the runtime's Accept skips it. An error is the listener's.
		if r.Err != nil {
			if !a.s.shuttingDown.Load() {
				a.s.logf("httpserver: accept: %v", r.Err)
			}
			return fmt.Errorf("httpserver: accept: %w", r.Err), true
		}
		cn, err := a.s.newConn(r.Value)
		if err != nil {
			return nil, true
		}
		blitz.SpawnValueDetachedNamed[struct{}](cx, a.name, connTask{cn})
	}
}

// serveConnName names the connection tasks of ServeConn.
var serveConnName = blitz.NewTaskName("http conn")

// connTaskName is the name of the connection tasks of listener l: "http"
// and its address, when it tells it.
func connTaskName(l any) *blitz.TaskName {
	if a, ok := l.(interface{ Addr() net.Addr }); ok {
		return blitz.NewTaskName("http " + a.Addr().String())
	}
	return serveConnName
}

// Cancel stops accepting (the runtime is shutting down).
func (a *acceptLoop[S]) Cancel() {
	if a.acc != nil {
		a.acc.Cancel()
		a.acc = nil
	}
	_ = a.l.Close()
}
