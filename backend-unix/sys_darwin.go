package unixio

import "golang.org/x/sys/unix"

// keepIdleOpt is darwin's name for TCP_KEEPIDLE.
const keepIdleOpt, keepIntvlOpt = unix.TCP_KEEPALIVE, unix.TCP_KEEPINTVL

// SendFlags: darwin suppresses SIGPIPE per socket (SO_NOSIGPIPE).
const SendFlags = 0

// afterSocket turns SIGPIPE off for the socket.
func afterSocket(fd int) error {
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_NOSIGPIPE, 1)
}
