//go:build darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package unixio

import "golang.org/x/sys/unix"

// send sends b (sendmsg with SendFlags; darwin's sockets have
// SO_NOSIGPIPE).
func send(fd int, b []byte) (int, error) {
	return unix.SendmsgN(fd, b, nil, nil, SendFlags)
}
