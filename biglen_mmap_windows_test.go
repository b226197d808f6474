package blitz_test

import (
	"syscall"
	"unsafe"
)

var (
	bigKernel32     = syscall.NewLazyDLL("kernel32.dll")
	bigVirtualAlloc = bigKernel32.NewProc("VirtualAlloc")
	bigVirtualFree  = bigKernel32.NewProc("VirtualFree")
)

// mapBig reserves and commits n bytes with VirtualAlloc, read-only unless
// writable; the pages materialise only when touched.
func mapBig(n int, writable bool) ([]byte, error) {
	const memCommit, memReserve, pageReadonly, pageReadWrite = 0x1000, 0x2000, 0x02, 0x04
	prot := uintptr(pageReadonly)
	if writable {
		prot = pageReadWrite
	}
	p, _, err := bigVirtualAlloc.Call(0, uintptr(n), memReserve|memCommit, prot)
	if p == 0 {
		return nil, err
	}
	// The region is not Go memory: the collector never moves or frees it.
	base := *(*unsafe.Pointer)(unsafe.Pointer(&p))
	return unsafe.Slice((*byte)(base), n), nil
}

// unmapBig releases a region of mapBig.
func unmapBig(b []byte) error {
	const memRelease = 0x8000
	if r, _, err := bigVirtualFree.Call(uintptr(unsafe.Pointer(unsafe.SliceData(b))), 0, memRelease); r == 0 {
		return err
	}
	return nil
}
