//go:build linux

package uring

import (
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A submission of socket ops is a raw system call; one that carries a
// close (a socket with SO_LINGER waits in it) or a file op is an ordinary
// one, and the submission after it is raw again.
func TestSubmitRawUnlessItMayBlock(t *testing.T) {
	b, err := New(Options{})
	if err != nil {
		t.Skip("io_uring unavailable:", err)
	}
	defer b.Close()
	type enter struct {
		raw      bool
		toSubmit uint32
	}
	var enters []enter
	b.r.onEnter = func(raw bool, toSubmit uint32) { enters = append(enters, enter{raw, toSubmit}) }
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fds[1])
	// submitted runs op through Submit and a Wait for its completion, and
	// returns the kinds of the enters that submitted something.
	out := make([]backend.Completion, 8)
	submitted := func(op *backend.Op) []bool {
		t.Helper()
		enters = enters[:0]
		require.NoError(t, b.Submit(op))
		deadline := time.Now().Add(10 * time.Second)
		for done := false; !done; {
			n, err := b.Wait(out, 100*time.Millisecond)
			require.NoError(t, err)
			for _, c := range out[:n] {
				done = done || c.Op == op
			}
			require.True(t, time.Now().Before(deadline), "no completion")
		}
		var raw []bool
		for _, e := range enters {
			if e.toSubmit > 0 {
				raw = append(raw, e.raw)
			}
		}
		return raw
	}
	send := &backend.Op{Kind: backend.KindSend, FD: backend.FD(fds[0]), Buf: []byte("x")}
	require.Equal(t, []bool{true}, submitted(send), "a send")
	f, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	read := &backend.Op{Kind: backend.KindRead, FD: backend.FD(f), Buf: make([]byte, 8), Offset: -1}
	require.Equal(t, []bool{false}, submitted(read), "a read (maybe of a regular file)")
	require.NoError(t, unix.Close(f))
	require.Equal(t, []bool{true}, submitted(send), "a send after it")
	closeOp := &backend.Op{Kind: backend.KindClose, FD: backend.FD(fds[0])}
	require.Equal(t, []bool{false}, submitted(closeOp), "a close")
	require.True(t, socketOp(backend.KindAccept) && socketOp(backend.KindRecvFrom) && !socketOp(backend.KindFsync) && !socketOp(backend.KindWritev))
}
