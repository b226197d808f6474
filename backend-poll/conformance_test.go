package poll_test

import (
	"errors"
	"testing"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/backend-poll"
	"github.com/blitz-go/blitz/backend/backendtest"
)

// newBackend makes a poll backend; where poll(2) does not exist the test
// skips.
func newBackend(t testing.TB) backend.Backend {
	b, err := poll.New()
	if errors.Is(err, backend.ErrUnsupported) {
		t.Skipf("poll: %v", err)
	}
	if err != nil {
		t.Fatalf("poll.New: %v", err)
	}
	return b
}

func TestConformance(t *testing.T) {
	newBackend(t).Close()
	backendtest.Run(t, newBackend)
}

func TestName(t *testing.T) {
	b := newBackend(t)
	defer b.Close()
	if got := b.Name(); got != "poll" {
		t.Fatalf("Name() = %q, want poll", got)
	}
}
