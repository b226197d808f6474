//go:build windows

package blitz

import (
	"errors"
	"syscall"
)

// killFoundExited reports whether err, from killing a child, says it had
// exited already: TerminateProcess refuses a process that has ended with
// ERROR_ACCESS_DENIED, and a child of ours is not otherwise protected.
func killFoundExited(err error) bool {
	return errors.Is(err, syscall.ERROR_ACCESS_DENIED)
}
