//go:build linux || dragonfly || freebsd || illumos

package reactor

import "golang.org/x/sys/unix"

// acceptConn accepts a connection as a non-blocking, close-on-exec socket.
func acceptConn(fd int) (int, unix.Sockaddr, error) {
	for {
		nfd, sa, err := unix.Accept4(fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != unix.EINTR {
			return nfd, sa, err
		}
	}
}
