//go:build windows

package iocp

import (
	"bytes"
	"testing"
	"time"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/windows"
)

// procQueryWorkingSetEx is kernel32's K32QueryWorkingSetEx: whether each
// page asked about is in the process's working set.
var procQueryWorkingSetEx = windows.NewLazySystemDLL("kernel32.dll").NewProc("K32QueryWorkingSetEx")

// workingSetExInfo is PSAPI_WORKING_SET_EX_INFORMATION: bit 0 of attrs is
// Valid (the page is in the working set).
type workingSetExInfo struct {
	addr  uintptr
	attrs uintptr
}

// residentPages counts the pages of buf in the working set.
func residentPages(t *testing.T, buf []byte) int {
	t.Helper()
	if err := procQueryWorkingSetEx.Find(); err != nil {
		t.Skip("K32QueryWorkingSetEx:", err)
	}
	page := uintptr(windows.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	if start%page != 0 {
		t.Fatalf("buffer at %#x is not page-aligned", start)
	}
	info := make([]workingSetExInfo, (uintptr(len(buf))+page-1)/page)
	for i := range info {
		info[i].addr = start + uintptr(i)*page
	}
	r, _, err := procQueryWorkingSetEx.Call(uintptr(windows.CurrentProcess()), uintptr(unsafe.Pointer(&info[0])), uintptr(len(info))*unsafe.Sizeof(info[0]))
	if r == 0 {
		t.Fatalf("QueryWorkingSetEx: %v", err)
	}
	n := 0
	for _, w := range info {
		n += int(w.attrs & 1)
	}
	return n
}

// TestReleasePages: the pages of a written buffer leave the working set,
// and the buffer serves again.
func TestReleasePages(t *testing.T) {
	page := windows.Getpagesize()
	buf := make([]byte, 32*page)
	for i := range buf {
		buf[i] = 1
	}
	if got := residentPages(t, buf); got != 32 {
		t.Fatalf("%d of 32 written pages in the working set", got)
	}
	releasePages(buf[1 : len(buf)-1]) // the partial pages at either end stay
	if got := residentPages(t, buf); got != 2 {
		t.Fatalf("%d pages in the working set after the release, want the 2 partial ones", got)
	}
	for i := range buf {
		buf[i] = 2
	}
	if !bytes.Equal(buf, bytes.Repeat([]byte{2}, len(buf))) {
		t.Fatal("released memory does not hold what was written after")
	}
}

// TestReleasePagesAcrossReservations: a range over two reservations side
// by side (as the Go heap's arenas may be) is released in both.
func TestReleasePagesAcrossReservations(t *testing.T) {
	const half = 64 << 10 // the allocation granularity
	base, err := windows.VirtualAlloc(0, 2*half, windows.MEM_RESERVE, windows.PAGE_NOACCESS)
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.VirtualFree(base, 0, windows.MEM_RELEASE); err != nil {
		t.Fatal(err)
	}
	for _, at := range []uintptr{base, base + half} {
		if _, err := windows.VirtualAlloc(at, half, windows.MEM_RESERVE|windows.MEM_COMMIT, windows.PAGE_READWRITE); err != nil {
			t.Skipf("two reservations side by side at %#x: %v", base, err)
		}
		defer windows.VirtualFree(at, 0, windows.MEM_RELEASE)
	}
	// The memory is the system's, not the Go heap's: a pointer to it
	// from its address moves nothing the collector tracks.
	p := *(*unsafe.Pointer)(unsafe.Pointer(&base))
	buf := unsafe.Slice((*byte)(p), 2*half)
	for i := range buf {
		buf[i] = 1
	}
	page := windows.Getpagesize()
	all := residentPages(t, buf)
	if all != 2*half/page {
		t.Fatalf("%d of %d written pages in the working set", all, 2*half/page)
	}
	releasePages(buf[half/2 : half+half/2])
	if got := residentPages(t, buf); got != half/page {
		t.Fatalf("%d pages in the working set after releasing half of them, want %d", got, half/page)
	}
}

// TestTrimIdle: after a burst, the backend's TrimIdle on the real clock
// gives back all but backend.BufferTrimKeep of the buffers the burst
// wrote, then returns 0; the buffers serve again with what is written
// into them.
func TestTrimIdle(t *testing.T) {
	x := newTB(t)
	page := windows.Getpagesize()
	if err := x.b.RegisterBufferGroup(1, 256, page); err != nil {
		t.Fatal(err)
	}
	if d := x.b.TrimIdle(); d != 0 {
		t.Fatalf("no buffer used yet: wait %v", d)
	}
	burst := func() []uint16 {
		ids := make([]uint16, 0, 200)
		for range 200 {
			id, buf, ok := x.b.takeBuffer(1)
			if !ok {
				t.Fatal("the group ran out of buffers")
			}
			for i := range buf {
				buf[i] = byte(id) | 1
			}
			ids = append(ids, id)
		}
		for _, id := range ids {
			if err := x.b.ReleaseBuffer(1, id); err != nil {
				t.Fatal(err)
			}
		}
		return ids
	}
	resident := func(ids []uint16) int {
		n := 0
		for _, id := range ids {
			if residentPages(t, x.b.Buffer(1, id)) > 0 {
				n++
			}
		}
		return n
	}
	ids := burst()
	if got := resident(ids); got != 200 {
		t.Fatalf("%d of 200 buffers resident after the burst", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		d := x.b.TrimIdle()
		if d == 0 {
			break
		}
		if d > backend.BufferTrimAfter {
			t.Fatalf("wait %v, longer than a window", d)
		}
		if time.Now().After(deadline) {
			t.Fatal("TrimIdle still asks to be called after 10 s of idleness")
		}
		time.Sleep(d)
	}
	if got := resident(ids); got != backend.BufferTrimKeep {
		t.Fatalf("%d buffers resident after the trim, want %d", got, backend.BufferTrimKeep)
	}
	for _, id := range burst() {
		if b := x.b.Buffer(1, id); !bytes.Equal(b, bytes.Repeat([]byte{byte(id) | 1}, len(b))) {
			t.Fatalf("buffer %d does not hold what was written", id)
		}
	}
	if d := x.b.TrimIdle(); d <= 0 {
		t.Fatalf("after new use: wait %v, want a window", d)
	}
}
