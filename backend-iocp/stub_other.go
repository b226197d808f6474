//go:build !windows

package iocp

import (
	"fmt"
	"runtime"

	"github.com/blitz-go/blitz/backend"
)

// Backend is the IOCP backend; it exists only on Windows.
type Backend struct{}

// New fails with an error wrapping backend.ErrUnsupported: I/O completion
// ports are Windows'.
func New() (*Backend, error) {
	return nil, backend.NewError("iocp", backend.ErrUnsupported, fmt.Errorf("IOCP is Windows only, not %s", runtime.GOOS))
}
