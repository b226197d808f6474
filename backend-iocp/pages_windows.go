//go:build windows

package iocp

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// procDiscardVirtualMemory is kernel32's DiscardVirtualMemory (Windows 8.1
// and later).
var procDiscardVirtualMemory = windows.NewLazySystemDLL("kernel32.dll").NewProc("DiscardVirtualMemory")

// releasePages gives the whole pages inside buf back to the system; a
// partial page at either end is left alone. The memory stays committed and
// usable, its contents undefined (old bytes or zeros): it leaves the
// process's working set at once, and a later write costs a page fault.
//
// The Go heap reserves its memory in arenas of a few MiB, so a buffer run
// may span two reservations, which one call cannot cover: a range the
// system refuses whole is released region by region (VirtualQuery). A
// failure leaves those pages as they were.
//
// buf must be memory nobody reads or writes meanwhile, the kernel
// included. Any goroutine may call it.
func releasePages(buf []byte) {
	if len(buf) == 0 {
		return
	}
	page := uintptr(windows.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	lo := (start + page - 1) &^ (page - 1)
	hi := (start + uintptr(len(buf))) &^ (page - 1)
	if hi <= lo || discard(lo, hi-lo) {
		return
	}
	for at := lo; at < hi; {
		var mbi windows.MemoryBasicInformation
		if windows.VirtualQuery(at, &mbi, unsafe.Sizeof(mbi)) != nil || mbi.BaseAddress+mbi.RegionSize <= at {
			return
		}
		end := min(hi, mbi.BaseAddress+mbi.RegionSize)
		discard(at, end-at)
		at = end
	}
}

// discard releases the n bytes of whole pages at addr, within one region,
// and reports whether the system took them. DiscardVirtualMemory does that
// in one call; where it is missing, the pages are reset (VirtualAlloc with
// MEM_RESET: not written to the paging file) and then taken out of the
// working set (VirtualUnlock of pages that are not locked).
func discard(addr, n uintptr) bool {
	if procDiscardVirtualMemory.Find() == nil {
		r, _, _ := procDiscardVirtualMemory.Call(addr, n)
		return r == 0 // ERROR_SUCCESS
	}
	if _, err := windows.VirtualAlloc(addr, n, windows.MEM_RESET, windows.PAGE_READWRITE); err != nil {
		return false
	}
	_ = windows.VirtualUnlock(addr, n) // fails with ERROR_NOT_LOCKED, having emptied the working set of the range
	return true
}
