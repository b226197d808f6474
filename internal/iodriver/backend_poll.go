//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package iodriver

import (
	"github.com/blitz-go/blitz/backend"
	poll "github.com/blitz-go/blitz/backend-poll"
)

// newPoll starts a poll(2) backend.
func newPoll() (backend.Backend, error) {
	b, err := poll.New()
	if err != nil {
		return nil, err
	}
	return b, nil
}
