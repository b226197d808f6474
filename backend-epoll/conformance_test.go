package epoll_test

import (
	"errors"
	"testing"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/backend-epoll"
	"github.com/blitz-go/blitz/backend/backendtest"
)

// newBackend makes a epoll backend; where epoll does not exist the test skips.
func newBackend(t testing.TB) backend.Backend {
	b, err := epoll.New()
	if errors.Is(err, backend.ErrUnsupported) {
		t.Skipf("epoll: %v", err)
	}
	if err != nil {
		t.Fatalf("epoll.New: %v", err)
	}
	return b
}

func TestConformance(t *testing.T) {
	newBackend(t).Close()
	backendtest.Run(t, newBackend)
}
