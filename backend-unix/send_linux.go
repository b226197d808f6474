package unixio

import "golang.org/x/sys/unix"

// send is send(2) with MSG_NOSIGNAL: sendto without an address, one system
// call and no msghdr to build. It is a raw system call: the socket is
// non-blocking, so the call cannot sleep (see Read for why raw).
func send(fd int, b []byte) (int, error) {
	n, _, errno := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(bufAddr(b)), uintptr(len(b)), SendFlags, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
