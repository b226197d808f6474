//go:build linux

package uring

import (
	"errors"
	"testing"

	"github.com/blitz-go/blitz/backend"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestArmRecvFallback: where the kernel does not select buffers (forced
// here with DisableProvideBuffers), ArmRecv reports ErrUnsupported, so that
// the caller submits a SelectBuffer recv op instead; with selection it arms.
func TestArmRecvFallback(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	for _, c := range []struct {
		name string
		o    Options
		want error
	}{
		{"emulated selection", Options{DisableProvideBuffers: true}, backend.ErrUnsupported},
		{"buffer rings", Options{}, nil},
		{"PROVIDE_BUFFERS", Options{DisableBufferRings: true}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := New(c.o)
			require.NoError(t, err)
			require.NoError(t, b.RegisterBufferGroup(1, 2, 64))
			err = b.ArmRecv(backend.FD(fds[0]), 1, 5)
			if c.want != nil {
				require.True(t, errors.Is(err, c.want), "ArmRecv: %v, want %v", err, c.want)
			} else {
				require.NoError(t, err)
				require.NoError(t, b.CancelRecv(backend.FD(fds[0])))
			}
			require.NoError(t, b.Close())
			out := make([]backend.Completion, 8)
			n, _ := b.Wait(out, 0)
			if c.want == nil {
				require.Equal(t, 1, n, "the armed recv's completion")
				require.Nil(t, out[0].Op)
				require.EqualValues(t, 5, out[0].UserData)
				require.ErrorIs(t, out[0].Err, backend.ErrCanceled)
			}
		})
	}
}
