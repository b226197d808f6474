//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package unixio

import (
	"fmt"
	"net/netip"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// Domain returns the AF_ constant of f.
func Domain(f backend.Family) (int, error) {
	switch f {
	case backend.FamilyInet4:
		return unix.AF_INET, nil
	case backend.FamilyInet6:
		return unix.AF_INET6, nil
	case backend.FamilyUnix:
		return unix.AF_UNIX, nil
	}
	return 0, backend.NewError("socket", backend.ErrInvalid, fmt.Errorf("family %v", f))
}

// Sockaddr converts a to the x/sys form, for the synchronous calls (bind,
// connect on epoll). An IPv4 address given to an IPv6 socket must be
// IPv4-mapped by the caller; Sockaddr converts by a's own family.
func Sockaddr(a backend.Addr) (unix.Sockaddr, error) {
	switch a.Family {
	case backend.FamilyInet4:
		ip := a.IP.Addr().Unmap()
		if !ip.Is4() {
			return nil, backend.NewError("sockaddr", backend.ErrInvalid, fmt.Errorf("%v is not IPv4", a.IP))
		}
		return &unix.SockaddrInet4{Port: int(a.IP.Port()), Addr: ip.As4()}, nil
	case backend.FamilyInet6:
		ip := a.IP.Addr()
		sa := &unix.SockaddrInet6{Port: int(a.IP.Port()), Addr: ip.As16()}
		if z := ip.Zone(); z != "" {
			sa.ZoneId = zoneIndex(z)
		}
		return sa, nil
	case backend.FamilyUnix:
		return &unix.SockaddrUnix{Name: a.Path}, nil
	}
	return nil, backend.NewError("sockaddr", backend.ErrInvalid, fmt.Errorf("no address"))
}

// FromSockaddr converts the x/sys form back; an unknown form is the zero
// Addr.
func FromSockaddr(sa unix.Sockaddr) backend.Addr {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return backend.AddrPort(netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port)))
	case *unix.SockaddrInet6:
		ip := netip.AddrFrom16(sa.Addr)
		if sa.ZoneId != 0 {
			ip = ip.WithZone(zoneName(sa.ZoneId))
		}
		return backend.Addr{Family: backend.FamilyInet6, IP: netip.AddrPortFrom(ip, uint16(sa.Port))}
	case *unix.SockaddrUnix:
		return backend.UnixAddr(sa.Name)
	}
	return backend.Addr{}
}
