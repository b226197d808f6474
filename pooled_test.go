package blitz_test

import (
	"io"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadPooled(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, peer := tcpPair(t, rt)
		rp := s.ReadPooled()
		h := blitz.SpawnOn(rt.Handle(), future.Future[future.Result[blitz.PooledBuf]](rp))
		time.Sleep(5 * time.Millisecond) // the read waits holding no buffer
		_, err := peer.Write([]byte("pooled data"))
		require.NoError(t, err)
		r, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		b := ok(t, r)
		assert.Equal(t, "pooled data", string(b.Bytes()))
		b.Release()

		require.NoError(t, peer.Close())
		rp2 := s.ReadPooled()
		assert.Equal(t, io.EOF, await(t, rt, future.Future[future.Result[blitz.PooledBuf]](rp2)).Err)
	})
}

// With a pool of one buffer held by one connection, a pooled read on
// another falls back to a buffer of its own and loses nothing.
func TestReadPooledPoolEmpty(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.ReadBufferCount, cfg.ReadBufferSize = 1, 16
		rt := newRuntime(t, cfg)
		s1, p1 := tcpPair(t, rt)
		s2, p2 := tcpPair(t, rt)
		_, _ = p1.Write([]byte("first"))
		rp1 := s1.ReadPooled()
		held := ok(t, await(t, rt, future.Future[future.Result[blitz.PooledBuf]](rp1)))
		assert.Equal(t, "first", string(held.Bytes()))
		_, _ = p2.Write([]byte("second"))
		rp2 := s2.ReadPooled()
		b := ok(t, await(t, rt, future.Future[future.Result[blitz.PooledBuf]](rp2)))
		assert.Equal(t, "second", string(b.Bytes()))
		b.Release()
		held.Release()
		// The pool works again.
		_, _ = p2.Write([]byte("third"))
		rp3 := s2.ReadPooled()
		b3 := ok(t, await(t, rt, future.Future[future.Result[blitz.PooledBuf]](rp3)))
		assert.Equal(t, "third", string(b3.Bytes()))
		b3.Release()
	})
}

// A cancelled pooled read's data goes to the next read, whichever kind.
func TestReadPooledCancelledDataKept(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, peer := tcpPair(t, rt)
		total := 600
		if testing.Short() {
			total = 200
		}
		want := make([]byte, total)
		for i := range want {
			want[i] = byte(i)
		}
		go func() {
			for i := 0; i < total; i += 20 {
				_, _ = peer.Write(want[i : i+20])
				time.Sleep(time.Duration(i%3) * 200 * time.Microsecond)
			}
		}()
		var got []byte
		buf := make([]byte, 64)
		for i := 0; len(got) < total; i++ {
			if i%2 == 0 {
				rp := s.ReadPooled()
				r := await(t, rt, blitz.Timeout(100*time.Microsecond, future.Future[future.Result[blitz.PooledBuf]](rp)))
				if r.Err == nil {
					b := ok(t, r.Value)
					got = append(got, b.Bytes()...)
					b.Release()
				}
				continue
			}
			rd := s.Read(buf)
			r := await(t, rt, blitz.Timeout(100*time.Microsecond, future.Future[future.Result[int]](rd)))
			if r.Err == nil {
				got = append(got, buf[:ok(t, r.Value)]...)
			}
		}
		assert.Equal(t, want, got)
	})
}
