//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package unixio

import (
	"fmt"
	"net/netip"
	"syscall"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// Control implements backend.Resources for the Unix backends: they embed it.
// Sockets are non-blocking and close-on-exec, which both the readiness
// backends (they need EAGAIN) and io_uring (it polls them internally) want.
// Its zero value is ready; it holds no state.
type Control struct{}

var _ backend.Resources = Control{}

// Socket makes a non-blocking, close-on-exec socket.
func (Control) Socket(family backend.Family, typ backend.SockType) (backend.FD, error) {
	domain, err := Domain(family)
	if err != nil {
		return backend.InvalidFD, err
	}
	var st int
	switch typ {
	case backend.Stream:
		st = unix.SOCK_STREAM
	case backend.Datagram:
		st = unix.SOCK_DGRAM
	default:
		return backend.InvalidFD, backend.NewError("socket", backend.ErrInvalid, fmt.Errorf("type %d", typ))
	}
	fd, err := socket(domain, st)
	if err != nil {
		return backend.InvalidFD, Error("socket", err)
	}
	if err := afterSocket(fd); err != nil {
		unix.Close(fd)
		return backend.InvalidFD, Error("socket", err)
	}
	return backend.FD(fd), nil
}

// Bind binds fd to a. For an IPv6 socket an IPv4 address is mapped.
func (Control) Bind(fd backend.FD, a backend.Addr) error {
	sa, err := sockaddrFor(fd, a)
	if err != nil {
		return err
	}
	return Error("bind", unix.Bind(int(fd), sa))
}

// sockaddrFor converts a for the socket fd, mapping an IPv4 address when fd
// is an IPv6 socket.
func sockaddrFor(fd backend.FD, a backend.Addr) (unix.Sockaddr, error) {
	if a.Family == backend.FamilyInet4 {
		if isInet6(int(fd)) {
			a = backend.Addr{Family: backend.FamilyInet6, IP: netip.AddrPortFrom(netip.AddrFrom16(a.IP.Addr().As16()), a.IP.Port())}
		}
	}
	return Sockaddr(a)
}

// Listen marks fd listening; backlog <= 0 means SOMAXCONN.
func (Control) Listen(fd backend.FD, backlog int) error {
	if backlog <= 0 {
		backlog = unix.SOMAXCONN
	}
	return Error("listen", unix.Listen(int(fd), backlog))
}

// LocalAddr returns getsockname.
func (Control) LocalAddr(fd backend.FD) (backend.Addr, error) {
	sa, err := unix.Getsockname(int(fd))
	if err != nil {
		return backend.Addr{}, Error("getsockname", err)
	}
	return FromSockaddr(sa), nil
}

// PeerAddr returns getpeername.
func (Control) PeerAddr(fd backend.FD) (backend.Addr, error) {
	sa, err := unix.Getpeername(int(fd))
	if err != nil {
		return backend.Addr{}, Error("getpeername", err)
	}
	return FromSockaddr(sa), nil
}

// SetOption sets opt (see backend.Option for the values).
func (c Control) SetOption(fd backend.FD, opt backend.Option, value int) error {
	s := int(fd)
	var err error
	switch opt {
	case backend.OptNoDelay:
		err = unix.SetsockoptInt(s, unix.IPPROTO_TCP, unix.TCP_NODELAY, boolInt(value))
	case backend.OptKeepAlive:
		err = setKeepAlive(s, value)
	case backend.OptLinger:
		l := unix.Linger{}
		if value >= 0 {
			l.Onoff, l.Linger = 1, int32(value)
		}
		err = unix.SetsockoptLinger(s, unix.SOL_SOCKET, unix.SO_LINGER, &l)
	case backend.OptReuseAddr:
		err = unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_REUSEADDR, boolInt(value))
	case backend.OptReusePort:
		var name int
		if name, err = reusePortOpt(); err == nil {
			err = unix.SetsockoptInt(s, unix.SOL_SOCKET, name, boolInt(value))
		}
	case backend.OptBroadcast:
		err = unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_BROADCAST, boolInt(value))
	case backend.OptRecvBuffer:
		err = unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_RCVBUF, value)
	case backend.OptSendBuffer:
		err = unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_SNDBUF, value)
	case backend.OptV6Only:
		err = unix.SetsockoptInt(s, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, boolInt(value))
	case backend.OptMulticastLoop, backend.OptMulticastTTL:
		level, name := multicastOpt(s, opt)
		err = unix.SetsockoptInt(s, level, name, value)
	case backend.OptError:
		return backend.NewError("setsockopt", backend.ErrInvalid, fmt.Errorf("OptError is read only"))
	default:
		return backend.NewError("setsockopt", backend.ErrInvalid, fmt.Errorf("option %d", opt))
	}
	return Error("setsockopt", err)
}

// Option reads opt.
func (c Control) Option(fd backend.FD, opt backend.Option) (int, error) {
	s := int(fd)
	get := func(level, name int) (int, error) {
		v, err := unix.GetsockoptInt(s, level, name)
		return v, Error("getsockopt", err)
	}
	switch opt {
	case backend.OptNoDelay:
		return get(unix.IPPROTO_TCP, unix.TCP_NODELAY)
	case backend.OptKeepAlive:
		on, err := get(unix.SOL_SOCKET, unix.SO_KEEPALIVE)
		if err != nil || on == 0 {
			return 0, err
		}
		return keepAliveIdle(s)
	case backend.OptLinger:
		l, err := unix.GetsockoptLinger(s, unix.SOL_SOCKET, unix.SO_LINGER)
		if err != nil {
			return 0, Error("getsockopt", err)
		}
		if l.Onoff == 0 {
			return -1, nil
		}
		return int(l.Linger), nil
	case backend.OptReuseAddr:
		return get(unix.SOL_SOCKET, unix.SO_REUSEADDR)
	case backend.OptReusePort:
		name, err := reusePortOpt()
		if err != nil {
			return 0, Error("getsockopt", err)
		}
		return get(unix.SOL_SOCKET, name)
	case backend.OptBroadcast:
		return get(unix.SOL_SOCKET, unix.SO_BROADCAST)
	case backend.OptRecvBuffer:
		return get(unix.SOL_SOCKET, unix.SO_RCVBUF)
	case backend.OptSendBuffer:
		return get(unix.SOL_SOCKET, unix.SO_SNDBUF)
	case backend.OptV6Only:
		return get(unix.IPPROTO_IPV6, unix.IPV6_V6ONLY)
	case backend.OptMulticastLoop, backend.OptMulticastTTL:
		level, name := multicastOpt(s, opt)
		return get(level, name)
	case backend.OptError:
		return get(unix.SOL_SOCKET, unix.SO_ERROR)
	}
	return 0, backend.NewError("getsockopt", backend.ErrInvalid, fmt.Errorf("option %d", opt))
}

// multicastOpt picks the IPv4 or IPv6 form of a multicast option by the
// socket's family.
func multicastOpt(s int, opt backend.Option) (level, name int) {
	v6 := isInet6(s)
	switch {
	case opt == backend.OptMulticastLoop && v6:
		return unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_LOOP
	case opt == backend.OptMulticastLoop:
		return unix.IPPROTO_IP, unix.IP_MULTICAST_LOOP
	case v6:
		return unix.IPPROTO_IPV6, unix.IPV6_MULTICAST_HOPS
	}
	return unix.IPPROTO_IP, unix.IP_MULTICAST_TTL
}

// isInet6 reports whether s is an IPv6 socket.
func isInet6(s int) bool {
	sa, err := unix.Getsockname(s)
	if err != nil {
		return false
	}
	_, ok := sa.(*unix.SockaddrInet6)
	return ok
}

// Shutdown shuts down one or both halves.
func (Control) Shutdown(fd backend.FD, how backend.ShutdownHow) error {
	var h int
	switch how {
	case backend.ShutdownRead:
		h = unix.SHUT_RD
	case backend.ShutdownWrite:
		h = unix.SHUT_WR
	case backend.ShutdownBoth:
		h = unix.SHUT_RDWR
	default:
		return backend.NewError("shutdown", backend.ErrInvalid, fmt.Errorf("how %d", how))
	}
	return Error("shutdown", unix.Shutdown(int(fd), h))
}

// JoinGroup joins a multicast group (IP_ADD_MEMBERSHIP or IPV6_JOIN_GROUP).
func (Control) JoinGroup(fd backend.FD, group netip.Addr, ifindex int) error {
	if !group.IsMulticast() {
		return backend.NewError("join group", backend.ErrInvalid, fmt.Errorf("%v is not multicast", group))
	}
	s := int(fd)
	if group.Is4() || group.Is4In6() {
		return Error("join group", joinGroup4(s, group.Unmap().As4(), ifindex))
	}
	mreq := &unix.IPv6Mreq{Multiaddr: group.As16(), Interface: uint32(ifindex)}
	return Error("join group", unix.SetsockoptIPv6Mreq(s, unix.IPPROTO_IPV6, unix.IPV6_JOIN_GROUP, mreq))
}

// OpenFile opens path close-on-exec.
func (Control) OpenFile(path string, flags backend.OpenFlags, perm uint32) (backend.FD, error) {
	mode, err := OpenMode(flags)
	if err != nil {
		return backend.InvalidFD, err
	}
	for {
		fd, err := unix.Open(path, mode, perm)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return backend.InvalidFD, Error("open "+path, err)
		}
		return backend.FD(fd), nil
	}
}

// OpenMode converts flags to open(2)'s, O_CLOEXEC included: for OpenFile,
// and for io_uring's OPENAT (backend.KindOpenAt). Flags with neither
// OpenRead nor OpenWrite are ErrInvalid.
func OpenMode(flags backend.OpenFlags) (int, error) {
	var mode int
	switch flags & (backend.OpenRead | backend.OpenWrite) {
	case backend.OpenRead:
		mode = unix.O_RDONLY
	case backend.OpenWrite:
		mode = unix.O_WRONLY
	case backend.OpenRead | backend.OpenWrite:
		mode = unix.O_RDWR
	default:
		return 0, backend.NewError("open", backend.ErrInvalid, fmt.Errorf("neither OpenRead nor OpenWrite"))
	}
	if flags&backend.OpenCreate != 0 {
		mode |= unix.O_CREAT
	}
	if flags&backend.OpenTruncate != 0 {
		mode |= unix.O_TRUNC
	}
	if flags&backend.OpenAppend != 0 {
		mode |= unix.O_APPEND
	}
	if flags&backend.OpenExclusive != 0 {
		mode |= unix.O_EXCL
	}
	return mode | unix.O_CLOEXEC, nil
}

// CloseFD closes fd. EINTR is not retried: on Linux and the BSDs the
// descriptor is released even then.
func (Control) CloseFD(fd backend.FD) error {
	err := unix.Close(int(fd))
	if err == unix.EINTR {
		return nil
	}
	return Error("close", err)
}

func boolInt(v int) int {
	if v != 0 {
		return 1
	}
	return 0
}

// IsAgain reports whether err says "try again later" (EAGAIN, EWOULDBLOCK,
// EINPROGRESS for a connect).
func IsAgain(err error) bool {
	return err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
}
