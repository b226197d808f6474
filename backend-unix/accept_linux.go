//go:build linux && !386

package unixio

import (
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// PeerAddr is getpeername(2) decoded as DecodeRaw does, with the sockaddr
// on the caller's stack: unix.Getpeername allocates 144 bytes of garbage
// per call (the raw sockaddr and the Sockaddr interface), which a server
// accepting 10^4 connections leaves resident until the heap is scavenged.
func PeerAddr(fd int) (backend.Addr, error) {
	var raw unix.RawSockaddrAny
	n := uint32(unix.SizeofSockaddrAny)
	_, _, errno := unix.Syscall(unix.SYS_GETPEERNAME, uintptr(fd), uintptr(unsafe.Pointer(&raw)), uintptr(unsafe.Pointer(&n)))
	if errno != 0 {
		return backend.Addr{}, errno
	}
	return DecodeRaw(&raw, n), nil
}

// Accept4 accepts a connection on fd as a non-blocking, close-on-exec
// socket and decodes its peer's address as DecodeRaw does, with the
// sockaddr on the caller's stack (unix.Accept4 allocates it, and a
// Sockaddr, per connection). EINTR is retried.
func Accept4(fd int) (int, backend.Addr, error) {
	for {
		var raw unix.RawSockaddrAny
		n := uint32(unix.SizeofSockaddrAny)
		nfd, _, errno := unix.Syscall6(unix.SYS_ACCEPT4, uintptr(fd), uintptr(unsafe.Pointer(&raw)), uintptr(unsafe.Pointer(&n)),
			unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
		switch errno {
		case 0:
			return int(nfd), DecodeRaw(&raw, n), nil
		case unix.EINTR:
			continue
		}
		return -1, backend.Addr{}, errno
	}
}
