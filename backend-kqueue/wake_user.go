//go:build darwin || dragonfly || freebsd

package kqueue

import "golang.org/x/sys/unix"

// waker wakes kevent through an EVFILT_USER event (ident 0).
type waker struct{}

func (waker) init(kq int) error {
	var ev [1]unix.Kevent_t
	unix.SetKevent(&ev[0], 0, unix.EVFILT_USER, unix.EV_ADD|unix.EV_CLEAR)
	_, err := unix.Kevent(kq, ev[:], nil, nil)
	return err
}

func (waker) wake(kq int) error {
	var ev [1]unix.Kevent_t
	unix.SetKevent(&ev[0], 0, unix.EVFILT_USER, 0)
	ev[0].Fflags = unix.NOTE_TRIGGER
	for {
		_, err := unix.Kevent(kq, ev[:], nil, nil)
		if err != unix.EINTR {
			return err
		}
	}
}

func (waker) isWake(e *unix.Kevent_t) bool { return int(e.Filter) == unix.EVFILT_USER }

func (waker) close() {}
