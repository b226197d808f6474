package blitz_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// multiRingBackends are the backends here that run an instance per
// worker: io_uring and epoll where they can start.
func multiRingBackends(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, n := range ioBackends(t) {
		if n == blitz.BackendURing || n == blitz.BackendEpoll {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		t.Skip("no backend here runs several instances")
	}
	return names
}

// TestIORingsConfig: the ring count is validated, one per worker by default
// on io_uring and epoll, as asked when given, and one on the backends that
// run one instance.
func TestIORingsConfig(t *testing.T) {
	for _, bad := range []int{-1, 3} {
		_, err := blitz.New(blitz.Config{Workers: 2, IORings: bad})
		require.ErrorIs(t, err, blitz.ErrConfig, "IORings %d", bad)
	}
	none := newRuntime(t, blitz.Config{Workers: 2, Backend: blitz.BackendNone})
	assert.Equal(t, 0, none.IORings())
	for _, name := range ioBackends(t) {
		rt := newRuntime(t, blitz.Config{Workers: 3, Backend: name})
		if b := rt.Backend(); b == blitz.BackendURing || b == blitz.BackendEpoll {
			assert.Equal(t, 3, rt.IORings(), "one ring per worker")
			two := newRuntime(t, blitz.Config{Workers: 3, Backend: name, IORings: 2})
			assert.Equal(t, 2, two.IORings())
		} else {
			assert.Equal(t, 1, rt.IORings(), name)
		}
	}
}

// TestIORingsEcho: with more workers than rings (workers 0 and 3 serve ring
// 0), connections homed on every ring echo correctly, with plain and
// pooled reads, while tasks move between workers.
func TestIORingsEcho(t *testing.T) {
	for _, name := range multiRingBackends(t) {
		t.Run(name, func(t *testing.T) { ioRingsEcho(t, name) })
	}
}

func ioRingsEcho(t *testing.T, name string) {
	rt := newRuntime(t, blitz.Config{Workers: 4, IORings: 3, Backend: name})
	require.Equal(t, 3, rt.IORings())
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	require.NoError(t, err)
	server := blitz.SpawnOn(rt.Handle(), future.Future[int](&acceptLoop{l: l}))
	clients, rounds := 12, 100
	if testing.Short() {
		rounds = 30
	}
	runEchoClients(t, l.AddrPort().String(), clients, rounds)
	// Pooled reads, whose buffers belong to the connection's ring.
	for range 6 {
		c, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(rt.Handle(), l.AddrPort().String(), time.Second)))
		require.NoError(t, err)
		require.NoError(t, c.Err)
		s := c.Value
		wr := s.WriteAll([]byte("pooled"))
		w, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[future.Result[int]](wr))
		require.NoError(t, err)
		require.NoError(t, w.Err)
		rp := s.ReadPooled()
		r, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[future.Result[blitz.PooledBuf]](rp))
		require.NoError(t, err)
		require.NoError(t, r.Err)
		assert.Equal(t, "pooled", string(r.Value.Bytes()))
		r.Value.Release()
		require.NoError(t, s.Close())
	}
	require.NoError(t, l.Close())
	n, err := server.Wait(testCtx(t))
	require.NoError(t, err)
	assert.Equal(t, clients+6, n)
}

// TestIORingsTimers: with every worker parked in a ring of its own, sleeps
// armed from goroutines at staggered deadlines all fire on time: the
// holder that carries the soonest deadline is kicked when a sooner one is
// armed, and holders covered by it sleep without a limit.
func TestIORingsTimers(t *testing.T) {
	for _, name := range multiRingBackends(t) {
		t.Run(name, func(t *testing.T) { ioRingsTimers(t, name) })
	}
}

func ioRingsTimers(t *testing.T, name string) {
	rt := newRuntime(t, blitz.Config{Workers: 4, Backend: name})
	require.Equal(t, 4, rt.IORings())
	for round := range 3 {
		time.Sleep(20 * time.Millisecond) // every worker parks
		var wg sync.WaitGroup
		late := make(chan time.Duration, 8)
		for i := range 8 {
			d := time.Duration(40-4*i) * time.Millisecond // later ones sooner: each one kicks
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				_, err := blitz.BlockOn(context.Background(), rt.Handle(), future.Future[struct{}](blitz.Sleep(d)))
				if err == nil {
					late <- time.Since(start) - d
				}
			}()
			time.Sleep(time.Millisecond)
		}
		wg.Wait()
		close(late)
		n := 0
		for l := range late {
			n++
			assert.GreaterOrEqual(t, l, time.Duration(0), "round %d: a sleep ended early", round)
			assert.Less(t, l, 500*time.Millisecond, "round %d: a sleep ended %v late", round, l)
		}
		assert.Equal(t, 8, n)
	}
}
