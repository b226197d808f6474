package runtime

import (
	"fmt"

	"github.com/blitz-go/blitz/backend"
)

// wrapBackendErr starts a forced backend, wrapping its error with ErrBackend.
func wrapBackendErr(name string, open func() (backend.Backend, error)) (backend.Backend, error) {
	b, err := open()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBackend, name, err)
	}
	return b, nil
}
