//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd && !solaris && !aix && !windows

package iodriver

import (
	"fmt"

	"github.com/blitz-go/blitz/backend"
)

// openBackend: this platform has no I/O backend; the automatic choice runs
// without I/O.
func openBackend(name string) (backend.Backend, error) {
	if name == Auto {
		return nil, nil
	}
	return nil, fmt.Errorf("%w: no I/O backend on this platform", ErrBackend)
}
