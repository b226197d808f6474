//go:build linux && blitz_noepoll

package iodriver

import (
	"fmt"

	"github.com/blitz-go/blitz/backend"
)

// newEpoll: epoll is compiled out by the blitz_noepoll build tag.
func newEpoll() (backend.Backend, error) {
	return nil, fmt.Errorf("%w: epoll compiled out (build tag blitz_noepoll)", backend.ErrUnsupported)
}
