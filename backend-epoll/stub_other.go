//go:build !linux

package epoll

import (
	"fmt"

	"github.com/blitz-go/blitz/backend"
)

// New reports that epoll exists only on Linux.
func New() (backend.Backend, error) {
	return nil, fmt.Errorf("epoll: %w", backend.ErrUnsupported)
}
