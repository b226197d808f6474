//go:build linux && blitz_nouring

package iodriver

import (
	"fmt"

	"github.com/blitz-go/blitz/backend"
)

// newURing: io_uring is compiled out by the blitz_nouring build tag.
func newURing() (backend.Backend, error) {
	return nil, fmt.Errorf("%w: io_uring compiled out (build tag blitz_nouring)", backend.ErrUnsupported)
}
