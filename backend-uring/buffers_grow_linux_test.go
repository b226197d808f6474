package uring

import (
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// bufferModes are the ways the backend can hand buffers to the kernel.
var bufferModes = []struct {
	name string
	o    Options
}{
	{"ring", Options{}},
	{"provide", Options{DisableBufferRings: true}},
	{"emulate", Options{DisableProvideBuffers: true}},
}

// selectRecv receives one datagram into a buffer the backend selects from
// group 1, and returns the buffer's id and the data.
func selectRecv(t *testing.T, b *Backend, fd backend.FD) (uint16, []byte) {
	t.Helper()
	op := &backend.Op{Kind: backend.KindRecv, FD: fd, Flags: backend.SelectBuffer, BufferGroup: 1, Timeout: 5 * time.Second}
	require.NoError(t, b.Submit(op))
	c := collect(t, b, op)[0]
	require.NoError(t, c.Err)
	require.NotZero(t, c.Flags&backend.HasBuffer, "the recv got no pool buffer")
	return c.BufferID, b.Buffer(1, c.BufferID)[:c.N]
}

// datagramPair is a connected pair of Unix datagram sockets: one write is
// one recv.
func datagramPair(t *testing.T) (backend.FD, backend.FD) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return backend.FD(fds[0]), backend.FD(fds[1])
}

// TestBufferGroupTouchesWhatItUses: receives that release their buffer
// before the next one use only the first buffers of a large group, so that
// the rest of its memory is never written (and never resident).
func TestBufferGroupTouchesWhatItUses(t *testing.T) {
	const count, rounds = 1024, 3 * firstProvided
	for _, m := range bufferModes {
		t.Run(m.name, func(t *testing.T) {
			b := newTest(t, m.o)
			require.NoError(t, b.RegisterBufferGroup(1, count, 64))
			a, z := datagramPair(t)
			highest := uint16(0)
			for i := range rounds {
				_, err := unix.Write(int(z), []byte{byte(i)})
				require.NoError(t, err)
				id, data := selectRecv(t, b, a)
				require.Equal(t, []byte{byte(i)}, data)
				highest = max(highest, id)
				require.NoError(t, b.ReleaseBuffer(1, id))
			}
			require.Less(t, int(highest), firstProvided, "sequential receives reached buffer %d of %d", highest, count)
		})
	}
}

// TestBufferGroupGrowsWithReadsInFlight: when the caller holds many
// buffers at once, the group gives the kernel more, up to all of them, and
// no receive finds the pool empty before every buffer is held.
func TestBufferGroupGrowsWithReadsInFlight(t *testing.T) {
	const count = 512
	for _, m := range bufferModes {
		t.Run(m.name, func(t *testing.T) {
			b := newTest(t, m.o)
			require.NoError(t, b.RegisterBufferGroup(1, count, 64))
			a, z := datagramPair(t)
			seen := make(map[uint16]bool, count)
			for i := range count {
				_, err := unix.Write(int(z), []byte{byte(i), byte(i >> 8)})
				require.NoError(t, err)
				id, data := selectRecv(t, b, a)
				require.Equal(t, []byte{byte(i), byte(i >> 8)}, data)
				require.False(t, seen[id], "buffer %d handed out twice", id)
				seen[id] = true
			}
			require.Len(t, seen, count)

			// Every buffer is held: the next receive finds none, and gets
			// one as soon as one is released.
			_, err := unix.Write(int(z), []byte("x"))
			require.NoError(t, err)
			op := &backend.Op{Kind: backend.KindRecv, FD: a, Flags: backend.SelectBuffer, BufferGroup: 1, Timeout: 5 * time.Second}
			require.NoError(t, b.Submit(op))
			c := collect(t, b, op)[0]
			require.ErrorIs(t, c.Err, backend.ErrNoBuffers)
			require.NoError(t, b.ReleaseBuffer(1, 7))
			id, data := selectRecv(t, b, a)
			require.Equal(t, uint16(7), id)
			require.Equal(t, []byte("x"), data)

			// Released buffers go back to the kernel: a second pass of
			// count receives, releasing as it goes, never runs short.
			for id := range uint16(count) {
				if id != 7 {
					require.NoError(t, b.ReleaseBuffer(1, id))
				}
			}
			require.NoError(t, b.ReleaseBuffer(1, 7))
			for i := range count {
				_, err := unix.Write(int(z), []byte{byte(i)})
				require.NoError(t, err)
				id, _ := selectRecv(t, b, a)
				require.NoError(t, b.ReleaseBuffer(1, id))
			}
		})
	}
}
