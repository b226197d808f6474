//go:build unix

package blitz_test

import "syscall"

// mapBig maps n bytes of private anonymous memory, read-only unless
// writable, without reserving swap for it where the system allows.
func mapBig(n int, writable bool) ([]byte, error) {
	prot := syscall.PROT_READ
	if writable {
		prot |= syscall.PROT_WRITE
	}
	return syscall.Mmap(-1, 0, n, prot, syscall.MAP_PRIVATE|syscall.MAP_ANON|mapNoReserve)
}

// unmapBig removes a mapping of mapBig.
func unmapBig(b []byte) error { return syscall.Munmap(b) }
