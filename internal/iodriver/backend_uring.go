//go:build linux && !blitz_nouring

package iodriver

import (
	"github.com/blitz-go/blitz/backend"
	uring "github.com/blitz-go/blitz/backend-uring"
)

// newURing starts an io_uring backend with its defaults.
func newURing() (backend.Backend, error) {
	b, err := uring.New(uring.Options{})
	if err != nil {
		return nil, err
	}
	return b, nil
}
