//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package unixio

import (
	"errors"
	"syscall"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// Sentinel returns the backend sentinel for errno: the one conversion of
// an OS error code to this project's errors. Codes without a sentinel of
// their own map to backend.ErrIO.
func Sentinel(errno syscall.Errno) error {
	switch errno {
	case unix.ECANCELED:
		return backend.ErrCanceled
	case etime:
		return backend.ErrTimeout
	case unix.ENOENT:
		return backend.ErrNotExist
	case unix.EBADF:
		return backend.ErrClosed
	case unix.EINVAL:
		return backend.ErrInvalid
	case unix.EOPNOTSUPP, unix.ENOSYS, unix.EAFNOSUPPORT, unix.EPROTONOSUPPORT, unix.ENOPROTOOPT:
		return backend.ErrUnsupported
	case unix.ECONNRESET:
		return backend.ErrConnReset
	case unix.ECONNREFUSED:
		return backend.ErrConnRefused
	case unix.ECONNABORTED:
		return backend.ErrConnAborted
	case unix.EPIPE, unix.ESHUTDOWN:
		return backend.ErrBrokenPipe
	case unix.ENOTCONN:
		return backend.ErrNotConnected
	case unix.ETIMEDOUT:
		return backend.ErrTimedOut
	case unix.EADDRINUSE:
		return backend.ErrAddrInUse
	case unix.EADDRNOTAVAIL:
		return backend.ErrAddrNotAvailable
	case unix.ENETUNREACH, unix.EHOSTUNREACH, unix.ENETDOWN, unix.EHOSTDOWN:
		return backend.ErrUnreachable
	case unix.EMFILE, unix.ENFILE:
		return backend.ErrTooManyFiles
	case unix.ENOMEM, unix.ENOBUFS:
		return backend.ErrNoMemory
	case unix.EACCES, unix.EPERM:
		return backend.ErrPermission
	case unix.EEXIST:
		return backend.ErrFileExists
	case unix.EMSGSIZE:
		return backend.ErrMessageSize
	}
	return backend.ErrIO
}

// Error converts err, as a system call returned it, to the backend's form:
// nil stays nil; a syscall.Errno becomes an *backend.Error naming op, with
// ECANCELED and ETIME as the bare ErrCanceled and ErrTimeout (they are
// results of this package's own cancels and timers, and frequent); anything
// else is wrapped with ErrIO.
func Error(op string, err error) error {
	if err == nil {
		return nil
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return backend.NewError(op, backend.ErrIO, err)
	}
	return ErrnoError(op, errno)
}

// ErrnoError is Error for a bare errno (an io_uring result, negated).
func ErrnoError(op string, errno syscall.Errno) error {
	switch errno {
	case 0:
		return nil
	case unix.ECANCELED:
		return backend.ErrCanceled
	case etime:
		return backend.ErrTimeout
	}
	return backend.NewError(op, Sentinel(errno), errno)
}

// PollEvents converts a poll(2) result mask (as poll, epoll and io_uring's
// POLL_ADD report it) to backend Events: readable includes a peer's
// half-close and urgent data, as a read would return at once.
func PollEvents(mask int) backend.Events {
	var e backend.Events
	if mask&(unix.POLLIN|unix.POLLPRI|pollRdHup) != 0 {
		e |= backend.EventIn
	}
	if mask&unix.POLLOUT != 0 {
		e |= backend.EventOut
	}
	if mask&unix.POLLERR != 0 {
		e |= backend.EventErr
	}
	if mask&unix.POLLHUP != 0 {
		e |= backend.EventHup
	}
	return e
}
