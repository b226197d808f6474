package uring

import (
	"fmt"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
)

// TrySend is not offered by the io_uring backend (ErrUnsupported), though
// it could send directly: measured on the TCP echo benchmark, a send made
// outside the ring that wakes a recv armed inside it costs more (the kernel
// must run the recv's completion on the thread that submitted it, which is
// interrupted for it) than queueing the send in the ring: 15.8 us against
// 10.2 us a round trip. Sends go through the ring.
func (b *Backend) TrySend(backend.FD, []byte) (int, error) {
	return 0, fmt.Errorf("uring: TrySend: %w", backend.ErrUnsupported)
}

// TryRecv reads now if data is waiting (the runtime tries it only while a
// bulk transfer keeps the socket full).
func (b *Backend) TryRecv(fd backend.FD, buf []byte) (int, error) { return unixio.TryRecv(fd, buf) }
