package uring

import (
	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
)

// TrySend sends now if the socket has room. The runtime's tasks do not use
// it on this backend (CapNativeCompletions): measured on the TCP echo
// benchmark, a send made outside the ring that wakes a recv armed inside
// it costs more than queueing the send in the ring (15.8 us against
// 10.2 us a round trip; the kernel must run the recv's completion on the
// thread that submitted it). Goroutines blocked in the net.Conn adapter do
// use it: for them the alternative is a wake from another thread.
func (b *Backend) TrySend(fd backend.FD, buf []byte) (int, error) { return unixio.TrySend(fd, buf) }

// TryRecv reads now if data is waiting.
func (b *Backend) TryRecv(fd backend.FD, buf []byte) (int, error) { return unixio.TryRecv(fd, buf) }
