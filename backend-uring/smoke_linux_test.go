//go:build linux

package uring

import (
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/stretchr/testify/require"
)

func newTest(t testing.TB, o Options) *Backend {
	t.Helper()
	b, err := New(o)
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

// waitOne waits up to 5s for one completion.
func waitOne(t testing.TB, b *Backend) Completion {
	t.Helper()
	var out [1]Completion
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		n, err := b.Wait(out[:], time.Second)
		require.NoError(t, err)
		if n == 1 {
			return out[0]
		}
	}
	t.Fatal("no completion")
	return Completion{}
}

func TestSmokeNop(t *testing.T) {
	b := newTest(t, Options{})
	t.Logf("features %#x caps %#x multishot=%v cancelfd=%v extarg=%v bufmode=%d", b.r.features, b.caps,
		b.nativeMultishot, b.nativeCancelFD, b.extArg, b.bufMode)
	op := &backend.Op{Kind: backend.KindNop, UserData: 42}
	require.NoError(t, b.Submit(op))
	c := waitOne(t, b)
	require.Equal(t, op, c.Op)
	require.EqualValues(t, 42, c.UserData)
	require.NoError(t, c.Err)
}
