//go:build linux || darwin || openbsd

package reactor

import "golang.org/x/sys/unix"

// readv scatters into bufs at off (-1: the current position).
func readv(fd int, bufs [][]byte, off int64) (int, error) {
	if off < 0 {
		return unix.Readv(fd, bufs)
	}
	return unix.Preadv(fd, bufs, off)
}

// writev gathers from bufs at off (-1: the current position).
func writev(fd int, bufs [][]byte, off int64) (int, error) {
	if off < 0 {
		return unix.Writev(fd, bufs)
	}
	return unix.Pwritev(fd, bufs, off)
}
