//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package unixio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// ReleasePages gives the whole pages inside buf back to the system; a
// partial page at either end is left alone. The memory stays mapped and
// usable. On Linux and AIX the pages leave the resident set at once and read
// as zeros until written again (MADV_DONTNEED); on macOS they leave the
// task's footprint at once (MADV_FREE_REUSABLE); on the BSDs and illumos
// the system takes them when it needs memory (MADV_FREE). Where the pages
// are not taken at once they keep their contents or read as zeros,
// whichever the system chose. Writing a page that was taken costs a page
// fault.
//
// buf must be memory nobody reads or writes meanwhile, the kernel included
// (a buffer it may receive into at any time is not such memory): data
// written before the call may be lost. Any goroutine may call it.
func ReleasePages(buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	page := uintptr(unix.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	lo := (start + page - 1) &^ (page - 1)
	hi := (start + uintptr(len(buf))) &^ (page - 1)
	if hi <= lo {
		return nil
	}
	return unix.Madvise(buf[lo-start:hi-start], releaseAdvice)
}
