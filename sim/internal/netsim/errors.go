package netsim

import (
	"syscall"

	"github.com/blitz-go/blitz/backend"
)

// sysErr is the errno that stands for each sentinel the model reports, so
// that an error of the simulated backend matches both the sentinel and the
// errno a real Unix backend would carry (errors.Is(err, syscall.ECONNRESET)).
var sysErr = map[error]syscall.Errno{
	backend.ErrConnReset:        syscall.ECONNRESET,
	backend.ErrConnRefused:      syscall.ECONNREFUSED,
	backend.ErrConnAborted:      syscall.ECONNABORTED,
	backend.ErrBrokenPipe:       syscall.EPIPE,
	backend.ErrNotConnected:     syscall.ENOTCONN,
	backend.ErrTimedOut:         syscall.ETIMEDOUT,
	backend.ErrAddrInUse:        syscall.EADDRINUSE,
	backend.ErrAddrNotAvailable: syscall.EADDRNOTAVAIL,
	backend.ErrUnreachable:      syscall.EHOSTUNREACH,
	backend.ErrNotExist:         syscall.ENOENT,
	backend.ErrFileExists:       syscall.EEXIST,
	backend.ErrMessageSize:      syscall.EMSGSIZE,
	backend.ErrIO:               syscall.EIO,
	backend.ErrClosed:           syscall.EBADF,
	backend.ErrInvalid:          syscall.EINVAL,
	backend.ErrNoBuffers:        syscall.ENOBUFS,
	backend.ErrPermission:       syscall.EACCES,
}

// oserr returns the *backend.Error of sentinel for operation op, with the
// errno a Unix kernel would have given (none for sentinels without one).
func oserr(op string, sentinel error) error {
	if e, ok := sysErr[sentinel]; ok {
		return backend.NewError(op, sentinel, e)
	}
	return backend.NewError(op, sentinel, nil)
}

// errnoOf returns the errno of a model error, 0 for nil, for OptError.
func errnoOf(err error) int {
	if err == nil {
		return 0
	}
	if e, ok := err.(*backend.Error); ok {
		if n, ok := e.Sys.(syscall.Errno); ok {
			return int(n)
		}
		err = e.Err
	}
	return int(sysErr[err])
}
