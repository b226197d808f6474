package blitz

import (
	"errors"
	"net"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
)

// listener is what TCPListener and UnixListener share.
type listener struct {
	n *netFD
	// backoffs counts the times Accept backed off because the process or
	// system was out of descriptors.
	backoffs atomic.Uint64
}

// Addr returns the listener's local address.
func (l *listener) Addr() net.Addr { return netAddr(l.n.network(), l.n.addresses().local) }

// Close stops the listener; pending and later Accepts fail with ErrClosed.
func (l *listener) Close() error { return l.n.close() }

// Backoffs returns how many times Accept waited because the process or the
// system was out of file descriptors (EMFILE, ENFILE).
func (l *listener) Backoffs() uint64 { return l.backoffs.Load() }

// acceptWrap makes the stream S of an accepted socket fd of kind, homed on
// r, whose peer is peer (the zero Addr when the accept did not report it).
// The streams of this package allocate the stream and its socket record
// together (see acceptedRecord).
type acceptWrap[S any] func(r *ioRing, fd backend.FD, kind netKind, peer backend.Addr) S

// acceptedRecord is an accepted connection's stream and socket in one
// allocation (160 bytes, as the two were apart): a connection's poll reads
// the stream and then the socket, and with thousands of connections each
// is a cache miss of its own when they lie apart.
type acceptedRecord[S any] struct {
	s S
	n netFD
}

// acceptStream allocates an accepted connection's record and sets up its
// socket; mk makes the stream around it.
func acceptStream[S any](r *ioRing, fd backend.FD, kind netKind, peer backend.Addr, mk func(s *S, n *netFD)) *S {
	rec := new(acceptedRecord[S])
	rec.n.init(r, fd, kind, addrsAccepted, peer)
	mk(&rec.s, &rec.n)
	return &rec.s
}

// AcceptFuture is the future of an Accept: its pointer is a
// future.Future[future.Result[S]] and a future.Canceler. Keep it in the
// task's state and do not copy it after the first poll.
//
// Out of descriptors, it does not fail and does not spin: it waits (5 ms,
// doubling up to 1 s) and tries again, counting the wait in the listener's
// Backoffs, so a server keeps serving the connections it has and resumes
// accepting when descriptors come back.
//
// A connection that failed between its arrival and its accept (the client
// reset or aborted it first: ECONNABORTED on Unix, WSAECONNRESET,
// WSAENOTCONN or ERROR_NETNAME_DELETED from Windows' AcceptEx) is not an
// error of the listener: the accept waits for the next connection instead,
// as Go's net package does, and counts the one it skipped in
// Metrics.AcceptsSkipped. So an abrupt client cannot stop Serve or any
// other accept loop; an error Accept returns is the listener's (ErrClosed
// once closed, or a fault such as a permission refused).
type AcceptFuture[S any] struct {
	_       noCopy
	l       *listener
	wrap    acceptWrap[S]
	f       ioFuture
	backoff SleepFuture
	waiting bool
	delay   time.Duration
}

// Poll accepts a connection. Completing consumes a unit of the task's budget; with
// none left, Poll yields instead (see the future package, "The
// cooperative budget").
func (a *AcceptFuture[S]) Poll(cx *future.Context) (future.Result[S], bool) {
	a.f.checkPoll()
	if !cx.Proceed() {
		return future.Result[S]{}, false
	}
	v, ok := a.poll(cx)
	if ok {
		cx.Spend()
	}
	return v, ok
}

// poll is Poll past the budget check.
func (a *AcceptFuture[S]) poll(cx *future.Context) (future.Result[S], bool) {
	a.f.checkPoll()
	for {
		if a.waiting {
			if _, ok := a.backoff.Poll(cx); !ok {
				return future.Result[S]{}, false
			}
			a.waiting = false
		}
		if !a.f.submitted {
			_, prev, has, pending, err := a.f.start(cx, a.l.n, &a.l.n.rd)
			if pending {
				return future.Result[S]{}, false
			}
			if err == nil && has && prev.Err == nil && prev.FD != backend.InvalidFD {
				// A cancelled accept's connection: this accept takes it.
				a.f.release()
				return future.Ok(a.wrap(a.l.n.rt().home(), prev.FD, netKind(a.l.n.hints.Load()>>kindShift), prev.Addr)), true
			}
			if err == nil {
				err = a.f.submit(cx, a.l.n, backend.Op{Kind: backend.KindAccept, FD: a.l.n.fd})
			}
			if err != nil {
				a.f.done = true
				return future.Fail[S](a.l.n.opError("accept", err)), true
			}
		}
		c, ok := a.f.wait(cx)
		if !ok {
			return future.Result[S]{}, false
		}
		switch {
		case errors.Is(c.Err, backend.ErrTooManyFiles) || errors.Is(c.Err, backend.ErrNoMemory):
			a.l.backoffs.Add(1)
			a.delay = min(max(2*a.delay, 5*time.Millisecond), time.Second)
			a.backoff = SleepFuture{deadline: after(a.delay)}
			a.waiting = true
			a.f = ioFuture{}
			continue
		case connLevelAcceptError(c.Err):
			a.l.n.rt().io.SkipAccept()
			a.f = ioFuture{}
			continue
		case c.Err != nil:
			return future.Fail[S](a.l.n.opError("accept", c.Err)), true
		}
		return future.Ok(a.wrap(a.l.n.rt().home(), c.FD, netKind(a.l.n.hints.Load()>>kindShift), c.Addr)), true
	}
}

// connLevelAccepts are the failures of an accept that belong to the
// connection it was taking, not to the listener: the client reset or
// aborted it between its arrival and the accept (Linux reports
// ECONNABORTED; Windows' AcceptEx WSAECONNRESET, ERROR_NETNAME_DELETED,
// WSAENOTCONN, and a connection that timed out or shut down before it was
// taken). The next accept of the same listener is unaffected.
var connLevelAccepts = [...]error{
	backend.ErrConnAborted,
	backend.ErrConnReset,
	backend.ErrNotConnected,
	backend.ErrTimedOut,
	backend.ErrBrokenPipe,
}

// connLevelAcceptError reports whether err, an accept's failure (a
// completion's error, or one wrapping it), is one of connLevelAccepts: the
// accept should be made again rather than fail. Any goroutine.
func connLevelAcceptError(err error) bool {
	if err == nil {
		return false
	}
	for _, e := range connLevelAccepts {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Rearm makes an accept that has completed (or been cancelled) a new one,
// of the same listener, as if just returned by Accept, and reports true:
// an accept loop that keeps its future allocates nothing per connection.
// An accept still pending (or never polled) is left as it is, and Rearm
// reports false. The owner of the future calls it.
func (a *AcceptFuture[S]) Rearm() bool {
	if !a.f.done {
		return false
	}
	a.rearm()
	return true
}

// rearm makes a completed accept a new one, of the same listener, as if
// just returned by Accept. Nothing references a completed accept (its
// slot was released with its completion), so its owner may reuse it.
func (a *AcceptFuture[S]) rearm() {
	*a = AcceptFuture[S]{l: a.l, wrap: a.wrap}
}

// Cancel abandons the accept; a connection accepted meanwhile is closed.
func (a *AcceptFuture[S]) Cancel() {
	if a.waiting {
		a.backoff.Cancel()
	}
	a.f.cancel()
}
