package blitz

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStreamFuturesReused: a stream's Read, WriteAll and ReadPooled hand
// out the same future again once the previous one completed or was
// cancelled, a new one while it is still pending, and a reused read
// delivers what its cancelled predecessor's receive got (nothing lost).
func TestStreamFuturesReused(t *testing.T) {
	for _, bk := range idleBackends(t) {
		t.Run(bk, func(t *testing.T) {
			rt, s, c := idlePair(t, bk)
			h := rt.Handle()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			buf := make([]byte, 16)

			// Completed: reused.
			_, err := c.Write([]byte("one"))
			require.NoError(t, err)
			a := s.Read(buf)
			r, err := BlockOn(ctx, h, a)
			require.NoError(t, err)
			require.NoError(t, r.Err)
			require.Equal(t, "one", string(buf[:r.Value]))
			b := s.Read(buf)
			require.Same(t, a, b, "a completed read's future is reused")

			// Still pending (never polled): a new one.
			d := s.Read(buf)
			require.NotSame(t, b, d, "a pending read's future is not reused")

			// Cancelled while waiting: reused, and the data its receive
			// got arrives through it.
			tr, err := BlockOn(ctx, h, Timeout(20*time.Millisecond, d))
			require.NoError(t, err)
			require.True(t, errors.Is(tr.Err, ErrTimeout), "the read waited: %v", tr.Err)
			_, err = c.Write([]byte("two"))
			require.NoError(t, err)
			e := s.Read(buf)
			require.Same(t, d, e, "a cancelled read's future is reused")
			r, err = BlockOn(ctx, h, e)
			require.NoError(t, err)
			require.NoError(t, r.Err)
			require.Equal(t, "two", string(buf[:r.Value]))

			// WriteAll: reused once finished.
			w1 := s.WriteAll([]byte("abc"))
			wr, err := BlockOn(ctx, h, w1)
			require.NoError(t, err)
			require.NoError(t, wr.Err)
			w2 := s.WriteAll([]byte("def"))
			require.Same(t, w1, w2, "a finished WriteAll's future is reused")
			wr, err = BlockOn(ctx, h, w2)
			require.NoError(t, err)
			require.NoError(t, wr.Err)
			got := make([]byte, 6)
			_, err = io.ReadFull(c, got)
			require.NoError(t, err)
			require.Equal(t, "abcdef", string(got))

			// ReadPooled: reused once completed.
			_, err = c.Write([]byte("three"))
			require.NoError(t, err)
			p1 := s.ReadPooled()
			pr, err := BlockOn(ctx, h, p1)
			require.NoError(t, err)
			require.NoError(t, pr.Err)
			require.Equal(t, "three", string(pr.Value.Bytes()))
			pr.Value.Release()
			require.Same(t, p1, s.ReadPooled(), "a completed pooled read's future is reused")
		})
	}
}
