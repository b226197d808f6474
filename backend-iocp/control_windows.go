//go:build windows

package iocp

import (
	"errors"
	"fmt"
	"net/netip"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/windows"
)

var (
	errInFlight = errors.New("op already in flight")
	errPollOut  = errors.New("IOCP has no writability notification")
	errPollKind = errors.New("poll needs a connected or datagram socket")
	errClosing  = errors.New("descriptor already being closed")
)

// Socket makes an overlapped, non-inheritable socket associated with the
// port and in non-blocking mode (see setNonblock). An IPv6 socket accepts
// IPv4-mapped addresses (IPV6_V6ONLY off, as on Unix), and a UDP socket does
// not report ICMP port-unreachable as a reset on its next recv.
func (b *Backend) Socket(family backend.Family, typ backend.SockType) (backend.FD, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return backend.InvalidFD, backend.ErrClosed
	}
	s, err := b.newSocketLocked(family, typ)
	if err != nil {
		return backend.InvalidFD, err
	}
	return backend.FD(s), nil
}

// newSocketLocked makes a socket (for Socket and for AcceptEx) and records
// it in b.fds.
func (b *Backend) newSocketLocked(family backend.Family, typ backend.SockType) (windows.Handle, error) {
	var af, st, proto int32
	switch family {
	case backend.FamilyInet4:
		af = windows.AF_INET
	case backend.FamilyInet6:
		af = windows.AF_INET6
	case backend.FamilyUnix:
		af = windows.AF_UNIX
	default:
		return windows.InvalidHandle, backend.NewError("socket", backend.ErrInvalid, fmt.Errorf("family %v", family))
	}
	switch typ {
	case backend.Stream:
		st, proto = windows.SOCK_STREAM, windows.IPPROTO_TCP
	case backend.Datagram:
		st, proto = windows.SOCK_DGRAM, windows.IPPROTO_UDP
	default:
		return windows.InvalidHandle, backend.NewError("socket", backend.ErrInvalid, fmt.Errorf("type %d", typ))
	}
	if family == backend.FamilyUnix {
		proto = 0
	}
	s, err := windows.WSASocket(af, st, proto, nil, 0, windows.WSA_FLAG_OVERLAPPED|windows.WSA_FLAG_NO_HANDLE_INHERIT)
	if err != nil {
		return windows.InvalidHandle, sysError("socket", err)
	}
	if err := b.prepareSocket(s, family, typ); err != nil {
		windows.Closesocket(s)
		return windows.InvalidHandle, sysError("socket", err)
	}
	b.fds[s] = &fdState{socket: true, family: family, typ: typ, keepAlive: -1}
	return s, nil
}

// prepareSocket associates s with the port and sets the modes Socket
// promises.
func (b *Backend) prepareSocket(s windows.Handle, family backend.Family, typ backend.SockType) error {
	if _, err := windows.CreateIoCompletionPort(s, b.port, keyIO, 0); err != nil {
		return err
	}
	if err := setNonblock(s, true); err != nil {
		return err
	}
	if family == backend.FamilyInet6 {
		if err := windows.SetsockoptInt(s, windows.IPPROTO_IPV6, windows.IPV6_V6ONLY, 0); err != nil {
			return err
		}
	}
	if typ == backend.Datagram && family != backend.FamilyUnix {
		off := uint32(0)
		var n uint32
		// Best effort: without it a recvfrom fails after an ICMP error.
		windows.WSAIoctl(s, windows.SIO_UDP_CONNRESET, (*byte)(unsafe.Pointer(&off)), 4, nil, 0, &n, nil, 0)
	}
	return nil
}

// dropSocketLocked closes a socket the backend made for itself (an AcceptEx
// socket whose accept failed).
func (b *Backend) dropSocketLocked(s windows.Handle) {
	if s == windows.InvalidHandle {
		return
	}
	delete(b.fds, s)
	windows.Closesocket(s)
}

// fdLocked returns the state of fd, or a zero one for a descriptor this
// backend did not make (treated as a socket of unknown family).
func (b *Backend) fdInfo(fd backend.FD) fdState {
	b.mu.Lock()
	defer b.mu.Unlock()
	if st := b.fds[windows.Handle(fd)]; st != nil {
		return *st
	}
	return fdState{socket: true}
}

// Bind binds fd to a (an IPv4 address on an IPv6 socket is mapped).
func (b *Backend) Bind(fd backend.FD, a backend.Addr) error {
	sa, err := toSockaddr(a, b.fdInfo(fd).family)
	if err != nil {
		return err
	}
	return sysError("bind", windows.Bind(windows.Handle(fd), sa))
}

// Listen marks fd listening; backlog <= 0 means SOMAXCONN.
func (b *Backend) Listen(fd backend.FD, backlog int) error {
	if backlog <= 0 {
		backlog = windows.SOMAXCONN
	}
	if err := windows.Listen(windows.Handle(fd), backlog); err != nil {
		return sysError("listen", err)
	}
	b.mu.Lock()
	if st := b.fds[windows.Handle(fd)]; st != nil {
		st.listening = true
	}
	b.mu.Unlock()
	return nil
}

// LocalAddr returns getsockname.
func (b *Backend) LocalAddr(fd backend.FD) (backend.Addr, error) {
	sa, err := windows.Getsockname(windows.Handle(fd))
	if err != nil {
		return backend.Addr{}, sysError("getsockname", err)
	}
	return fromSockaddr(sa), nil
}

// PeerAddr returns getpeername.
func (b *Backend) PeerAddr(fd backend.FD) (backend.Addr, error) {
	sa, err := windows.Getpeername(windows.Handle(fd))
	if err != nil {
		return backend.Addr{}, sysError("getpeername", err)
	}
	return fromSockaddr(sa), nil
}

// SetOption sets opt. Windows differences: OptKeepAlive sets the idle time
// and interval with SIO_KEEPALIVE_VALS; OptReusePort does not exist
// (ErrUnsupported); OptReuseAddr on a stream socket is recorded but not
// passed to Windows, whose SO_REUSEADDR lets another socket take over a
// port in use, while what Unix programs want from it (binding while old
// connections sit in TIME_WAIT) is Windows' default; on a datagram socket
// (sharing a multicast port) it is SO_REUSEADDR.
func (b *Backend) SetOption(fd backend.FD, opt backend.Option, value int) error {
	s := windows.Handle(fd)
	info := b.fdInfo(fd)
	var err error
	switch opt {
	case backend.OptNoDelay:
		err = windows.SetsockoptInt(s, windows.IPPROTO_TCP, windows.TCP_NODELAY, boolInt(value))
	case backend.OptKeepAlive:
		err = setKeepAlive(s, value)
		if err == nil {
			b.updateFD(fd, func(st *fdState) { st.keepAlive = max(value, 0) })
		}
	case backend.OptLinger:
		l := windows.Linger{}
		if value >= 0 {
			l.Onoff, l.Linger = 1, int32(min(value, 0xFFFF))
		}
		err = windows.SetsockoptLinger(s, windows.SOL_SOCKET, windows.SO_LINGER, &l)
	case backend.OptReuseAddr:
		if info.typ == backend.Datagram {
			err = windows.SetsockoptInt(s, windows.SOL_SOCKET, windows.SO_REUSEADDR, boolInt(value))
		} else {
			b.updateFD(fd, func(st *fdState) { st.reuseAddr = boolInt(value) })
		}
	case backend.OptReusePort:
		return backend.NewError("setsockopt", backend.ErrUnsupported, errors.New("no SO_REUSEPORT on Windows"))
	case backend.OptBroadcast:
		err = windows.SetsockoptInt(s, windows.SOL_SOCKET, windows.SO_BROADCAST, boolInt(value))
	case backend.OptRecvBuffer:
		err = windows.SetsockoptInt(s, windows.SOL_SOCKET, windows.SO_RCVBUF, value)
	case backend.OptSendBuffer:
		err = windows.SetsockoptInt(s, windows.SOL_SOCKET, windows.SO_SNDBUF, value)
	case backend.OptV6Only:
		err = windows.SetsockoptInt(s, windows.IPPROTO_IPV6, windows.IPV6_V6ONLY, boolInt(value))
	case backend.OptMulticastLoop, backend.OptMulticastTTL:
		level, name := multicastOpt(info.family, opt)
		err = windows.SetsockoptInt(s, level, name, value)
	case backend.OptError:
		return backend.NewError("setsockopt", backend.ErrInvalid, errors.New("OptError is read only"))
	default:
		return backend.NewError("setsockopt", backend.ErrInvalid, fmt.Errorf("option %d", opt))
	}
	return sysError("setsockopt", err)
}

// Option reads opt.
func (b *Backend) Option(fd backend.FD, opt backend.Option) (int, error) {
	s := windows.Handle(fd)
	info := b.fdInfo(fd)
	get := func(level, name int) (int, error) {
		v, err := windows.GetsockoptInt(s, level, name)
		return v, sysError("getsockopt", err)
	}
	switch opt {
	case backend.OptNoDelay:
		v, err := get(windows.IPPROTO_TCP, windows.TCP_NODELAY)
		return boolInt(v & 0xFF), err
	case backend.OptKeepAlive:
		on, err := get(windows.SOL_SOCKET, windows.SO_KEEPALIVE)
		if err != nil || on&0xFF == 0 {
			return 0, err
		}
		if idle, err := windows.GetsockoptInt(s, windows.IPPROTO_TCP, windows.TCP_KEEPIDLE); err == nil && idle > 0 {
			return idle, nil
		}
		if info.keepAlive > 0 {
			return info.keepAlive, nil
		}
		return 1, nil // on, idle time unknown to this Windows
	case backend.OptLinger:
		return getLinger(s)
	case backend.OptReuseAddr:
		if info.typ == backend.Datagram {
			v, err := get(windows.SOL_SOCKET, windows.SO_REUSEADDR)
			return boolInt(v), err
		}
		return info.reuseAddr, nil
	case backend.OptReusePort:
		return 0, backend.NewError("getsockopt", backend.ErrUnsupported, errors.New("no SO_REUSEPORT on Windows"))
	case backend.OptBroadcast:
		v, err := get(windows.SOL_SOCKET, windows.SO_BROADCAST)
		return boolInt(v), err
	case backend.OptRecvBuffer:
		return get(windows.SOL_SOCKET, windows.SO_RCVBUF)
	case backend.OptSendBuffer:
		return get(windows.SOL_SOCKET, windows.SO_SNDBUF)
	case backend.OptV6Only:
		v, err := get(windows.IPPROTO_IPV6, windows.IPV6_V6ONLY)
		return boolInt(v), err
	case backend.OptMulticastLoop:
		level, name := multicastOpt(info.family, opt)
		v, err := get(level, name)
		return boolInt(v), err
	case backend.OptMulticastTTL:
		level, name := multicastOpt(info.family, opt)
		return get(level, name)
	case backend.OptError:
		return get(windows.SOL_SOCKET, soError)
	}
	return 0, backend.NewError("getsockopt", backend.ErrInvalid, fmt.Errorf("option %d", opt))
}

// updateFD changes the recorded state of fd, if the backend made it.
func (b *Backend) updateFD(fd backend.FD, f func(*fdState)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if st := b.fds[windows.Handle(fd)]; st != nil {
		f(st)
	}
}

// setKeepAlive turns keep-alive on with idle time and interval secs
// (SIO_KEEPALIVE_VALS, every Windows since 2000), or off.
func setKeepAlive(s windows.Handle, secs int) error {
	if secs <= 0 {
		return windows.SetsockoptInt(s, windows.SOL_SOCKET, windows.SO_KEEPALIVE, 0)
	}
	if err := windows.SetsockoptInt(s, windows.SOL_SOCKET, windows.SO_KEEPALIVE, 1); err != nil {
		return err
	}
	ms := uint32(min(secs, 1<<22) * 1000)
	ka := windows.TCPKeepalive{OnOff: 1, Time: ms, Interval: ms}
	var n uint32
	return windows.WSAIoctl(s, windows.SIO_KEEPALIVE_VALS, (*byte)(unsafe.Pointer(&ka)), uint32(unsafe.Sizeof(ka)),
		nil, 0, &n, nil, 0)
}

// getLinger reads SO_LINGER (Windows' struct linger has two u_shorts): -1
// when off.
func getLinger(s windows.Handle) (int, error) {
	var l struct{ Onoff, Linger uint16 }
	n := int32(unsafe.Sizeof(l))
	if err := windows.Getsockopt(s, windows.SOL_SOCKET, windows.SO_LINGER, (*byte)(unsafe.Pointer(&l)), &n); err != nil {
		return 0, sysError("getsockopt", err)
	}
	if l.Onoff == 0 {
		return -1, nil
	}
	return int(l.Linger), nil
}

// multicastOpt picks the IPv4 or IPv6 form of a multicast option.
func multicastOpt(family backend.Family, opt backend.Option) (level, name int) {
	v6 := family == backend.FamilyInet6
	switch {
	case opt == backend.OptMulticastLoop && v6:
		return windows.IPPROTO_IPV6, windows.IPV6_MULTICAST_LOOP
	case opt == backend.OptMulticastLoop:
		return windows.IPPROTO_IP, windows.IP_MULTICAST_LOOP
	case v6:
		return windows.IPPROTO_IPV6, windows.IPV6_MULTICAST_HOPS
	}
	return windows.IPPROTO_IP, windows.IP_MULTICAST_TTL
}

// Shutdown shuts down one or both halves.
func (b *Backend) Shutdown(fd backend.FD, how backend.ShutdownHow) error {
	var h int
	switch how {
	case backend.ShutdownRead:
		h = windows.SHUT_RD
	case backend.ShutdownWrite:
		h = windows.SHUT_WR
	case backend.ShutdownBoth:
		h = windows.SHUT_RDWR
	default:
		return backend.NewError("shutdown", backend.ErrInvalid, fmt.Errorf("how %d", how))
	}
	return sysError("shutdown", windows.Shutdown(windows.Handle(fd), h))
}

// JoinGroup joins a multicast group: IP_ADD_MEMBERSHIP (the interface given
// as its index in network byte order, which Windows accepts in place of an
// address) or IPV6_JOIN_GROUP.
func (b *Backend) JoinGroup(fd backend.FD, group netip.Addr, ifindex int) error {
	if !group.IsMulticast() {
		return backend.NewError("join group", backend.ErrInvalid, fmt.Errorf("%v is not multicast", group))
	}
	s := windows.Handle(fd)
	if group.Is4() || group.Is4In6() {
		m := &windows.IPMreq{Multiaddr: group.Unmap().As4()}
		i := uint32(ifindex)
		m.Interface = [4]byte{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}
		return sysError("join group", windows.SetsockoptIPMreq(s, windows.IPPROTO_IP, windows.IP_ADD_MEMBERSHIP, m))
	}
	m := &windows.IPv6Mreq{Multiaddr: group.As16(), Interface: uint32(ifindex)}
	return sysError("join group", windows.SetsockoptIPv6Mreq(s, windows.IPPROTO_IPV6, windows.IPV6_JOIN_GROUP, m))
}

// OpenFile opens path with FILE_FLAG_OVERLAPPED (not inheritable) and
// associates it with the port. OpenAppend opens with FILE_APPEND_DATA
// instead of FILE_WRITE_DATA; a perm without owner write makes a new file
// read-only.
func (b *Backend) OpenFile(path string, flags backend.OpenFlags, perm uint32) (backend.FD, error) {
	var access uint32
	switch flags & (backend.OpenRead | backend.OpenWrite) {
	case backend.OpenRead:
		access = windows.GENERIC_READ
	case backend.OpenWrite:
		access = windows.GENERIC_WRITE
	case backend.OpenRead | backend.OpenWrite:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	default:
		return backend.InvalidFD, backend.NewError("open", backend.ErrInvalid, errors.New("neither OpenRead nor OpenWrite"))
	}
	if flags&backend.OpenAppend != 0 && access&windows.GENERIC_WRITE != 0 {
		access = access&^windows.GENERIC_WRITE | windows.FILE_APPEND_DATA | windows.FILE_WRITE_ATTRIBUTES |
			windows.FILE_WRITE_EA | windows.STANDARD_RIGHTS_WRITE | windows.SYNCHRONIZE
	}
	var disp uint32
	switch {
	case flags&(backend.OpenCreate|backend.OpenExclusive) == backend.OpenCreate|backend.OpenExclusive:
		disp = windows.CREATE_NEW
	case flags&(backend.OpenCreate|backend.OpenTruncate) == backend.OpenCreate|backend.OpenTruncate:
		disp = windows.CREATE_ALWAYS
	case flags&backend.OpenCreate != 0:
		disp = windows.OPEN_ALWAYS
	case flags&backend.OpenTruncate != 0:
		disp = windows.TRUNCATE_EXISTING
	default:
		disp = windows.OPEN_EXISTING
	}
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL | windows.FILE_FLAG_OVERLAPPED)
	if flags&backend.OpenCreate != 0 && perm&0o200 == 0 {
		attrs |= windows.FILE_ATTRIBUTE_READONLY
	}
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return backend.InvalidFD, backend.NewError("open "+path, backend.ErrInvalid, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return backend.InvalidFD, backend.ErrClosed
	}
	h, err := windows.CreateFile(name, access,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, disp, attrs, 0)
	if err != nil {
		return backend.InvalidFD, sysError("open "+path, err)
	}
	if _, err := windows.CreateIoCompletionPort(h, b.port, keyIO, 0); err != nil {
		windows.CloseHandle(h)
		return backend.InvalidFD, sysError("open "+path, err)
	}
	b.fds[h] = &fdState{appendOnly: flags&backend.OpenAppend != 0, keepAlive: -1}
	return backend.FD(h), nil
}

// CloseFD closes fd synchronously and forgets its state.
func (b *Backend) CloseFD(fd backend.FD) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closeFDLocked(windows.Handle(fd), b.fds[windows.Handle(fd)])
}

// closeFDLocked forgets h and closes it: closesocket for a socket (after
// switching it back to blocking mode if a lingering close would otherwise
// fail with WSAEWOULDBLOCK), CloseHandle for a file. A descriptor the
// backend does not know (closed already, or never its own) is left alone:
// its handle value may have been reused by anything in the process.
func (b *Backend) closeFDLocked(h windows.Handle, fd *fdState) error {
	if fd == nil {
		return backend.NewError("close", backend.ErrClosed, windows.ERROR_INVALID_HANDLE)
	}
	if b.fds[h] == fd {
		delete(b.fds, h)
	}
	if !fd.socket {
		return sysError("close", windows.CloseHandle(h))
	}
	err := windows.Closesocket(h)
	if err == windows.WSAEWOULDBLOCK {
		setNonblock(h, false)
		err = windows.Closesocket(h)
	}
	return sysError("close", err)
}

func boolInt(v int) int {
	if v != 0 {
		return 1
	}
	return 0
}

// soError is SO_ERROR, which x/sys/windows does not define.
const soError = 0x1007
