package scheduler_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/header"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// requireCancelled checks that h resolved with ErrCancelled and that its
// future was cancelled exactly once, after polls polls.
func requireCancelled(t *testing.T, e *env, h scheduler.JoinHandle[int], p *probe, polls int32) {
	t.Helper()
	_, err := wait(e, h, p.name)
	require.ErrorIs(t, err, scheduler.ErrCancelled, p.name)
	require.Equal(t, int32(1), p.cancels.Load(), "%s: cancels", p.name)
	require.Equal(t, polls, p.polls.Load(), "%s: polls", p.name)
	require.False(t, p.done.Load(), p.name)
}

// TestCancelIdleTask cancels a task that is idle on a waker that never
// fires: the task is aborted right away (no wake needed), its future's
// Cancel runs once, and it is not polled again.
func TestCancelIdleTask(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	p := pendingProbe(e, "idle")
	h := scheduler.Spawn(e.s, nil, future.Future[int](p))
	eventually(t, func() bool { return p.polls.Load() == 1 }, "first poll")
	start := time.Now()
	h.Cancel()
	h.Cancel() // idempotent
	requireCancelled(t, e, h, p, 1)
	t.Logf("aborted %v after Cancel", time.Since(start))
	h.Cancel()
	require.Equal(t, int32(1), p.cancels.Load())
	e.shutdown()
	require.Equal(t, uint64(1), e.s.Stats().Cancelled)
}

// TestCancelIdleTaskFromManyGoroutines cancels idle tasks from many
// goroutines at once: one abort each, one Cancel of the future each.
func TestCancelIdleTaskFromManyGoroutines(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 4})
	const n = 200
	probes := make([]*probe, n)
	handles := make([]scheduler.JoinHandle[int], n)
	for i := range n {
		probes[i] = pendingProbe(e, fmt.Sprintf("idle %d", i))
		handles[i] = scheduler.Spawn(e.s, nil, future.Future[int](probes[i]))
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, h := range handles {
				h.Cancel()
			}
		}()
	}
	wg.Wait()
	for i, h := range handles {
		_, err := wait(e, h, probes[i].name)
		require.ErrorIs(t, err, scheduler.ErrCancelled)
		require.Equal(t, int32(1), probes[i].cancels.Load())
		require.LessOrEqual(t, probes[i].polls.Load(), int32(1))
	}
}

// blockWorker spawns a task that blocks its worker until the returned
// release is closed; from inside, before blocking, it runs inside(cx).
func blockWorker(t *testing.T, e *env, inside func(cx *future.Context)) (release chan struct{}) {
	t.Helper()
	in, rel := make(chan struct{}), make(chan struct{})
	scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
		if inside != nil {
			inside(cx)
		}
		close(in)
		e.block(rel, "blocker")
		return 0, true
	}))
	recv(t, in, "blocker running")
	return rel
}

// TestCancelQueuedTask cancels tasks still waiting in a run queue (the
// global queue, the LIFO slot, the local queue) behind a poll that blocks
// the only worker: they are aborted without ever being polled.
func TestCancelQueuedTask(t *testing.T) {
	for _, lifo := range []int{scheduler.LIFOSlot, scheduler.LIFOStack, scheduler.LIFOOff} {
		t.Run(fmt.Sprintf("LIFO=%d", lifo), func(t *testing.T) {
			e := newEnv(t, scheduler.Config{Workers: 1, LIFO: lifo})
			var locals []*probe
			var hLocals []scheduler.JoinHandle[int]
			release := blockWorker(t, e, func(cx *future.Context) {
				for i := range 6 { // LIFO and local queue
					p := never(e, fmt.Sprintf("local %d", i))
					locals = append(locals, p)
					hLocals = append(hLocals, scheduler.Spawn(e.s, cx, future.Future[int](p)))
				}
			})
			global := never(e, "global")
			hGlobal := scheduler.Spawn(e.s, nil, future.Future[int](global))
			kept := newProbe(e, "kept", func(*future.Context) (int, bool) { return 5, true })
			hKept := scheduler.Spawn(e.s, nil, future.Future[int](kept))
			hGlobal.Cancel()
			for _, h := range hLocals {
				h.Cancel()
			}
			require.False(t, hGlobal.IsFinished(), "aborted by the worker that pops it, not by Cancel")
			close(release)
			requireCancelled(t, e, hGlobal, global, 0)
			for i, h := range hLocals {
				requireCancelled(t, e, h, locals[i], 0)
			}
			v, err := wait(e, hKept, "kept")
			require.NoError(t, err)
			require.Equal(t, 5, v)
		})
	}
}

// TestCancelRunningTask cancels a task during its poll: the cancellation
// takes effect when the poll returns pending (even if the poll also woke
// itself), and not at all if the poll completes.
func TestCancelRunningTask(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ready    bool
		selfWake bool
	}{
		{"pending", false, false},
		{"pending-after-self-wake", false, true},
		{"ready", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, scheduler.Config{Workers: 2})
			in, rel := make(chan struct{}), make(chan struct{})
			p := newProbe(e, tc.name, func(cx *future.Context) (int, bool) {
				close(in)
				e.block(rel, tc.name)
				if tc.selfWake {
					cx.Waker().Wake()
				}
				return 9, tc.ready
			})
			h := scheduler.Spawn(e.s, nil, future.Future[int](p))
			recv(t, in, "poll running")
			h.Cancel()
			time.Sleep(time.Millisecond)
			require.False(t, h.IsFinished(), "cancelled while its poll runs")
			require.Zero(t, p.cancels.Load())
			close(rel)
			if tc.ready {
				v, err := wait(e, h, tc.name)
				require.NoError(t, err, "a poll that completes wins over a cancel")
				require.Equal(t, 9, v)
				require.Zero(t, p.cancels.Load())
				return
			}
			requireCancelled(t, e, h, p, 1)
		})
	}
}

// TestCancelCompletedTask keeps the value of a task that completed.
func TestCancelCompletedTask(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	p := newProbe(e, "ready", func(*future.Context) (int, bool) { return 3, true })
	h := scheduler.Spawn(e.s, nil, future.Future[int](p))
	v, err := wait(e, h, "ready")
	require.NoError(t, err)
	require.Equal(t, 3, v)
	h.Cancel()
	v, err = wait(e, h, "ready, cancelled after completion")
	require.NoError(t, err)
	require.Equal(t, 3, v)
	require.Zero(t, p.cancels.Load())
	e.shutdown()
	require.Zero(t, e.s.Stats().Cancelled)
}

// TestCancelShielded cancels a task that holds a shield (added through its
// header at its first poll). The task is polled again while shielded, with
// the cancelled bit visible; the poll that removes the last shield learns
// that cancellation is now effective, returns pending, and the task is
// aborted at the end of that poll, and not before.
func TestCancelShielded(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	var (
		mu sync.Mutex
		wk waker.Waker
	)
	polled := make(chan int, 4)
	n := 0 // polls so far; only polls touch it
	p := newProbe(e, "shielded", func(cx *future.Context) (int, bool) {
		h := cx.Task().(*header.Header)
		mu.Lock()
		wk = cx.Waker()
		mu.Unlock()
		switch n {
		case 0:
			if err := h.AddShield(); err != nil {
				e.failf("AddShield: %v", err)
			}
		case 1:
			if !h.Load().Cancelled() || h.Load().ShieldDepth() != 1 {
				e.failf("second poll: state %v, want cancelled with one shield", h.Load())
			}
		case 2:
			effective, err := h.RemoveShield()
			if err != nil || !effective {
				e.failf("RemoveShield = %v, %v; want effective", effective, err)
			}
		default:
			e.failf("polled %d times: the abort should have followed the third poll", n+1)
		}
		n++
		polled <- n
		return 0, false
	})
	h := scheduler.Spawn(e.s, nil, future.Future[int](p))
	wake := func() {
		mu.Lock()
		w := wk
		mu.Unlock()
		w.Wake()
	}
	require.Equal(t, 1, recv(t, polled, "first poll"))
	h.Cancel()
	time.Sleep(5 * time.Millisecond)
	require.False(t, h.IsFinished(), "aborted through its shield")
	require.Zero(t, p.cancels.Load())

	wake()
	require.Equal(t, 2, recv(t, polled, "second poll, shielded"))
	time.Sleep(5 * time.Millisecond)
	require.False(t, h.IsFinished(), "aborted through its shield")

	wake()
	require.Equal(t, 3, recv(t, polled, "third poll, removing the shield"))
	requireCancelled(t, e, h, p, 3)
}

// TestCancelRacesCompletion opens the gates of tasks while several
// goroutines cancel them: each task ends exactly one way, with its value
// (the future completed and was never cancelled) or with ErrCancelled (the
// future was cancelled once and never completed).
func TestCancelRacesCompletion(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	e := newEnv(t, scheduler.Config{Workers: 4})
	gates := make([]*gate, n)
	probes := make([]*probe, n)
	handles := make([]scheduler.JoinHandle[int], n)
	for i := range n {
		gates[i] = &gate{}
		probes[i] = gateProbe(e, fmt.Sprintf("racer %d", i), gates[i], i)
		handles[i] = scheduler.Spawn(e.s, nil, future.Future[int](probes[i]))
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for j := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(j), 11))
			<-start
			for _, i := range rng.Perm(n) {
				if j == 0 {
					gates[i].Open()
				} else {
					handles[i].Cancel()
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	var values, cancelled uint64
	for i, h := range handles {
		v, err := wait(e, h, probes[i].name)
		p := probes[i]
		switch {
		case err == nil:
			values++
			require.Equal(t, i, v)
			require.True(t, p.done.Load())
			require.Zero(t, p.cancels.Load(), "%s completed and was cancelled", p.name)
		default:
			cancelled++
			require.ErrorIs(t, err, scheduler.ErrCancelled)
			require.False(t, p.done.Load(), "%s cancelled and completed", p.name)
			require.Equal(t, int32(1), p.cancels.Load())
		}
	}
	t.Logf("%d values, %d cancelled", values, cancelled)
	e.shutdown()
	require.Equal(t, cancelled, e.s.Stats().Cancelled)
}

// TestCancelWakesWaiter cancels a task while a goroutine waits on its
// handle (a copy: "all copies refer to the same task"), and while another
// task awaits it: both must learn of the ErrCancelled outcome. Cancel drops
// the Waker registered through the handle, so the abort wakes nobody and
// both waiters are stranded.
func TestCancelWakesWaiter(t *testing.T) {
	t.Run("goroutine", func(t *testing.T) {
		e := newEnv(t, scheduler.Config{Workers: 2})
		p := pendingProbe(e, "idle")
		h := scheduler.Spawn(e.s, nil, future.Future[int](p))
		got := make(chan error, 1)
		go func() {
			_, err := h.Wait(e.ctx())
			got <- err
		}()
		eventually(t, func() bool { return p.polls.Load() == 1 }, "first poll")
		time.Sleep(10 * time.Millisecond) // the goroutine is in Wait
		h.Cancel()
		eventually(t, func() bool { return p.cancels.Load() == 1 }, "abort")
		select {
		case err := <-got:
			require.ErrorIs(t, err, scheduler.ErrCancelled)
		case <-time.After(2 * time.Second):
			t.Fatal("Wait did not return 2s after the task was aborted: Cancel dropped its waker (lost wakeup)")
		}
	})
	t.Run("task", func(t *testing.T) {
		e := newEnv(t, scheduler.Config{Workers: 2})
		p := pendingProbe(e, "idle")
		h := scheduler.Spawn(e.s, nil, future.Future[int](p))
		awaiter := newProbe(e, "awaiter", func(cx *future.Context) (int, bool) {
			r, ok := h.Poll(cx)
			if !ok {
				return 0, false
			}
			if r.Err != scheduler.ErrCancelled {
				e.failf("awaited outcome %v, want ErrCancelled", r.Err)
			}
			return 1, true
		})
		ha := scheduler.Spawn(e.s, nil, future.Future[int](awaiter))
		eventually(t, func() bool { return awaiter.polls.Load() == 1 }, "awaiter polled")
		h.Cancel()
		eventually(t, func() bool { return p.cancels.Load() == 1 }, "abort")
		deadline := time.Now().Add(2 * time.Second)
		for !ha.IsFinished() {
			if time.Now().After(deadline) {
				ha.Cancel() // so that the shutdown is clean
				t.Fatal("the task awaiting the cancelled task was never woken: Cancel dropped its waker (lost wakeup)")
			}
			time.Sleep(time.Millisecond)
		}
	})
}
