package blitz_test

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// TestDumpShowsSocketWait: a task waiting for data on a socket shows in
// the dump as waiting on its I/O operation, with the descriptor, on every
// backend.
func TestDumpShowsSocketWait(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, peer := tcpPair(t, rt)
		buf := make([]byte, 8)
		h := blitz.SpawnOn(rt.Handle(), blitz.Named("reader", future.Future[future.Result[int]](s.Read(buf))))
		waitIdle(t, rt, 1)
		var out bytes.Buffer
		require.NoError(t, rt.Dump(&out))
		t.Logf("Dump:\n%s", out.String())
		require.Regexp(t, regexp.MustCompile(`1 task: idle, waiting on I/O \w+ fd \d+, "reader"`), out.String())
		_, err := peer.Write([]byte("data"))
		require.NoError(t, err)
		r, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		require.NoError(t, r.Err)
		require.Equal(t, 4, r.Value)
	})
}
