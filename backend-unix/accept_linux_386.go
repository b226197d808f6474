package unixio

import (
	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// PeerAddr is getpeername(2). On 386 the socket calls go through
// socketcall(2) on kernels before 4.3, which x/sys handles: this is its
// allocating form.
func PeerAddr(fd int) (backend.Addr, error) {
	sa, err := unix.Getpeername(fd)
	if err != nil {
		return backend.Addr{}, err
	}
	return FromSockaddr(sa), nil
}

// Accept4 accepts a connection on fd as a non-blocking, close-on-exec
// socket, retrying EINTR. On 386 it is x/sys's (see PeerAddr).
func Accept4(fd int) (int, backend.Addr, error) {
	for {
		nfd, sa, err := unix.Accept4(fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		switch err {
		case nil:
			return nfd, FromSockaddr(sa), nil
		case unix.EINTR:
			continue
		}
		return -1, backend.Addr{}, err
	}
}
