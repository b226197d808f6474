package unixio

import "golang.org/x/sys/unix"

// socket makes the socket with the flags in one call.
func socket(domain, typ int) (int, error) {
	return unix.Socket(domain, typ|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
}

// afterSocket has nothing to add on Linux (send uses MSG_NOSIGNAL).
func afterSocket(int) error { return nil }

// setKeepAlive turns keep-alive on with idle time and interval secs, or off.
func setKeepAlive(s, secs int) error {
	if secs <= 0 {
		return unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 0)
	}
	if err := unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1); err != nil {
		return err
	}
	if err := unix.SetsockoptInt(s, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, secs); err != nil {
		return err
	}
	return unix.SetsockoptInt(s, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, secs)
}

// keepAliveIdle reads the idle time.
func keepAliveIdle(s int) (int, error) {
	v, err := unix.GetsockoptInt(s, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE)
	return v, Error("getsockopt", err)
}

// joinGroup4 joins an IPv4 group on the interface ifindex.
func joinGroup4(s int, group [4]byte, ifindex int) error {
	m := &unix.IPMreqn{Multiaddr: group, Ifindex: int32(ifindex)}
	return unix.SetsockoptIPMreqn(s, unix.IPPROTO_IP, unix.IP_ADD_MEMBERSHIP, m)
}

// etime is ETIME, io_uring's "timeout expired".
const etime = unix.ETIME

// pollRdHup is POLLRDHUP, the peer's half-close (Linux only).
const pollRdHup = unix.POLLRDHUP

// SendFlags are the flags of every send: no SIGPIPE on a broken pipe.
const SendFlags = unix.MSG_NOSIGNAL
