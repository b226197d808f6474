package iocp

import (
	"fmt"

	"github.com/blitz-go/blitz/backend"
)

// TrySend has no fast path on IOCP yet: every send is an overlapped
// WSASend through the port.
func (b *Backend) TrySend(backend.FD, []byte) (int, error) {
	return 0, fmt.Errorf("iocp: TrySend: %w", backend.ErrUnsupported)
}

// TryRecv has no fast path on IOCP yet.
func (b *Backend) TryRecv(backend.FD, []byte) (int, error) {
	return 0, fmt.Errorf("iocp: TryRecv: %w", backend.ErrUnsupported)
}
