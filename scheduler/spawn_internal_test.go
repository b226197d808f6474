package scheduler

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
)

// refusedFut counts its polls and Cancels.
type refusedFut struct{ polls, cancels *atomic.Int32 }

func (f *refusedFut) Poll(*future.Context) (int, bool) { f.polls.Add(1); return 1, true }
func (f *refusedFut) Cancel()                          { f.cancels.Add(1) }

// TestSpawnRefusedByClosedGlobalQueue: a spawn from outside that passed
// the closing check but finds the global queue closed (the shutdown's
// drain began in between) is resolved by the spawn itself: the handle with
// ErrShutdown and the future cancelled unpolled (Spawn, SpawnValue,
// SpawnValueDetached), or refused with ErrShutdown without taking the
// future (TrySpawn); nothing stays counted as live. The race is narrow, so
// the test closes the queue itself.
func TestSpawnRefusedByClosedGlobalQueue(t *testing.T) {
	for _, maxLive := range []int{0, 4} {
		s, err := New(Config{Workers: 1, MaxLiveTasks: maxLive})
		require.NoError(t, err)
		s.global.Close()
		var polls, cancels atomic.Int32
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		for _, h := range []JoinHandle[int]{
			Spawn(s, nil, future.Future[int](&refusedFut{&polls, &cancels})),
			SpawnValue[int](s, nil, refusedFut{&polls, &cancels}),
		} {
			require.True(t, h.IsFinished())
			_, err := h.Wait(ctx)
			require.True(t, errors.Is(err, ErrShutdown), "err %v", err)
		}
		SpawnValueDetached[int](s, nil, refusedFut{&polls, &cancels})
		_, err = TrySpawn(s, nil, future.Future[int](&refusedFut{&polls, &cancels}))
		require.ErrorIs(t, err, ErrShutdown)
		require.Zero(t, polls.Load())
		require.Equal(t, int32(3), cancels.Load(), "cancelled: all but TrySpawn's")
		require.Zero(t, s.Stats().Live, "MaxLiveTasks %d", maxLive)
		require.Zero(t, s.Stats().Spawned)
		for i := range s.owned.shards { // not only Live, which never reads below 0
			sh := &s.owned.shards[i]
			require.Zero(t, sh.n.Load(), "shard %d's count", i)
			require.Zero(t, sh.doneRemote.Load(), "shard %d's finished spawns from outside", i)
		}
		require.NoError(t, s.Shutdown(ctx))
		cancel()
	}
}
