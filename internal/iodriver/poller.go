package iodriver

import (
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
)

// ringPoller waits for a ring's completions in Go's own network poller: the
// ring's descriptor (the io_uring instance, the epoll set) is registered with
// it through an os.File, and the worker holding the ring parks in a read of
// that file as a goroutine parks on a net.Conn. No system call blocks, so
// the worker's thread and Go's P serve other goroutines while it waits, and
// no thread is locked to the worker. Backends without a pollable descriptor
// (kqueue and IOCP for now, poll(2) by its nature) have none and block in
// their Wait.
//
// Every field is used only by the worker holding the ring, under the ring's
// reap lock, except f, which close closes after the workers have stopped.
type ringPoller struct {
	r  *Ring
	pb backend.Pollable
	// f is a duplicate of the ring's descriptor, non-blocking, registered
	// with Go's poller; rc reads it.
	f  *os.File
	rc syscall.RawConn
	// deadline is the read deadline set on f, the zero Time for none.
	deadline time.Time
	// check is p.look as a func value, made once; cx, first and got are
	// its arguments and result for one read.
	check func(uintptr) bool
	cx    *future.Context
	first bool
	got   bool
}

// newRingPoller registers r's descriptor with Go's poller, or returns nil
// when r's backend cannot be polled so.
func newRingPoller(r *Ring) *ringPoller {
	pb, ok := r.b.(backend.Pollable)
	if !ok {
		return nil
	}
	fd, ok := pb.PollFD()
	if !ok {
		return nil
	}
	f := pollFile(int(fd))
	if f == nil {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil || f.SetReadDeadline(time.Time{}) != nil { // ErrNoDeadline: Go's poller refused it
		_ = f.Close()
		return nil
	}
	p := &ringPoller{r: r, pb: pb, f: f, rc: rc}
	p.check = p.look
	return p
}

// wait collects r's completions, waiting for them in Go's poller for up to
// timeout (negative: no limit), and reports whether it dispatched any. It
// returns without any when the holder is unparked or kicked (the ring's
// flags, whose Wake makes the descriptor readable) or the timeout passes.
// Called by Block, with r.reap held.
func (p *ringPoller) wait(cx *future.Context, timeout time.Duration) bool {
	if timeout == 0 {
		n, _ := p.r.d.collect(p.r, cx, 0)
		return n > 0
	}
	if timeout < 0 {
		return p.waitPolled(cx, time.Time{})
	}
	// The last stretch before a deadline is waited in the backend's own
	// Wait, whose timeout the kernel keeps to microseconds; Go's poller
	// keeps a read deadline to a millisecond at best when the process is
	// idle (its epoll_wait counts whole milliseconds). A longer wait parks
	// in Go's poller until the stretch begins.
	end := time.Now().Add(timeout)
	if timeout > preciseStretch {
		if got := p.waitPolled(cx, end.Add(-preciseStretch)); got || p.r.unparked.Load() || p.r.kicked.Load() {
			return got
		}
	}
	n, _ := p.r.d.collect(p.r, cx, max(time.Until(end), 0))
	return n > 0
}

// preciseStretch is how long before its deadline a timed wait leaves Go's
// poller for a blocking wait in the backend, in which its thread stays in
// the kernel: a millisecond of Go's granularity and as much again for a
// loaded machine's scheduling.
const preciseStretch = 2 * time.Millisecond

// waitPolled is wait in Go's poller, until end (the zero Time: no limit).
func (p *ringPoller) waitPolled(cx *future.Context, end time.Time) bool {
	defer p.pb.StopPolling()
	for {
		until := end
		if own := p.pb.StartPolling(); own >= 0 {
			if at := time.Now().Add(own); until.IsZero() || at.Before(until) {
				until = at
			}
		}
		if !until.IsZero() && !until.After(time.Now()) {
			// A deadline is due: the backend's own (Wait fires it) or
			// the caller's.
			if n, _ := p.r.d.collect(p.r, cx, 0); n > 0 {
				return true
			}
			if !end.IsZero() && !end.After(time.Now()) {
				return false
			}
			continue
		}
		if !until.Equal(p.deadline) {
			_ = p.f.SetReadDeadline(until)
			p.deadline = until
		}
		p.cx, p.first, p.got = cx, true, false
		err := p.rc.Read(p.check)
		p.cx = nil
		switch {
		case p.got:
			return true
		case p.r.unparked.Load() || p.r.kicked.Load():
			return false
		case err != nil && !errors.Is(err, os.ErrDeadlineExceeded):
			return false // the file is closed: the runtime shuts down
		}
		// Readable, or a deadline passed: look again.
	}
}

// look is the read's check, called by Go's poller once the read has
// registered its interest (so a readiness from now on is not lost), and
// again after each readiness. The first call collects what is ready and
// ends the read when it dispatched a completion or the holder was unparked
// or kicked; a later call ends it, for wait to look again. While it
// collects, the ring's looking flag spares an Unpark or a kick its Wake:
// the flags are read after the flag is cleared.
func (p *ringPoller) look(uintptr) bool {
	if !p.first {
		return true
	}
	p.first = false
	r := p.r
	r.looking.Store(true)
	n, _ := r.d.collect(r, p.cx, 0)
	r.looking.Store(false) // store: before the loads of the flags; pairs with Unpark's and kickLocked's store, then load
	if n > 0 {
		p.got = true
		return true
	}
	return r.unparked.Load() || r.kicked.Load()
}

// close unregisters the descriptor from Go's poller and closes the
// duplicate (the ring's own descriptor stays open, for the backend's Close).
func (p *ringPoller) close() { _ = p.f.Close() }
