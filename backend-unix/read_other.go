//go:build darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package unixio

import "golang.org/x/sys/unix"

// Read is read(2) on a non-blocking descriptor (a socket, a pipe): the
// receive of the Unix backends. Any goroutine may call it. (On Linux it is
// a raw system call; here an ordinary one.)
func Read(fd int, b []byte) (int, error) { return unix.Read(fd, b) }
