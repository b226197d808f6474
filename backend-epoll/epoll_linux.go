package epoll

import (
	"math"
	"time"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
	"github.com/blitz-go/blitz/backend-unix/reactor"
	"golang.org/x/sys/unix"
)

// Backend is the epoll backend.
type Backend struct {
	*reactor.Reactor
}

var (
	_ backend.Backend  = (*Backend)(nil)
	_ backend.Pollable = (*Backend)(nil)
)

// Name returns "epoll".
func (*Backend) Name() string { return "epoll" }

// New makes an epoll backend.
func New() (backend.Backend, error) {
	p, err := newPoller()
	if err != nil {
		return nil, err
	}
	return &Backend{reactor.New(p)}, nil
}

// poller is reactor.Poller over an epoll set with an eventfd for wake-ups.
type poller struct {
	epfd, evfd int
	// buf and noPwait2 belong to the goroutine in Wait. noPwait2: the
	// kernel lacks epoll_pwait2 (before Linux 5.11), so timeouts count
	// whole milliseconds.
	buf      []unix.EpollEvent
	noPwait2 bool
}

const readyEvents = unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET

func newPoller() (*poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, unixio.Error("epoll_create1", err)
	}
	evfd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, unixio.Error("eventfd", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(evfd)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, evfd, &ev); err != nil {
		unix.Close(evfd)
		unix.Close(epfd)
		return nil, unixio.Error("epoll_ctl", err)
	}
	return &poller{epfd: epfd, evfd: evfd, buf: make([]unix.EpollEvent, 128)}, nil
}

// Register adds fd edge-triggered; a descriptor already in the set (a
// duplicate of one closed behind the reactor's back) is modified instead.
func (p *poller) Register(fd int) error {
	ev := unix.EpollEvent{Events: readyEvents, Fd: int32(fd)}
	err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev)
	if err == unix.EEXIST {
		err = unix.EpollCtl(p.epfd, unix.EPOLL_CTL_MOD, fd, &ev)
	}
	return err
}

// EdgePerArrival reports true: an edge-triggered registration reports a
// socket at every arrival of data, and EPOLLRDHUP with each event that
// finds the peer's side closed (reactor.EdgePerArrival).
func (p *poller) EdgePerArrival() bool { return true }

// Deregister removes fd.
func (p *poller) Deregister(fd int) error {
	return unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, fd, nil)
}

// Wait waits for events; the eventfd is drained and not reported. The
// timeout is kept to the nanosecond with epoll_pwait2 (Linux 5.11), so that
// a worker sleeping towards a timer wakes at it rather than up to a
// millisecond later; older kernels round it up to epoll_wait's milliseconds.
func (p *poller) Wait(events []reactor.Event, timeout time.Duration) (int, error) {
	buf := p.buf[:min(len(p.buf), len(events))]
	n, err := p.wait(buf, timeout)
	if err == unix.EINTR {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	k := 0
	for _, e := range buf[:n] {
		if int(e.Fd) == p.evfd {
			p.drain()
			continue
		}
		events[k] = reactor.Event{FD: int(e.Fd), Ready: ready(e.Events), PeerClosed: e.Events&unix.EPOLLRDHUP != 0}
		k++
	}
	return k, nil
}

// wait is epoll_pwait2 with timeout (negative: none), or epoll_wait with it
// rounded up to milliseconds where the kernel lacks epoll_pwait2. A zero
// timeout, a worker's look between its tasks, is a raw system call, as the
// sockets' reads and sends are (see unixio.Read): it cannot sleep, and an
// ordinary call would wake Go's sysmon; a wait that may sleep is an
// ordinary call, so that Go can hand the P to another thread meanwhile.
func (p *poller) wait(buf []unix.EpollEvent, timeout time.Duration) (int, error) {
	if !p.noPwait2 {
		var ts *unix.Timespec
		if timeout >= 0 {
			t := unix.NsecToTimespec(int64(timeout))
			ts = &t
		}
		call := unix.Syscall6
		if timeout == 0 {
			call = unix.RawSyscall6 // a look that cannot sleep (see wait's doc)
		}
		r, _, errno := call(unix.SYS_EPOLL_PWAIT2, uintptr(p.epfd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)),
			uintptr(unsafe.Pointer(ts)), 0, 0)
		switch errno {
		case 0:
			return int(r), nil
		case unix.ENOSYS, unix.EPERM: // an old kernel, or a seccomp filter that does not know the call
			p.noPwait2 = true
		default:
			return 0, errno
		}
	}
	msec := -1
	if timeout >= 0 {
		// Round up, so that a timer is never polled for early and spun on;
		// and at most epoll_wait's C int (about 24 days: the reactor waits
		// again when it returns before its deadline).
		ms := timeout / time.Millisecond
		if timeout%time.Millisecond != 0 {
			ms++
		}
		msec = int(min(ms, math.MaxInt32))
	}
	if msec == 0 {
		r, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(p.epfd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
		if errno != 0 {
			return 0, errno
		}
		return int(r), nil
	}
	return unix.EpollWait(p.epfd, buf, msec)
}

// ready converts epoll's event bits.
func ready(ev uint32) backend.Events {
	var r backend.Events
	if ev&(unix.EPOLLIN|unix.EPOLLRDHUP) != 0 {
		r |= backend.EventIn
	}
	if ev&unix.EPOLLOUT != 0 {
		r |= backend.EventOut
	}
	if ev&unix.EPOLLERR != 0 {
		r |= backend.EventErr
	}
	if ev&unix.EPOLLHUP != 0 {
		r |= backend.EventHup
	}
	return r
}

// drain resets the eventfd counter.
func (p *poller) drain() {
	var b [8]byte
	for {
		_, err := unix.Read(p.evfd, b[:])
		if err != unix.EINTR {
			return
		}
	}
}

// Wake adds one to the eventfd counter, which makes it readable.
func (p *poller) Wake() error {
	b := [8]byte{1} // any non-zero count, in either byte order
	for {
		_, err := unix.Write(p.evfd, b[:])
		switch err {
		case unix.EINTR:
			continue
		case unix.EAGAIN: // the counter is at its maximum: readable already
			return nil
		}
		return err
	}
}

// Close closes the eventfd and the epoll set.
func (p *poller) Close() error {
	err1 := unix.Close(p.evfd)
	err2 := unix.Close(p.epfd)
	if err1 != nil {
		return err1
	}
	return err2
}

// FD returns the epoll set's descriptor, which polls readable when the set
// has a ready descriptor (the eventfd of Wake included): the reactor's
// PollFD, for a waiter in Go's own poller.
func (p *poller) FD() int { return p.epfd }
