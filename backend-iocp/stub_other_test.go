//go:build !windows

package iocp

import (
	"errors"
	"testing"

	"github.com/blitz-go/blitz/backend"
)

func TestNewUnsupported(t *testing.T) {
	b, err := New()
	if b != nil || !errors.Is(err, backend.ErrUnsupported) {
		t.Fatalf("New() = %v, %v; want nil and an error wrapping ErrUnsupported", b, err)
	}
}
