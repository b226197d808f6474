//go:build !linux

package uring

import (
	"github.com/blitz-go/blitz/backend"
)

// Backend is the io_uring backend. io_uring exists only on Linux: here New
// always fails and no Backend is ever made.
type Backend struct {
	backend.Backend
}

// New returns an error wrapping backend.ErrUnsupported: io_uring is Linux
// only.
func New(opts Options) (*Backend, error) {
	return nil, backend.NewError("io_uring_setup", backend.ErrUnsupported, nil)
}

// DenySetupForTest is Linux only; here it returns an error wrapping
// backend.ErrUnsupported (see the Linux version).
func DenySetupForTest() error {
	return backend.NewError("seccomp", backend.ErrUnsupported, nil)
}
