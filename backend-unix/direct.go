//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package unixio

import (
	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// TrySend sends b on the non-blocking stream socket fd now, or returns
// backend.ErrWouldBlock: the fast path of backend.Backend.TrySend for the
// Unix backends. Sends never raise SIGPIPE (SendFlags, SO_NOSIGPIPE). At
// most backend.MaxRW bytes go in one call.
func TrySend(fd backend.FD, b []byte) (int, error) {
	b = backend.LimitRW(b)
	for {
		n, err := send(int(fd), b)
		switch err {
		case nil:
			return n, nil
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, backend.ErrWouldBlock
		}
		return 0, Error("send", err)
	}
}

// Send is one send(2) of b on the non-blocking stream socket fd, without
// SIGPIPE (SendFlags, SO_NOSIGPIPE): a raw system call on Linux, like
// Read. Errors are the bare errno. Any goroutine may call it.
func Send(fd int, b []byte) (int, error) { return send(fd, b) }

// TryRecv reads into b from the non-blocking stream socket fd now, or
// returns backend.ErrWouldBlock. 0 bytes is the end of the stream. At most
// backend.MaxRW bytes are read in one call.
func TryRecv(fd backend.FD, b []byte) (int, error) {
	b = backend.LimitRW(b)
	for {
		n, err := Read(int(fd), b)
		switch err {
		case nil:
			return n, nil
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, backend.ErrWouldBlock
		}
		return 0, Error("recv", err)
	}
}

// TrySend is the package's TrySend, for the backends that embed Control.
func (Control) TrySend(fd backend.FD, b []byte) (int, error) { return TrySend(fd, b) }

// TryRecv is the package's TryRecv, for the backends that embed Control.
func (Control) TryRecv(fd backend.FD, b []byte) (int, error) { return TryRecv(fd, b) }
