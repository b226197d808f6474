//go:build solaris || aix

package iodriver

import (
	"fmt"

	"github.com/blitz-go/blitz/backend"
)

// openBackend starts poll(2), the one backend of illumos, Solaris and AIX
// (they have no epoll or kqueue; illumos's event ports and AIX's pollset
// have no backend yet).
func openBackend(name string) (backend.Backend, error) {
	if name != Auto && name != Poll {
		return nil, fmt.Errorf("%w: %q is not a backend of this platform (poll, none)", ErrBackend, name)
	}
	return wrapBackendErr(Poll, newPoll)
}
