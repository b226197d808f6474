//go:build darwin || (solaris && !illumos) || aix

package unixio

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// socket makes the socket and sets its flags under ForkLock, on the systems
// whose socket(2) takes no SOCK_NONBLOCK or SOCK_CLOEXEC: darwin, AIX and
// Oracle Solaris before 11.4.
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
