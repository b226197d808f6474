//go:build dragonfly || freebsd || illumos

package reactor

import (
	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
	"golang.org/x/sys/unix"
)

// acceptConn accepts a connection as a non-blocking, close-on-exec socket.
func acceptConn(fd int) (int, backend.Addr, error) {
	for {
		nfd, sa, err := unix.Accept4(fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != unix.EINTR {
			if err != nil {
				return nfd, backend.Addr{}, err
			}
			return nfd, unixio.FromSockaddr(sa), nil
		}
	}
}
