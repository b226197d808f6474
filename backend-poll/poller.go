//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package poll

import (
	"math"
	"sync"
	"syscall"
	"time"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
	"github.com/blitz-go/blitz/backend-unix/reactor"
	"golang.org/x/sys/unix"
)

// poller is reactor.Poller over poll(2), with the interest the backend
// counts (see "Readiness from poll(2)" in the package doc): a descriptor is
// in the poll set for a direction while the registration's one report of
// it is armed or an op waits on that side.
type poller struct {
	// wakeR and wakeW are the self-pipe, both ends non-blocking and
	// close-on-exec; wakeR is the first entry of every poll. Immutable
	// until Close.
	wakeR, wakeW int

	// mu guards the fields below it and every watch's fields.
	mu sync.Mutex
	// fds holds the record of every descriptor number registered or
	// waited on so far, kept for the next descriptor with that number.
	fds map[int]*watch
	// reg lists the registered watches (watch.reg is the index).
	reg []*watch
	// arms maps the key of each armed receive in flight to its record.
	arms map[uint64]armRec
	// inPoll: the Wait goroutine has built its poll set (watch.polled)
	// and is in poll(2) or about to enter it; a change that the set
	// misses must wake it.
	inPoll bool
	// woken: a byte is in the pipe, not yet drained (one per wake-up).
	woken bool
	// closed is set by Close.
	closed bool

	// pfds and polled belong to the goroutine in Wait: the poll set, the
	// pipe first, and the watch of each other entry (polled[i] is
	// pfds[i+1]'s).
	pfds   []unix.PollFd
	polled []*watch
}

// watch is the poller's record of one descriptor number. Every field is
// guarded by poller.mu.
type watch struct {
	fd int
	// reg is the watch's index in poller.reg, -1 while not registered.
	reg int
	// armed holds the directions (EventIn, EventOut) to report once
	// whatever the interest: set by Register, cleared by a report.
	armed backend.Events
	// readers and writers count the ops in flight on each side (an armed
	// receive reads). Up when an op starts, down when Wait hands out its
	// final completion; a count may stand below zero for a moment, when
	// the completion was handed out before the submitting goroutine
	// counted the op.
	readers, writers int32
	// polled holds the directions the poll in progress asks of the
	// descriptor, 0 outside one.
	polled backend.Events
}

// armRec is an armed receive the backend counts: its descriptor, and
// whether it was counted as a reader (ArmRecv returned).
type armRec struct {
	fd      int
	counted bool
}

// wanted returns the directions to poll the descriptor for: those armed,
// and those with ops waiting. None while not registered.
func (w *watch) wanted() backend.Events {
	if w.reg < 0 {
		return 0
	}
	ev := w.armed
	if w.readers > 0 {
		ev |= backend.EventIn
	}
	if w.writers > 0 {
		ev |= backend.EventOut
	}
	return ev
}

func newPoller() (*poller, error) {
	var fds [2]int
	syscall.ForkLock.RLock() // no pipe2 everywhere: close-on-exec before a fork can copy them
	err := unix.Pipe(fds[:])
	if err == nil {
		unix.CloseOnExec(fds[0])
		unix.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, unixio.Error("pipe", err)
	}
	for _, fd := range fds {
		if err := unix.SetNonblock(fd, true); err != nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
			return nil, unixio.Error("pipe", err)
		}
	}
	return &poller{
		wakeR: fds[0], wakeW: fds[1],
		fds:  make(map[int]*watch),
		arms: make(map[uint64]armRec),
		pfds: make([]unix.PollFd, 1, 64),
	}, nil
}

// watchLocked returns fd's watch, making it if there is none. p.mu is held.
func (p *poller) watchLocked(fd int) *watch {
	w := p.fds[fd]
	if w == nil {
		w = &watch{fd: fd, reg: -1}
		p.fds[fd] = w
	}
	return w
}

// Register adds fd, armed for one report of each direction, so that a
// condition already true is reported once (see reactor.Poller). A
// descriptor registered already (a number closed behind the reactor's
// back and handed out again) is armed afresh. Any goroutine.
func (p *poller) Register(fd int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return unix.EBADF
	}
	w := p.watchLocked(fd)
	if w.reg < 0 {
		w.reg = len(p.reg)
		p.reg = append(p.reg, w)
	}
	w.armed = backend.EventIn | backend.EventOut
	return p.kickLocked(w)
}

// Deregister removes fd from the poll set. Its counts stay: the ops still
// counted (cancelled by the close that deregisters) are uncounted when
// their completions are handed out. Any goroutine.
func (p *poller) Deregister(fd int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.fds[fd]
	if w == nil || w.reg < 0 {
		return nil
	}
	last := p.reg[len(p.reg)-1]
	p.reg[w.reg], last.reg = last, w.reg
	p.reg[len(p.reg)-1] = nil
	p.reg = p.reg[:len(p.reg)-1]
	w.reg, w.armed = -1, 0
	return nil
}

// count adds delta to the ops waiting on fd for the sides in ev
// (EventIn: readers, EventOut: writers), and wakes a blocked Wait whose
// poll set lacks a side that now has one. Any goroutine.
func (p *poller) count(fd int, ev backend.Events, delta int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.countLocked(fd, ev, delta)
}

func (p *poller) countLocked(fd int, ev backend.Events, delta int32) {
	if ev == 0 {
		return
	}
	w := p.watchLocked(fd)
	if ev&backend.EventIn != 0 {
		w.readers += delta
	}
	if ev&backend.EventOut != 0 {
		w.writers += delta
	}
	if delta > 0 {
		_ = p.kickLocked(w)
	}
}

// armStart records that an armed receive keyed key is being armed on fd,
// before the reactor arms it, so that a completion handed out before
// armDone finds the record. It reports false for a key already in flight,
// which is not counted again. Any goroutine.
func (p *poller) armStart(key uint64, fd int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, dup := p.arms[key]; dup {
		return false
	}
	p.arms[key] = armRec{fd: fd}
	return true
}

// armDone counts the armed receive keyed key as a reader once the reactor
// armed it (ok), unless its completion was handed out already; a failed
// arm is forgotten. Called once after each armStart that returned true.
func (p *poller) armDone(key uint64, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rec, live := p.arms[key]
	switch {
	case !live:
	case !ok:
		delete(p.arms, key)
	default:
		rec.counted = true
		p.arms[key] = rec
		p.countLocked(rec.fd, backend.EventIn, 1)
	}
}

// completed uncounts the ops and armed receives whose final completions
// are in cs. Called by the goroutine in Wait, before it hands cs out.
func (p *poller) completed(cs []backend.Completion) {
	if len(cs) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range cs {
		c := &cs[i]
		switch {
		case c.Flags&backend.More != 0:
		case c.Op != nil:
			p.countLocked(int(c.Op.FD), sides(c.Op), -1)
		default: // an armed receive's
			rec, ok := p.arms[c.UserData]
			if !ok {
				break
			}
			delete(p.arms, c.UserData)
			if rec.counted {
				p.countLocked(rec.fd, backend.EventIn, -1)
			}
		}
	}
}

// sides returns the side an op waits on when it has to wait: EventIn for
// the reactor's read queue, EventOut for its write queue, a poll's own
// directions, none for the kinds that never wait on a descriptor.
func sides(op *backend.Op) backend.Events {
	switch op.Kind {
	case backend.KindAccept, backend.KindRecv, backend.KindRecvFrom, backend.KindRead, backend.KindReadv:
		return backend.EventIn
	case backend.KindConnect, backend.KindSend, backend.KindSendTo, backend.KindWrite, backend.KindWritev:
		return backend.EventOut
	case backend.KindPoll:
		return op.Events & (backend.EventIn | backend.EventOut)
	}
	return 0
}

// kickLocked wakes the blocked Wait if w wants a direction its poll set
// does not ask for. p.mu is held.
func (p *poller) kickLocked(w *watch) error {
	if p.inPoll && w.wanted()&^w.polled != 0 {
		return p.wakeLocked()
	}
	return nil
}

// Wake makes a blocked Wait return, or the next one. Any goroutine.
func (p *poller) Wake() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.wakeLocked()
}

// wakeLocked writes the pipe's byte, unless one waits there already. p.mu
// is held.
func (p *poller) wakeLocked() error {
	if p.closed {
		return unix.EBADF
	}
	if p.woken {
		return nil
	}
	b := [1]byte{1}
	for {
		_, err := unix.Write(p.wakeW, b[:])
		switch err {
		case unix.EINTR:
			continue
		case nil, unix.EAGAIN: // EAGAIN: the pipe is full, so readable already
			p.woken = true
			return nil
		}
		return err
	}
}

// Wait builds the poll set from the watches, polls, and reports the
// descriptors found ready, each report clearing the arming of its
// directions (an error or hang-up, both). Wake-ups are drained and not
// reported. Called by one goroutine at a time (the reactor's waiter).
func (p *poller) Wait(events []reactor.Event, timeout time.Duration) (int, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return 0, unix.EBADF
	}
	p.buildLocked()
	p.inPoll = true
	p.mu.Unlock()

	_, err := unix.Poll(p.pfds, pollTimeout(timeout))

	p.mu.Lock()
	defer p.mu.Unlock()
	p.inPoll = false
	if err != nil {
		for _, w := range p.polled {
			w.polled = 0
		}
		if err == unix.EINTR {
			return 0, nil
		}
		return 0, err
	}
	if p.pfds[0].Revents != 0 {
		p.drain()
	}
	k := 0
	for i, w := range p.polled {
		re := p.pfds[i+1].Revents
		w.polled = 0
		if re == 0 || k == len(events) || w.reg < 0 {
			continue // not ready; no room (it stays armed: the next Wait reports it); deregistered meanwhile
		}
		ready := readyEvents(int(re))
		events[k] = reactor.Event{FD: w.fd, Ready: ready}
		k++
		if ready&(backend.EventErr|backend.EventHup) != 0 {
			w.armed = 0
		} else {
			w.armed &^= ready
		}
	}
	return k, nil
}

// buildLocked makes the poll set: the pipe, then each registered
// descriptor that wants a direction. O(registered descriptors). p.mu is
// held.
func (p *poller) buildLocked() {
	p.pfds = append(p.pfds[:0], unix.PollFd{Fd: int32(p.wakeR), Events: unix.POLLIN})
	clear(p.polled)
	p.polled = p.polled[:0]
	for _, w := range p.reg {
		ev := w.wanted()
		if ev == 0 {
			continue
		}
		pfd := unix.PollFd{Fd: int32(w.fd)}
		if ev&backend.EventIn != 0 {
			pfd.Events |= unix.POLLIN
		}
		if ev&backend.EventOut != 0 {
			pfd.Events |= unix.POLLOUT
		}
		w.polled = ev
		p.pfds = append(p.pfds, pfd)
		p.polled = append(p.polled, w)
	}
}

// readyEvents converts a poll(2) result; POLLNVAL (a descriptor closed
// behind the reactor's back) is an error, so that the ops waiting on it
// run and fail.
func readyEvents(re int) backend.Events {
	ready := unixio.PollEvents(re)
	if re&unix.POLLNVAL != 0 {
		ready |= backend.EventErr
	}
	return ready
}

// pollTimeout converts Wait's timeout to poll(2)'s milliseconds: rounded
// up, so that a timer is never polled for early and spun on, and at most
// a C int (about 24 days; the reactor waits again when it returns before
// its deadline). Negative blocks.
func pollTimeout(timeout time.Duration) int {
	if timeout < 0 {
		return -1
	}
	ms := timeout / time.Millisecond
	if timeout%time.Millisecond != 0 {
		ms++
	}
	return int(min(ms, math.MaxInt32))
}

// drain empties the pipe and ends the wake-up. p.mu is held.
func (p *poller) drain() {
	var b [64]byte
	for {
		n, err := unix.Read(p.wakeR, b[:])
		if err == unix.EINTR || n == len(b) {
			continue
		}
		break
	}
	p.woken = false
}

// Close closes the pipe. The reactor calls it once, with no Wait running.
func (p *poller) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return unix.EBADF
	}
	p.closed = true
	err1 := unix.Close(p.wakeR)
	err2 := unix.Close(p.wakeW)
	if err1 != nil {
		return err1
	}
	return err2
}
