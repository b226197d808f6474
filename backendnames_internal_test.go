package blitz

import (
	"testing"

	"github.com/blitz-go/blitz/internal/iodriver"
)

// TestBackendNamesMatchDriver: the names of Config.Backend are the ones the
// I/O driver opens backends by, and ErrBackend is the driver's sentinel.
func TestBackendNamesMatchDriver(t *testing.T) {
	for _, c := range []struct{ ours, driver string }{
		{BackendAuto, iodriver.Auto}, {BackendURing, iodriver.URing}, {BackendEpoll, iodriver.Epoll},
		{BackendKqueue, iodriver.Kqueue}, {BackendPoll, iodriver.Poll}, {BackendIOCP, iodriver.IOCP},
	} {
		if c.ours != c.driver {
			t.Errorf("backend name %q, the I/O driver's %q", c.ours, c.driver)
		}
	}
	if ErrBackend != iodriver.ErrBackend {
		t.Error("ErrBackend is not the I/O driver's sentinel")
	}
}
