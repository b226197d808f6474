package backend

import (
	"net/netip"
	"strconv"
	"testing"
)

// TestKindString: every kind has its name; others print their number.
func TestKindString(t *testing.T) {
	for k := KindNop; k < kindEnd; k++ {
		if !k.Valid() || k.String() == "" || k.String()[0] == 'K' {
			t.Errorf("kind %d: Valid %v, String %q", k, k.Valid(), k.String())
		}
	}
	if KindRecv.String() != "recv" || KindAccept.String() != "accept" {
		t.Errorf("names: %q %q", KindRecv, KindAccept)
	}
	for _, k := range []Kind{0, kindEnd, 255} {
		if k.Valid() || k.String() != "Kind("+strconv.Itoa(int(k))+")" {
			t.Errorf("kind %d: Valid %v, String %q", k, k.Valid(), k.String())
		}
	}
}

// TestAddr: AddrPort picks the family by the address, String formats.
func TestAddr(t *testing.T) {
	a4 := AddrPort(netip.MustParseAddrPort("127.0.0.1:80"))
	a6 := AddrPort(netip.MustParseAddrPort("[::1]:80"))
	mapped := AddrPort(netip.MustParseAddrPort("[::ffff:127.0.0.1]:80"))
	u := UnixAddr("/tmp/s")
	for _, c := range []struct {
		a      Addr
		family Family
		s      string
	}{
		{a4, FamilyInet4, "127.0.0.1:80"},
		{a6, FamilyInet6, "[::1]:80"},
		{mapped, FamilyInet6, "[::ffff:127.0.0.1]:80"},
		{u, FamilyUnix, "unix:/tmp/s"},
		{Addr{}, 0, "<none>"},
	} {
		if c.a.Family != c.family || c.a.String() != c.s {
			t.Errorf("%v: family %v, String %q; want %v, %q", c.a, c.a.Family, c.a.String(), c.family, c.s)
		}
		if c.a.IsZero() != (c.family == 0) {
			t.Errorf("%v: IsZero %v", c.a, c.a.IsZero())
		}
	}
}

// TestFamilyString covers the names.
func TestFamilyString(t *testing.T) {
	for f, s := range map[Family]string{FamilyInet4: "inet4", FamilyInet6: "inet6", FamilyUnix: "unix", 9: "Family(9)"} {
		if f.String() != s {
			t.Errorf("%d: %q, want %q", f, f.String(), s)
		}
	}
}

// TestCapsHas: Has needs every bit asked for.
func TestCapsHas(t *testing.T) {
	c := CapPoll | CapUnixSockets
	if !c.Has(CapPoll) || !c.Has(CapPoll|CapUnixSockets) || c.Has(CapPoll|CapCancelFD) || !c.Has(0) {
		t.Errorf("Has is wrong for %b", c)
	}
}

// TestCompletionMore: More reads the flag.
func TestCompletionMore(t *testing.T) {
	c := Completion{Flags: More | HasBuffer}
	if !c.More() {
		t.Errorf("More() false with the flag")
	}
	c.Flags = HasBuffer
	if c.More() {
		t.Errorf("More() true without the flag")
	}
}
