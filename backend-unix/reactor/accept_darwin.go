package reactor

import "golang.org/x/sys/unix"

// afterAccept turns SIGPIPE off for the socket (darwin has no MSG_NOSIGNAL).
func afterAccept(fd int) error {
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_NOSIGPIPE, 1)
}
