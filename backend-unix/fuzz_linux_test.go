package unixio_test

import (
	"testing"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
	"golang.org/x/sys/unix"
)

// FuzzDecodeRaw feeds DecodeRaw the bytes a kernel could write (any family,
// any length): it must not panic, and what it decodes must encode back to
// an address that decodes the same.
func FuzzDecodeRaw(f *testing.F) {
	for _, a := range []backend.Addr{
		backend.UnixAddr("/tmp/s"), backend.UnixAddr("@abs"), backend.UnixAddr(""),
	} {
		var raw unix.RawSockaddrAny
		n, _ := unixio.EncodeRaw(a, &raw)
		f.Add((*[unix.SizeofSockaddrAny]byte)(unsafe.Pointer(&raw))[:n], n)
	}
	f.Add([]byte{2, 0, 0x1f, 0x90, 127, 0, 0, 1}, uint32(16))
	f.Fuzz(func(t *testing.T, b []byte, n uint32) {
		var raw unix.RawSockaddrAny
		copy((*[unix.SizeofSockaddrAny]byte)(unsafe.Pointer(&raw))[:], b)
		n = min(n, unix.SizeofSockaddrAny)
		a := unixio.DecodeRaw(&raw, n)
		if a.IsZero() {
			return
		}
		var again unix.RawSockaddrAny
		m, err := unixio.EncodeRaw(a, &again)
		if err != nil {
			if a.Family == backend.FamilyUnix {
				return // a path with a NUL inside, which a bind would refuse too
			}
			t.Fatalf("decoded %v does not encode: %v", a, err)
		}
		if b := unixio.DecodeRaw(&again, m); b != a {
			t.Fatalf("round trip: %v became %v", a, b)
		}
	})
}
