package iodriver

import (
	"fmt"

	"github.com/blitz-go/blitz/backend"
)

// openBackend starts the backend blitz.Config.Backend names. On Linux the
// automatic choice is io_uring, and epoll when io_uring cannot start:
// io_uring_setup refused (containers and seccomp profiles often block it,
// /proc/sys/kernel/io_uring_disabled), too old a kernel, or io_uring
// compiled out with the blitz_nouring build tag. poll(2) runs only when
// named.
func openBackend(name string) (backend.Backend, error) {
	switch name {
	case Auto:
		b, uerr := newURing()
		if uerr == nil {
			return b, nil
		}
		b, eerr := newEpoll()
		if eerr == nil {
			return b, nil
		}
		return nil, fmt.Errorf("%w: io_uring: %w; epoll: %w", ErrBackend, uerr, eerr)
	case URing:
		return wrapBackendErr(name, newURing)
	case Epoll:
		return wrapBackendErr(name, newEpoll)
	case Poll:
		return wrapBackendErr(name, newPoll)
	}
	return nil, fmt.Errorf("%w: %q is not a backend of linux (uring, epoll, poll, none)", ErrBackend, name)
}
