//go:build !(darwin || dragonfly || freebsd || netbsd || openbsd)

package kqueue

import (
	"fmt"

	"github.com/blitz-go/blitz/backend"
)

// New reports that kqueue exists only on macOS and the BSDs.
func New() (backend.Backend, error) {
	return nil, fmt.Errorf("kqueue: %w", backend.ErrUnsupported)
}
