package scheduler_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// TestShutdownReachesIdleTasksSpawnedInside: tasks spawned from inside a
// task are linked into the owned list only at their first poll that does
// not complete; those left idle on wakers that never fire (spawned with a
// handle, by value, and without a handle) must still be reached by the
// shutdown, their futures cancelled once and their handles resolved with
// ErrShutdown. Live counts every task from its spawn, linked or not.
func TestShutdownReachesIdleTasksSpawnedInside(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	const n = 20
	probes := make([]*probe, n)
	handles := make([]scheduler.JoinHandle[int], n)
	var detachedPolled, detachedCancelled atomic.Int32
	root := newProbe(e, "root", func(cx *future.Context) (int, bool) {
		for i := range n {
			probes[i] = pendingProbe(e, fmt.Sprintf("child %d", i))
			if i%2 == 0 {
				handles[i] = scheduler.Spawn(e.s, cx, future.Future[int](probes[i]))
			} else {
				handles[i] = scheduler.SpawnValue[int](e.s, cx, probeRef{probes[i]})
			}
			scheduler.SpawnValueDetached[struct{}](e.s, cx, idleCanceller{polled: &detachedPolled, cancelled: &detachedCancelled})
		}
		return 0, true
	})
	_, err := wait(e, scheduler.Spawn(e.s, nil, future.Future[int](root)), "root")
	require.NoError(t, err)
	eventually(t, func() bool {
		for _, p := range probes {
			if p.polls.Load() != 1 {
				return false
			}
		}
		return detachedPolled.Load() == n
	}, "every child polled once")
	require.Equal(t, int64(2*n), e.s.Stats().Live)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	require.NoError(t, e.s.Shutdown(ctx))
	for i, h := range handles {
		requireDropped(t, e, h, probes[i], 1)
	}
	require.Equal(t, int32(n), detachedCancelled.Load(), "detached children cancelled")
	require.Zero(t, e.s.Stats().Live)
	e.checkNow()
}

// probeRef holds a probe by value, for SpawnValue; its Poll and Cancel
// are the probe's.
type probeRef struct{ p *probe }

func (r *probeRef) Poll(cx *future.Context) (int, bool) { return r.p.Poll(cx) }
func (r *probeRef) Cancel()                             { r.p.Cancel() }
