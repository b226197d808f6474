package unixio

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident counts the resident pages of buf (mincore).
func resident(t *testing.T, buf []byte) int {
	t.Helper()
	page := unix.Getpagesize()
	vec := make([]byte, (len(buf)+page-1)/page)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(buf))), uintptr(len(buf)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// TestReleasePages: the whole pages inside a buffer leave the resident set
// and read as zeros, partial pages at its ends keep their bytes, and the
// memory serves again.
func TestReleasePages(t *testing.T) {
	page := unix.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 8*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANONYMOUS|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	for i := range mem {
		mem[i] = 0xa5
	}
	// From the middle of page 1 to the middle of page 6: pages 2 to 5 are
	// whole inside it.
	buf := mem[page+page/2 : 6*page+page/2]
	if err := ReleasePages(buf); err != nil {
		t.Fatal(err)
	}
	if got := resident(t, mem); got != 4 {
		t.Fatalf("%d of 8 pages resident, want 4 (pages 0, 1, 6, 7)", got)
	}
	for i, b := range mem {
		whole := i >= 2*page && i < 6*page
		if whole && b != 0 || !whole && b != 0xa5 {
			t.Fatalf("byte %d is %#x after the release", i, b)
		}
	}
	buf[len(buf)/2] = 7
	if buf[len(buf)/2] != 7 {
		t.Fatal("released memory does not keep a write")
	}
	// Nothing whole inside: nothing released, no error.
	if err := ReleasePages(mem[10 : page-10]); err != nil {
		t.Fatal(err)
	}
	if err := ReleasePages(nil); err != nil {
		t.Fatal(err)
	}
}
