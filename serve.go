package blitz

// Serve: the accept loop of a server, with one handler task per connection
// and a graceful stop.

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/blitz-go/blitz/future"
)

// Acceptor is a listener Serve accepts on: *TCPListener and *UnixListener
// are Acceptors of their streams.
type Acceptor[S any] interface {
	Accept() *AcceptFuture[S]
	Close() error
}

// ServeConfig configures Serve. The zero ServeConfig serves until the
// listener fails or is closed, then waits for the handlers without a bound.
type ServeConfig struct {
	// Stop starts the graceful stop when it completes, whatever its value:
	// any future.Future[T], such as blitz.Interrupt() or Terminate() (a
	// signal), the TriggerFuture of Coordinator.WhenTriggered, a Sleep, a
	// oneshot receive or a task's JoinHandle; or a context.Context, whose
	// end starts the stop (signal.NotifyContext's, say). Serve owns a
	// future given here and cancels it when it stops. Nil (or a nil
	// future): only a closed or failing listener stops the server. Any
	// other value stops the server at once, with ServeStats.Err wrapping
	// ErrInvalidStop.
	Stop any
	// Grace bounds the wait for the running handlers after the stop; the
	// handlers still running when it ends are cancelled. Zero waits for
	// them without a bound; a negative Grace cancels them at once.
	Grace time.Duration
}

// ServeStats is what Serve reports when it returns.
type ServeStats struct {
	// Accepted counts the connections accepted, one handler each.
	Accepted int
	// Completed counts the handlers that returned (with or without an
	// error) or panicked; Failed counts those of them that returned an
	// error or panicked.
	Completed, Failed int
	// Cancelled counts the handlers cancelled because the grace period ran
	// out (or the runtime shut down).
	Cancelled int
	// Err is the first error of Accept other than a closed listener or a
	// runtime shutting down; it stopped the server. Nil after a stop. A
	// connection reset or aborted before its accept is no error: Accept
	// skips it (see AcceptFuture).
	Err error
	// HandlerErr is the first error a handler returned (or its panic, a
	// *PanicError), nil if none did.
	HandlerErr error
}

// Serve returns a future that accepts connections on l and runs
// handler(conn) as a task for each, until cfg.Stop completes or l fails or
// is closed. Then it stops accepting and closes l, waits for the running
// handlers (at most cfg.Grace when positive), cancels those still running,
// and completes with the counts. Run it as a task (Spawn, SpawnOn) or from a
// goroutine with BlockOn: it spawns onto the runtime that polls it, and
// panics with ErrNoRuntime if none does.
//
// Serve owns l: it closes it when it stops or is cancelled. A handler
// that finishes leaves the server's set of handlers at once, so a
// long-running server holds only the handlers in flight: for each, its
// task (144 bytes on 64-bit platforms, which reports its own end to the
// server; no JoinHandle is kept) and an 8-byte entry, beside the
// connection and the handler's future. Cancelling the
// returned future (future.Cancel, or the runtime's shutdown) closes l and
// cancels every handler.
//
// A handler owns its connection and closes it. If the handler function
// itself panics (before it returns a future) or returns nil, that
// connection is closed, counted as a failed handler (with the panic as a
// *PanicError, or an error matching ErrNilFuture), and the server goes on.
func Serve[S any](l Acceptor[S], handler func(S) future.Future[error], cfg ServeConfig) *ServeFuture[S] {
	stop, err := stopOf(cfg.Stop)
	return &ServeFuture[S]{l: l, handler: handler, stop: stop, stopErr: err, grace: cfg.Grace}
}

// servePhase is where a ServeFuture is.
type servePhase uint8

const (
	serving    servePhase = iota // accepting
	draining                     // stopped accepting; waiting for handlers, perhaps bounded
	cancelling                   // the handlers left were cancelled; waiting for them to end
	served                       // completed or cancelled
)

// ServeFuture is the future of Serve: a future.Future[ServeStats] and a
// future.Canceler.
type ServeFuture[S any] struct {
	// Every field but set is owned by the task polling the future (Poll,
	// Cancel); the handlers' tasks reach set only, which locks.
	l       Acceptor[S]
	handler func(S) future.Future[error]
	// stop is cfg.Stop, nil once it completed or was cancelled; stopErr
	// is why cfg.Stop was refused, which stops the server at once.
	stop    stopWaiter
	stopErr error
	grace   time.Duration
	phase   servePhase
	// set holds the handlers in flight, one task each, and the counts of
	// those that ended.
	set serveSet
	// accept is the accept in flight, nil when none; spare is the last
	// one, completed with a connection, rearmed for the next (an
	// AcceptFuture is 168 bytes: one a connection would be garbage in the
	// size class of the handler tasks, where the holes it leaves after a
	// collection stay resident).
	accept, spare *AcceptFuture[S]
	// timer bounds the draining when timed is set.
	timer SleepFuture
	timed bool
	stats ServeStats
}

// Poll accepts and spawns, and runs the stop. Polling after completion
// panics with future.ErrPolledAfterCompletion.
func (s *ServeFuture[S]) Poll(cx *future.Context) (ServeStats, bool) {
	if s.phase == served {
		panic(future.ErrPolledAfterCompletion)
	}
	if s.phase == serving && s.stopErr != nil {
		s.stats.Err, s.stopErr = s.stopErr, nil
		s.beginStop()
	}
	if s.phase == serving && s.stop != nil {
		if s.stop.poll(cx) {
			s.stop = nil
			s.beginStop()
		}
	}
	if s.phase == serving {
		s.acceptAll(cx)
	}
	for {
		if s.phase != serving && s.set.drained(cx) {
			s.finish()
			s.set.collect(&s.stats)
			return s.stats, true
		}
		if s.phase != draining || !s.timed {
			return ServeStats{}, false
		}
		if _, ok := s.timer.Poll(cx); !ok {
			return ServeStats{}, false
		}
		s.timed = false
		s.phase = cancelling
		s.set.cancelAll(false)
	}
}

// acceptAll accepts until no connection is waiting, spawning a handler for
// each; an accept error stops the server.
func (s *ServeFuture[S]) acceptAll(cx *future.Context) {
	for {
		if s.accept == nil {
			if s.spare != nil {
				s.accept, s.spare = s.spare, nil
				s.accept.rearm()
			} else {
				s.accept = s.l.Accept()
			}
		}
		r, ok := s.accept.Poll(cx)
		if !ok {
			return
		}
		if r.Err == nil {
			s.spare = s.accept
		}
		s.accept = nil
		if r.Err != nil {
			if !errors.Is(r.Err, ErrClosed) && !errors.Is(r.Err, ErrShutdown) {
				s.stats.Err = r.Err
			}
			s.beginStop()
			return
		}
		s.stats.Accepted++
		if h, ok := s.startHandler(r.Value); ok {
			s.set.spawn(cx, h)
		}
	}
}

// startHandler calls the handler function for conn. If it panics, or
// returns no future (nil), that counts as the connection's handler failing
// (a *PanicError, as a handler task's own panic does, or an error matching
// ErrNilFuture), conn is closed if it is an io.Closer, and the server goes
// on: one bad connection does not stop the others or stay open.
func (s *ServeFuture[S]) startHandler(conn S) (h future.Future[error], ok bool) {
	defer func() {
		if v := recover(); v != nil {
			s.handlerFailed(conn, &PanicError{Value: v, Stack: debug.Stack()})
			h, ok = nil, false
		}
	}()
	if h = s.handler(conn); h == nil {
		s.handlerFailed(conn, errNilHandler)
		return nil, false
	}
	return h, true
}

// errNilHandler is the failure of a handler function that returned nil.
var errNilHandler = fmt.Errorf("blitz: Serve: the handler function returned a nil future: %w", ErrNilFuture)

// handlerFailed counts a connection whose handler never started, with err,
// and closes conn if it can.
func (s *ServeFuture[S]) handlerFailed(conn S, err error) {
	s.set.mu.Lock()
	s.set.countLocked(err)
	s.set.mu.Unlock()
	if c, isCloser := any(conn).(io.Closer); isCloser {
		_ = c.Close()
	}
}

// beginStop stops accepting, closes the listener and starts the wait for
// the handlers.
func (s *ServeFuture[S]) beginStop() {
	s.stopAccepting()
	switch {
	case s.grace < 0:
		s.phase = cancelling
		s.set.cancelAll(false)
	case s.grace > 0:
		s.phase = draining
		s.timer = SleepFuture{deadline: after(s.grace)}
		s.timed = true
	default:
		s.phase = draining
	}
}

// stopAccepting cancels the accept in flight and the stop future, and
// closes the listener.
func (s *ServeFuture[S]) stopAccepting() {
	if s.accept != nil {
		s.accept.Cancel()
		s.accept = nil
	}
	if s.stop != nil {
		s.stop.cancel()
		s.stop = nil
	}
	_ = s.l.Close() // a second Close (the user's) is harmless
}

// finish releases the timer.
func (s *ServeFuture[S]) finish() {
	s.phase = served
	if s.timed {
		s.timer.Cancel()
		s.timed = false
	}
}

// Cancel stops the server: it closes the listener and cancels every
// handler (their outcomes are dropped). It makes ServeFuture a
// future.Canceler. Idempotent.
func (s *ServeFuture[S]) Cancel() {
	if s.phase == served {
		return
	}
	s.stopAccepting()
	s.set.cancelAll(true)
	s.finish()
}
