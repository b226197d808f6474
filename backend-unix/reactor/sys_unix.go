//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package reactor

import (
	unixio "github.com/blitz-go/blitz/backend-unix"
	"golang.org/x/sys/unix"
)

// closeErr closes fd. EINTR is not an error: the descriptor is released.
func closeErr(name string, fd int) error {
	err := unix.Close(fd)
	if err == unix.EINTR {
		return nil
	}
	return unixio.Error(name, err)
}
