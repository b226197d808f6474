//go:build darwin || netbsd || openbsd || (solaris && !illumos) || aix

package reactor

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// acceptConn accepts a connection and makes it non-blocking and
// close-on-exec (under ForkLock: there is no accept4 here).
func acceptConn(fd int) (int, unix.Sockaddr, error) {
	for {
		syscall.ForkLock.RLock()
		nfd, sa, err := unix.Accept(fd)
		if err == nil {
			unix.CloseOnExec(nfd)
		}
		syscall.ForkLock.RUnlock()
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, nil, err
		}
		if err := unix.SetNonblock(nfd, true); err != nil {
			unix.Close(nfd)
			return -1, nil, err
		}
		if err := afterAccept(nfd); err != nil {
			unix.Close(nfd)
			return -1, nil, err
		}
		return nfd, sa, nil
	}
}
