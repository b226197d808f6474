//go:build !unix

package backendtest

import (
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// poller is unavailable: no backend of this system is Pollable, so the
// polling tests skip before they make one.
type poller struct{}

func newPoller(t *testing.T, _ backend.FD) *poller {
	t.Skip("no Pollable backend on this system")
	return nil
}

func (*poller) await(*testing.T, time.Duration, func() bool) bool { return false }
