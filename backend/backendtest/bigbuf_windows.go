package backendtest

import (
	"syscall"
	"unsafe"
)

var (
	kernel32     = syscall.NewLazyDLL("kernel32.dll")
	virtualAlloc = kernel32.NewProc("VirtualAlloc")
	virtualFree  = kernel32.NewProc("VirtualFree")
)

const (
	memCommit     = 0x1000
	memReserve    = 0x2000
	memRelease    = 0x8000
	pageReadonly  = 0x02
	pageReadWrite = 0x04
)

// mapBig reserves and commits n bytes with VirtualAlloc, read-only unless
// writable. The pages are zero and materialise only when touched, which
// only the few an op writes are.
func mapBig(n int, writable bool) ([]byte, error) {
	prot := uintptr(pageReadonly)
	if writable {
		prot = pageReadWrite
	}
	p, _, err := virtualAlloc.Call(0, uintptr(n), memReserve|memCommit, prot)
	if p == 0 {
		return nil, err
	}
	// The region is not Go memory: the collector never moves or frees it.
	base := *(*unsafe.Pointer)(unsafe.Pointer(&p))
	return unsafe.Slice((*byte)(base), n), nil
}

// unmapBig releases a region of mapBig.
func unmapBig(b []byte) error {
	r, _, err := virtualFree.Call(uintptr(unsafe.Pointer(unsafe.SliceData(b))), 0, memRelease)
	if r == 0 {
		return err
	}
	return nil
}
