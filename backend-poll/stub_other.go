//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix)

package poll

import (
	"fmt"

	"github.com/blitz-go/blitz/backend"
)

// New reports that poll(2) exists only on Unix systems.
func New() (backend.Backend, error) {
	return nil, fmt.Errorf("poll: %w", backend.ErrUnsupported)
}
