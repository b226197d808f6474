package unixio

import (
	"fmt"
	"net/netip"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// EncodeRaw writes a into raw in the kernel's layout and returns its
// length, for system calls and io_uring operations that take a sockaddr
// pointer (connect, sendmsg). raw must stay reachable until the kernel is
// done with it: keep it in the op's record, never on a stack.
func EncodeRaw(a backend.Addr, raw *unix.RawSockaddrAny) (uint32, error) {
	*raw = unix.RawSockaddrAny{}
	switch a.Family {
	case backend.FamilyInet4:
		ip := a.IP.Addr().Unmap()
		if !ip.Is4() {
			return 0, backend.NewError("sockaddr", backend.ErrInvalid, fmt.Errorf("%v is not IPv4", a.IP))
		}
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(raw))
		sa.Family = unix.AF_INET
		putPort(&sa.Port, a.IP.Port())
		sa.Addr = ip.As4()
		return unix.SizeofSockaddrInet4, nil
	case backend.FamilyInet6:
		sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(raw))
		sa.Family = unix.AF_INET6
		putPort(&sa.Port, a.IP.Port())
		sa.Addr = a.IP.Addr().As16()
		if z := a.IP.Addr().Zone(); z != "" {
			sa.Scope_id = zoneIndex(z)
		}
		return unix.SizeofSockaddrInet6, nil
	case backend.FamilyUnix:
		sa := (*unix.RawSockaddrUnix)(unsafe.Pointer(raw))
		sa.Family = unix.AF_UNIX
		name := a.Path
		if len(name) >= len(sa.Path) {
			return 0, backend.NewError("sockaddr", backend.ErrInvalid, fmt.Errorf("unix path of %d bytes", len(name)))
		}
		for i := 0; i < len(name); i++ {
			sa.Path[i] = int8(name[i])
		}
		if len(name) > 0 && name[0] == '@' {
			sa.Path[0] = 0 // abstract: no terminating NUL counted
			return uint32(unsafe.Offsetof(sa.Path)) + uint32(len(name)), nil
		}
		n := uint32(unsafe.Offsetof(sa.Path)) + uint32(len(name))
		if len(name) > 0 {
			n++ // the terminating NUL
		}
		return n, nil
	}
	return 0, backend.NewError("sockaddr", backend.ErrInvalid, fmt.Errorf("no address"))
}

// DecodeRaw reads the first n bytes of raw, as the kernel wrote them
// (accept, recvmsg), into an Addr; an unknown family is the zero Addr.
func DecodeRaw(raw *unix.RawSockaddrAny, n uint32) backend.Addr {
	switch raw.Addr.Family {
	case unix.AF_INET:
		sa := (*unix.RawSockaddrInet4)(unsafe.Pointer(raw))
		return backend.AddrPort(netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), getPort(&sa.Port)))
	case unix.AF_INET6:
		sa := (*unix.RawSockaddrInet6)(unsafe.Pointer(raw))
		ip := netip.AddrFrom16(sa.Addr)
		if sa.Scope_id != 0 {
			ip = ip.WithZone(zoneName(sa.Scope_id))
		}
		return backend.Addr{Family: backend.FamilyInet6, IP: netip.AddrPortFrom(ip, getPort(&sa.Port))}
	case unix.AF_UNIX:
		sa := (*unix.RawSockaddrUnix)(unsafe.Pointer(raw))
		off := uint32(unsafe.Offsetof(sa.Path))
		if n <= off {
			return backend.UnixAddr("") // unnamed
		}
		pl := int(n - off)
		pl = min(pl, len(sa.Path))
		b := make([]byte, 0, pl)
		for i := 0; i < pl; i++ {
			c := byte(sa.Path[i])
			if c == 0 {
				if i == 0 {
					c = '@' // abstract
				} else {
					break
				}
			}
			b = append(b, c)
		}
		return backend.UnixAddr(string(b))
	}
	return backend.Addr{}
}

// putPort and getPort store a port in network byte order in a uint16 field.
func putPort(p *uint16, port uint16) {
	b := (*[2]byte)(unsafe.Pointer(p))
	b[0], b[1] = byte(port>>8), byte(port)
}

func getPort(p *uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(p))
	return uint16(b[0])<<8 | uint16(b[1])
}
