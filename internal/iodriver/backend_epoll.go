//go:build linux && !blitz_noepoll

package iodriver

import (
	"github.com/blitz-go/blitz/backend"
	epoll "github.com/blitz-go/blitz/backend-epoll"
)

// newEpoll starts an epoll backend.
func newEpoll() (backend.Backend, error) {
	b, err := epoll.New()
	if err != nil {
		return nil, err
	}
	return b, nil
}
