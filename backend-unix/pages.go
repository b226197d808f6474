//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package unixio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// ReleasePages gives the whole pages inside buf back to the system, so that
// they no longer count in the process's resident memory; a partial page at
// either end is left alone. The memory stays mapped and usable: on Linux
// and AIX it reads as zeros until written again (MADV_DONTNEED), on the BSDs
// and macOS it keeps its contents or reads as zeros, whichever the system
// chose (MADV_FREE). Writing it again costs a page fault per page.
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
