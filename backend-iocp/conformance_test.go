//go:build windows

package iocp

import (
	"errors"
	"testing"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/backend/backendtest"
)

// newBackend makes a backend for one test and closes it at the end (the
// suite closes it first; a second Close says ErrClosed).
func newBackend(tb testing.TB) backend.Backend {
	b, err := New()
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	tb.Cleanup(func() {
		if err := b.Close(); err != nil && !errors.Is(err, backend.ErrClosed) {
			tb.Errorf("Close: %v", err)
		}
	})
	return b
}

func TestConformance(t *testing.T) {
	backendtest.Run(t, newBackend)
}

func BenchmarkBackend(b *testing.B) {
	backendtest.Bench(b, newBackend)
}
