//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package kqueue

import (
	"time"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
	"github.com/blitz-go/blitz/backend-unix/reactor"
	"golang.org/x/sys/unix"
)

// Backend is the kqueue backend.
type Backend struct {
	*reactor.Reactor
}

var _ backend.Backend = (*Backend)(nil)

// Name returns "kqueue".
func (*Backend) Name() string { return "kqueue" }

// New makes a kqueue backend.
func New() (backend.Backend, error) {
	p, err := newPoller()
	if err != nil {
		return nil, err
	}
	return &Backend{reactor.New(p)}, nil
}

// poller is reactor.Poller over a kqueue.
type poller struct {
	kq int
	w  waker
	// buf belongs to the goroutine in Wait.
	buf []unix.Kevent_t
}

func newPoller() (*poller, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, unixio.Error("kqueue", err)
	}
	unix.CloseOnExec(kq)
	p := &poller{kq: kq, buf: make([]unix.Kevent_t, 128)}
	if err := p.w.init(kq); err != nil {
		unix.Close(kq)
		return nil, unixio.Error("kqueue wake", err)
	}
	return p, nil
}

// Register adds fd's read and write filters, edge-triggered.
func (p *poller) Register(fd int) error {
	return p.change(fd, unix.EV_ADD|unix.EV_CLEAR)
}

// Deregister deletes fd's filters.
func (p *poller) Deregister(fd int) error {
	err := p.change(fd, unix.EV_DELETE)
	if err == unix.ENOENT {
		return nil
	}
	return err
}

func (p *poller) change(fd, flags int) error {
	var ch [2]unix.Kevent_t
	unix.SetKevent(&ch[0], fd, unix.EVFILT_READ, flags)
	unix.SetKevent(&ch[1], fd, unix.EVFILT_WRITE, flags)
	for {
		_, err := unix.Kevent(p.kq, ch[:], nil, nil)
		if err != unix.EINTR {
			return err
		}
	}
}

// maxKeventWait is the longest timeout Wait gives kevent, as Go's own
// poller does (about 11.6 days).
const maxKeventWait = 1e6 * time.Second

// Wait waits for events; wake-ups are consumed and not reported.
func (p *poller) Wait(events []reactor.Event, timeout time.Duration) (int, error) {
	var ts *unix.Timespec
	if timeout >= 0 {
		// At most maxKeventWait: macOS refuses a longer timeout with
		// EINVAL; the reactor waits again when it returns before its
		// deadline.
		t := unix.NsecToTimespec(int64(min(timeout, maxKeventWait)))
		ts = &t
	}
	buf := p.buf[:min(len(p.buf), len(events))]
	n, err := unix.Kevent(p.kq, nil, buf, ts)
	if err == unix.EINTR {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	k := 0
	for i := range buf[:n] {
		e := &buf[i]
		if p.w.isWake(e) {
			continue
		}
		events[k] = reactor.Event{FD: int(e.Ident), Ready: ready(e)}
		k++
	}
	return k, nil
}

// ready converts a filter's report. EV_EOF on the write filter is a
// hang-up; EV_EOF with an error code (Fflags) is an error.
func ready(e *unix.Kevent_t) backend.Events {
	var r backend.Events
	switch int(e.Filter) {
	case unix.EVFILT_READ:
		r = backend.EventIn
	case unix.EVFILT_WRITE:
		r = backend.EventOut
		if e.Flags&unix.EV_EOF != 0 {
			r |= backend.EventHup
		}
	}
	if e.Flags&unix.EV_EOF != 0 && e.Fflags != 0 {
		r |= backend.EventErr
	}
	if e.Flags&unix.EV_ERROR != 0 {
		r |= backend.EventErr
	}
	return r
}

// Wake wakes a blocked Wait.
func (p *poller) Wake() error { return p.w.wake(p.kq) }

// Close closes the kqueue and the waker's descriptors.
func (p *poller) Close() error {
	p.w.close()
	return unix.Close(p.kq)
}
