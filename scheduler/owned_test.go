package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// TestShutdownUnderLoadValueSpawns shuts down while goroutines spawn by
// value (SpawnValue) and tasks spawn by value and without handles
// (SpawnValueDetached chains, whose task objects the workers recycle), some
// of them idle on gates that goroutines keep waking (stale wakes included),
// some completing at once (gates open now and then), so that tasks are linked into the owned list at
// their first pending poll while the shutdown sweeps. Every future ends
// exactly one way (completed, or cancelled once), every handle resolves
// accordingly, and no task is left counted as live.
func TestShutdownUnderLoadValueSpawns(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 200
	}
	e := newEnv(t, scheduler.Config{Workers: 4})
	type spawned struct {
		h scheduler.JoinHandle[int]
		p *probe
	}
	var mu sync.Mutex
	var withHandle []spawned
	var detached []*probe
	var gates []*gate
	addDetached := func(p *probe) {
		mu.Lock()
		detached = append(detached, p)
		mu.Unlock()
	}
	newGate := func() *gate {
		g := &gate{}
		mu.Lock()
		gates = append(gates, g)
		mu.Unlock()
		return g
	}
	// chainProbe spawns, when its gate opens (or at once without one), the
	// next link of a detached chain of length left.
	var chainProbe func(name string, left int, g *gate) *probe
	chainProbe = func(name string, left int, g *gate) *probe {
		return newProbe(e, name, func(cx *future.Context) (int, bool) {
			if g != nil && !g.poll(cx) {
				return 0, false
			}
			if left > 0 {
				var ng *gate
				if left%4 == 0 {
					ng = newGate()
				}
				c := chainProbe(fmt.Sprintf("%s.%d", name, left), left-1, ng)
				addDetached(c)
				scheduler.SpawnValueDetached[int](e.s, cx, probeRef{c})
			}
			return left, true
		})
	}
	spawnOne := func(i int) {
		var p *probe
		switch i % 3 {
		case 0:
			p = gateProbe(e, fmt.Sprintf("gated %d", i), newGate(), i)
		case 1:
			p = chainProbe(fmt.Sprintf("chain %d", i), 8, nil)
		default:
			p = newProbe(e, fmt.Sprintf("ready %d", i), func(*future.Context) (int, bool) { return i, true })
		}
		h := scheduler.SpawnValue[int](e.s, nil, probeRef{p})
		mu.Lock()
		withHandle = append(withHandle, spawned{h, p})
		mu.Unlock()
	}
	for i := range n {
		spawnOne(i)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for j := range 4 {
		wg.Go(func() {
			for i := n + j; !stop.Load(); i += 4 {
				spawnOne(i)
				mu.Lock()
				g := gates[(i*7)%len(gates)]
				mu.Unlock()
				if i%3 == 0 {
					g.Open() // lets a gated task, or a chain, go on
				} else {
					g.wake() // opens nothing: a wake, often stale
				}
			}
		})
	}
	time.Sleep(20 * time.Millisecond)
	e.shutdown()
	stop.Store(true)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	ended := func(p *probe) string {
		switch done, cancels := p.done.Load(), p.cancels.Load(); {
		case done && cancels == 0:
			return "done"
		case !done && cancels == 1:
			return "cancelled"
		default:
			t.Fatalf("%s: done %v, cancelled %d times", p.name, done, cancels)
			return ""
		}
	}
	var values, dropped int
	for _, sp := range withHandle {
		_, err := wait(e, sp.h, sp.p.name)
		how := ended(sp.p)
		switch {
		case err == nil && how == "done":
			values++
		case errors.Is(err, scheduler.ErrShutdown) && how == "cancelled":
			dropped++
		default:
			t.Fatalf("%s: err %v but the future %s", sp.p.name, err, how)
		}
	}
	var chainDone, chainCancelled int
	for _, p := range detached {
		if ended(p) == "done" {
			chainDone++
		} else {
			chainCancelled++
		}
	}
	t.Logf("%d with handles: %d values, %d dropped; %d detached: %d done, %d cancelled",
		len(withHandle), values, dropped, len(detached), chainDone, chainCancelled)
	require.Positive(t, dropped)
	require.Zero(t, e.s.Stats().Live)
	e.checkNow()
}
