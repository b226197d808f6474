package iodriver

import (
	"fmt"

	"github.com/blitz-go/blitz/backend"
	iocp "github.com/blitz-go/blitz/backend-iocp"
)

// openBackend starts IOCP, the one backend of Windows.
func openBackend(name string) (backend.Backend, error) {
	if name != Auto && name != IOCP {
		return nil, fmt.Errorf("%w: %q is not a backend of windows (iocp, none)", ErrBackend, name)
	}
	return wrapBackendErr(IOCP, func() (backend.Backend, error) {
		b, err := iocp.New()
		if err != nil {
			return nil, err
		}
		return b, nil
	})
}
