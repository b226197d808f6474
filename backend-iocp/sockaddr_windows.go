//go:build windows

package iocp

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/windows"
)

// addrForFamily returns a in the form a socket of family takes: an IPv4
// address given to an IPv6 socket is IPv4-mapped.
func addrForFamily(a backend.Addr, family backend.Family) backend.Addr {
	if a.Family == backend.FamilyInet4 && family == backend.FamilyInet6 {
		ip := netip.AddrFrom16(a.IP.Addr().As16())
		return backend.Addr{Family: backend.FamilyInet6, IP: netip.AddrPortFrom(ip, a.IP.Port())}
	}
	return a
}

// encodeRaw writes a, converted for a socket of family, into rsa (which the
// caller keeps alive for as long as the kernel may read it) and returns its
// length.
func encodeRaw(a backend.Addr, family backend.Family, rsa *windows.RawSockaddrAny) (int32, error) {
	a = addrForFamily(a, family)
	*rsa = windows.RawSockaddrAny{}
	switch a.Family {
	case backend.FamilyInet4:
		ip := a.IP.Addr().Unmap()
		if !ip.Is4() {
			return 0, backend.NewError("sockaddr", backend.ErrInvalid, fmt.Errorf("%v is not IPv4", a.IP))
		}
		p := (*windows.RawSockaddrInet4)(unsafe.Pointer(rsa))
		p.Family = windows.AF_INET
		putPort(&p.Port, a.IP.Port())
		p.Addr = ip.As4()
		return int32(unsafe.Sizeof(*p)), nil
	case backend.FamilyInet6:
		p := (*windows.RawSockaddrInet6)(unsafe.Pointer(rsa))
		p.Family = windows.AF_INET6
		putPort(&p.Port, a.IP.Port())
		p.Addr = a.IP.Addr().As16()
		p.Scope_id = zoneIndex(a.IP.Addr().Zone())
		return int32(unsafe.Sizeof(*p)), nil
	case backend.FamilyUnix:
		p := (*windows.RawSockaddrUnix)(unsafe.Pointer(rsa))
		if len(a.Path) >= len(p.Path) {
			return 0, backend.NewError("sockaddr", backend.ErrInvalid, fmt.Errorf("unix path too long"))
		}
		p.Family = windows.AF_UNIX
		for i := 0; i < len(a.Path); i++ {
			p.Path[i] = int8(a.Path[i])
		}
		n := int32(2)
		if a.Path != "" {
			n += int32(len(a.Path)) + 1
		}
		return n, nil
	}
	return 0, backend.NewError("sockaddr", backend.ErrInvalid, fmt.Errorf("no address"))
}

// decodeRaw converts a sockaddr the kernel wrote; an unknown family is the
// zero Addr.
func decodeRaw(rsa *windows.RawSockaddrAny) backend.Addr {
	switch rsa.Addr.Family {
	case windows.AF_INET:
		p := (*windows.RawSockaddrInet4)(unsafe.Pointer(rsa))
		return backend.AddrPort(netip.AddrPortFrom(netip.AddrFrom4(p.Addr), getPort(&p.Port)))
	case windows.AF_INET6:
		p := (*windows.RawSockaddrInet6)(unsafe.Pointer(rsa))
		ip := netip.AddrFrom16(p.Addr)
		if p.Scope_id != 0 {
			ip = ip.WithZone(zoneName(p.Scope_id))
		}
		return backend.Addr{Family: backend.FamilyInet6, IP: netip.AddrPortFrom(ip, getPort(&p.Port))}
	case windows.AF_UNIX:
		p := (*windows.RawSockaddrUnix)(unsafe.Pointer(rsa))
		n := 0
		for n < len(p.Path) && p.Path[n] != 0 {
			n++
		}
		return backend.UnixAddr(string(unsafe.Slice((*byte)(unsafe.Pointer(&p.Path[0])), n)))
	}
	return backend.Addr{}
}

// toSockaddr converts a for the synchronous x/sys calls (bind).
func toSockaddr(a backend.Addr, family backend.Family) (windows.Sockaddr, error) {
	a = addrForFamily(a, family)
	switch a.Family {
	case backend.FamilyInet4:
		ip := a.IP.Addr().Unmap()
		if !ip.Is4() {
			return nil, backend.NewError("sockaddr", backend.ErrInvalid, fmt.Errorf("%v is not IPv4", a.IP))
		}
		return &windows.SockaddrInet4{Port: int(a.IP.Port()), Addr: ip.As4()}, nil
	case backend.FamilyInet6:
		ip := a.IP.Addr()
		return &windows.SockaddrInet6{Port: int(a.IP.Port()), Addr: ip.As16(), ZoneId: zoneIndex(ip.Zone())}, nil
	case backend.FamilyUnix:
		return &windows.SockaddrUnix{Name: a.Path}, nil
	}
	return nil, backend.NewError("sockaddr", backend.ErrInvalid, fmt.Errorf("no address"))
}

// fromSockaddr converts the x/sys form back.
func fromSockaddr(sa windows.Sockaddr) backend.Addr {
	switch sa := sa.(type) {
	case *windows.SockaddrInet4:
		return backend.AddrPort(netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port)))
	case *windows.SockaddrInet6:
		ip := netip.AddrFrom16(sa.Addr)
		if sa.ZoneId != 0 {
			ip = ip.WithZone(zoneName(sa.ZoneId))
		}
		return backend.Addr{Family: backend.FamilyInet6, IP: netip.AddrPortFrom(ip, uint16(sa.Port))}
	case *windows.SockaddrUnix:
		return backend.UnixAddr(sa.Name)
	}
	return backend.Addr{}
}

// putPort and getPort store a port in network byte order.
func putPort(p *uint16, port uint16) {
	b := (*[2]byte)(unsafe.Pointer(p))
	b[0], b[1] = byte(port>>8), byte(port)
}

func getPort(p *uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(p))
	return uint16(b[0])<<8 | uint16(b[1])
}

// zoneIndex returns the interface index of an IPv6 zone ("Ethernet" or "2").
func zoneIndex(zone string) uint32 {
	if zone == "" {
		return 0
	}
	if n, err := strconv.ParseUint(zone, 10, 32); err == nil {
		return uint32(n)
	}
	if ifi, err := net.InterfaceByName(zone); err == nil {
		return uint32(ifi.Index)
	}
	return 0
}

// zoneName returns the zone of an interface index: its name, or the number.
func zoneName(index uint32) string {
	if ifi, err := net.InterfaceByIndex(int(index)); err == nil {
		return ifi.Name
	}
	return strconv.FormatUint(uint64(index), 10)
}

// wildcard returns the unspecified address of family, port 0 (for binding
// a socket before ConnectEx).
func wildcard(family backend.Family) backend.Addr {
	switch family {
	case backend.FamilyInet4:
		return backend.AddrPort(netip.AddrPortFrom(netip.IPv4Unspecified(), 0))
	case backend.FamilyInet6:
		return backend.Addr{Family: backend.FamilyInet6, IP: netip.AddrPortFrom(netip.IPv6Unspecified(), 0)}
	}
	return backend.UnixAddr("")
}
