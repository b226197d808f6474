//go:build netbsd || openbsd

package kqueue

import "golang.org/x/sys/unix"

// waker wakes kevent through a byte written to a pipe whose read end is in
// the kqueue (level-triggered, drained when reported).
type waker struct {
	r, w int
}

func (k *waker) init(kq int) error {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		return err
	}
	k.r, k.w = fds[0], fds[1]
	var ev [1]unix.Kevent_t
	unix.SetKevent(&ev[0], k.r, unix.EVFILT_READ, unix.EV_ADD)
	if _, err := unix.Kevent(kq, ev[:], nil, nil); err != nil {
		k.close()
		return err
	}
	return nil
}

func (k *waker) wake(int) error {
	b := [1]byte{1}
	for {
		_, err := unix.Write(k.w, b[:])
		switch err {
		case unix.EINTR:
			continue
		case unix.EAGAIN: // the pipe is full: readable already
			return nil
		}
		return err
	}
}

func (k *waker) isWake(e *unix.Kevent_t) bool {
	if int(e.Filter) != unix.EVFILT_READ || int(e.Ident) != k.r {
		return false
	}
	var b [64]byte
	for {
		n, err := unix.Read(k.r, b[:])
		if n <= 0 && err != unix.EINTR {
			return true
		}
	}
}

func (k *waker) close() {
	unix.Close(k.r)
	unix.Close(k.w)
}
