package backendtest

import (
	"testing"

	"github.com/blitz-go/blitz/backend"
)

// Bench runs the backend benchmarks, one fresh backend per sub-benchmark:
// Nop (a Submit + Wait round trip of one nop) and TCPPingPong64 (a 64-byte
// message to the peer and back over loopback, both ends on the one
// backend). Both report allocations, which the contract wants at zero.
func Bench(b *testing.B, newBackend NewFunc) {
	b.Run("Nop", func(b *testing.B) { benchNop(b, newBackend) })
	b.Run("TCPPingPong64", func(b *testing.B) { benchPingPong(b, newBackend, 64) })
}

// benchNop measures the nop round trip.
func benchNop(b *testing.B, nb NewFunc) {
	h := newHarness(b, nb)
	out := make([]backend.Completion, 8)
	op := &backend.Op{Kind: backend.KindNop}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		roundTrip(b, h.b, out, op)
	}
}

// benchPingPong measures a size-byte round trip: the client sends, the
// server receives and sends it back, the client receives.
func benchPingPong(b *testing.B, nb NewFunc, size int) {
	h := newHarness(b, nb)
	client, server := h.pair()
	for _, fd := range []backend.FD{client, server} {
		if err := h.b.SetOption(fd, backend.OptNoDelay, 1); err != nil {
			b.Fatalf("OptNoDelay: %v", err)
		}
	}
	out := make([]backend.Completion, 8)
	msg, sbuf, cbuf := make([]byte, size), make([]byte, size), make([]byte, size)
	ping := &backend.Op{Kind: backend.KindSend, FD: client, Buf: msg}
	srecv := &backend.Op{Kind: backend.KindRecv, FD: server, Buf: sbuf}
	pong := &backend.Op{Kind: backend.KindSend, FD: server, Buf: sbuf}
	crecv := &backend.Op{Kind: backend.KindRecv, FD: client, Buf: cbuf}
	b.SetBytes(int64(2 * size))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		roundTrip(b, h.b, out, srecv, ping)
		roundTrip(b, h.b, out, crecv, pong)
	}
}
