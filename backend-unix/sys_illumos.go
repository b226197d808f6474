package unixio

import "golang.org/x/sys/unix"

// SendFlags are the flags of every send: no SIGPIPE on a broken pipe.
const SendFlags = unix.MSG_NOSIGNAL

// socket makes the socket with the flags in one call.
func socket(domain, typ int) (int, error) {
	return unix.Socket(domain, typ|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
}

// afterSocket has nothing to add (sends use MSG_NOSIGNAL).
func afterSocket(int) error { return nil }
