//go:build darwin || netbsd || openbsd || (solaris && !illumos) || aix

package reactor

import (
	"syscall"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
	"golang.org/x/sys/unix"
)

// acceptConn accepts a connection and makes it non-blocking and
// close-on-exec (under ForkLock: there is no accept4 here).
func acceptConn(fd int) (int, backend.Addr, error) {
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
			return -1, backend.Addr{}, err
		}
		if err := unix.SetNonblock(nfd, true); err != nil {
			unix.Close(nfd)
			return -1, backend.Addr{}, err
		}
		if err := afterAccept(nfd); err != nil {
			unix.Close(nfd)
			return -1, backend.Addr{}, err
		}
		return nfd, unixio.FromSockaddr(sa), nil
	}
}
