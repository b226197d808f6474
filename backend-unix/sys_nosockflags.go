//go:build (solaris && !illumos) || aix

package unixio

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// socket makes the socket and sets its flags under ForkLock: AIX has no
// SOCK_NONBLOCK or SOCK_CLOEXEC, nor has Oracle Solaris before 11.4.
func socket(domain, typ int) (int, error) {
	syscall.ForkLock.RLock()
	fd, err := unix.Socket(domain, typ, 0)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// afterSocket has nothing to add: sends pass SendFlags, and a SIGPIPE where
// they cannot stop it is one the Go runtime ignores.
func afterSocket(int) error { return nil }
