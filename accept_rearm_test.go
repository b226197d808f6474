package blitz_test

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// Rearm reuses one AcceptFuture for connection after connection: it
// refuses a future not yet complete, and a rearmed future accepts the
// next connection, on every backend; a cancelled one can be rearmed too.
func TestAcceptRearm(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		addr := l.AddrPort().String()
		acc := l.Accept()
		require.False(t, acc.Rearm(), "Rearm of an accept never polled")
		for i := range 5 {
			c, err := net.DialTimeout("tcp", addr, 10*time.Second)
			require.NoError(t, err)
			r, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[future.Result[*blitz.TCPStream]](acc))
			require.NoError(t, err)
			require.NoError(t, r.Err, "accept %d", i)
			// The accepted stream is the dialled connection.
			_, err = c.Write([]byte{byte(i)})
			require.NoError(t, err)
			var b [1]byte
			rr, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[future.Result[int]](r.Value.Read(b[:])))
			require.NoError(t, err)
			require.NoError(t, rr.Err)
			require.Equal(t, byte(i), b[0])
			require.NoError(t, r.Value.Close())
			require.NoError(t, c.Close())
			require.True(t, acc.Rearm(), "Rearm after accept %d", i)
		}
		// A pending accept, cancelled, is rearmed and takes the next
		// connection.
		_, err = blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[bool](&acceptPollOnce{f: acc}))
		require.NoError(t, err)
		acc.Cancel()
		require.True(t, acc.Rearm(), "Rearm after Cancel")
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		require.NoError(t, err)
		defer c.Close()
		r, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[future.Result[*blitz.TCPStream]](acc))
		require.NoError(t, err)
		require.NoError(t, r.Err)
		require.NoError(t, r.Value.Close())
	})
}

// acceptPollOnce polls an accept once and completes, reporting whether the
// accept did.
type acceptPollOnce struct {
	f *blitz.AcceptFuture[*blitz.TCPStream]
}

func (p *acceptPollOnce) Poll(cx *future.Context) (bool, bool) {
	_, ok := p.f.Poll(cx)
	return ok, true
}
