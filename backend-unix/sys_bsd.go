//go:build darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package unixio

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// setKeepAlive turns keep-alive on with idle time and interval secs, or off.
func setKeepAlive(s, secs int) error {
	if secs <= 0 {
		return unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 0)
	}
	if err := unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1); err != nil {
		return err
	}
	if keepIdleOpt < 0 {
		return nil
	}
	if err := unix.SetsockoptInt(s, unix.IPPROTO_TCP, keepIdleOpt, secs); err != nil {
		return err
	}
	return unix.SetsockoptInt(s, unix.IPPROTO_TCP, keepIntvlOpt, secs)
}

// keepAliveIdle reads the idle time.
func keepAliveIdle(s int) (int, error) {
	if keepIdleOpt < 0 {
		return 1, nil
	}
	v, err := unix.GetsockoptInt(s, unix.IPPROTO_TCP, keepIdleOpt)
	return v, Error("getsockopt", err)
}

// etime stands for ETIME, which only io_uring (Linux) reports: a value no
// errno takes, so that its case never matches.
const etime = syscall.Errno(1<<31 - 1)

// pollRdHup: the BSDs have no POLLRDHUP (a half-close shows as POLLIN).
const pollRdHup = 0

// joinGroup4 joins an IPv4 group; the BSDs name the interface by one of its
// addresses.
func joinGroup4(s int, group [4]byte, ifindex int) error {
	mreq := &unix.IPMreq{Multiaddr: group}
	if ifindex != 0 {
		ifi, err := net.InterfaceByIndex(ifindex)
		if err != nil {
			return unix.ENXIO
		}
		addrs, _ := ifi.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				if ip4 := ipn.IP.To4(); ip4 != nil {
					copy(mreq.Interface[:], ip4)
					break
				}
			}
		}
	}
	return unix.SetsockoptIPMreq(s, unix.IPPROTO_IP, unix.IP_ADD_MEMBERSHIP, mreq)
}
