//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package iodriver

import (
	"fmt"

	"github.com/blitz-go/blitz/backend"
	kqueue "github.com/blitz-go/blitz/backend-kqueue"
)

// openBackend starts kqueue, the automatic choice of darwin and the BSDs,
// or poll(2) when named.
func openBackend(name string) (backend.Backend, error) {
	if name == Poll {
		return wrapBackendErr(Poll, newPoll)
	}
	if name != Auto && name != Kqueue {
		return nil, fmt.Errorf("%w: %q is not a backend of this platform (kqueue, poll, none)", ErrBackend, name)
	}
	return wrapBackendErr(Kqueue, func() (backend.Backend, error) {
		b, err := kqueue.New()
		if err != nil {
			return nil, err
		}
		return b, nil
	})
}
