//go:build unix

package iodriver

import (
	"os"
	"syscall"
)

// pollFile returns a non-blocking duplicate of fd as an os.File, which Go
// registers with its poller; nil if fd cannot be duplicated.
func pollFile(fd int) *os.File {
	syscall.ForkLock.RLock()
	dup, err := syscall.Dup(fd)
	if err == nil {
		syscall.CloseOnExec(dup)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil
	}
	if err := syscall.SetNonblock(dup, true); err != nil {
		_ = syscall.Close(dup)
		return nil
	}
	return os.NewFile(uintptr(dup), "blitz-ring")
}
