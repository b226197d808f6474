package unixio

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// keepIdleOpt is darwin's name for TCP_KEEPIDLE.
const keepIdleOpt, keepIntvlOpt = unix.TCP_KEEPALIVE, unix.TCP_KEEPINTVL

// SendFlags: darwin suppresses SIGPIPE per socket (SO_NOSIGPIPE).
const SendFlags = 0

// socket makes the socket and sets its flags under ForkLock, since darwin
// has no SOCK_NONBLOCK or SOCK_CLOEXEC.
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

// afterSocket turns SIGPIPE off for the socket.
func afterSocket(fd int) error {
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_NOSIGPIPE, 1)
}
