//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package unixio_test

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
)

// ExampleError converts a system call's error once, at the backend
// boundary: the result matches the backend sentinel and the errno.
func ExampleError() {
	err := unixio.Error("recv", syscall.ECONNRESET)
	fmt.Println(errors.Is(err, backend.ErrConnReset), errors.Is(err, syscall.ECONNRESET))
	fmt.Println(unixio.Error("recv", nil))
	// Output:
	// true true
	// <nil>
}
