package kqueue_test

import (
	"errors"
	"testing"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/backend-kqueue"
	"github.com/blitz-go/blitz/backend/backendtest"
)

// newBackend makes a kqueue backend; where kqueue does not exist the test skips.
func newBackend(t testing.TB) backend.Backend {
	b, err := kqueue.New()
	if errors.Is(err, backend.ErrUnsupported) {
		t.Skipf("kqueue: %v", err)
	}
	if err != nil {
		t.Fatalf("kqueue.New: %v", err)
	}
	return b
}

func TestConformance(t *testing.T) {
	newBackend(t).Close()
	backendtest.Run(t, newBackend)
}
