package scheduler_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// TestWakesFromManyGoroutines has many tasks wait on gates that many
// goroutines open at once, each also waking tasks spuriously (before and
// after opening, its own gates and others'). Every task must complete with
// its value; the probes check that no task is ever polled concurrently with
// itself or after completion, and the race detector that each poll sees the
// previous one's writes whichever worker made it.
func TestWakesFromManyGoroutines(t *testing.T) {
	n, m := 4000, 8
	if testing.Short() {
		n = 500
	}
	e := newEnv(t, scheduler.Config{Workers: 4})
	gates := make([]*gate, n)
	probes := make([]*probe, n)
	handles := make([]scheduler.JoinHandle[int], n)
	for i := range n {
		g := &gate{}
		// seen is the poll's own view of the gate, a plain variable: a
		// poll that returned pending must have seen the gate shut, and a
		// later poll must see what the earlier one wrote.
		seen := false
		probes[i] = newProbe(e, fmt.Sprintf("gated %d", i), func(cx *future.Context) (int, bool) {
			if seen {
				e.failf("gated %d: polled again after it saw its gate open", i)
			}
			if g.poll(cx) {
				seen = true
				return i, true
			}
			return 0, false
		})
		gates[i] = g
		handles[i] = scheduler.Spawn(e.s, nil, future.Future[int](probes[i]))
	}

	order := rand.New(rand.NewPCG(5, 6)).Perm(n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for j := range m {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(j), 7))
			<-start
			for k := j; k < n; k += m {
				g := gates[order[k]]
				g.wake() // spurious, maybe before the first poll
				gates[rng.IntN(n)].wake()
				g.Open()
				g.wake() // after open: the task may be running or complete
				g.Open()
				gates[rng.IntN(n)].wake()
			}
		}()
	}
	close(start)
	wg.Wait()

	for i, h := range handles {
		v, err := wait(e, h, fmt.Sprintf("gated %d", i))
		require.NoError(t, err)
		require.Equal(t, i, v)
	}
	var polls int
	for _, p := range probes {
		polls += int(p.polls.Load())
		assert.Zero(t, p.cancels.Load())
	}
	t.Logf("%d tasks, %d polls (spurious wakes add some)", n, polls)
	require.Zero(t, e.s.Stats().Live)
}

// TestWakeDuringPollIsNotLost wakes a task from another goroutine while
// the task's poll is running (the poll hands its waker over a channel and
// waits until the other goroutine has woken it, then returns pending
// without arranging anything else). The notified bit must bring the task
// back for exactly one more poll each round: a lost wake strands the task,
// a doubled one shows up as an extra poll.
func TestWakeDuringPollIsNotLost(t *testing.T) {
	rounds, tasks := 2000, 4
	if testing.Short() {
		rounds = 200
	}
	e := newEnv(t, scheduler.Config{Workers: 2})
	stop := make(chan struct{})
	var helpers sync.WaitGroup
	t.Cleanup(helpers.Wait)
	t.Cleanup(func() { close(stop) })

	probes := make([]*probe, tasks)
	handles := make([]scheduler.JoinHandle[int], tasks)
	for i := range tasks {
		wakeMe := make(chan waker.Waker)
		woke := make(chan struct{})
		helpers.Add(1)
		go func() { // the waker: wakes once or twice per round, inside the poll
			defer helpers.Done()
			for r := 0; ; r++ {
				select {
				case wk := <-wakeMe:
					wk.Wake()
					if r%3 == 0 {
						wk.Wake() // coalesces with the first
					}
					woke <- struct{}{}
				case <-stop:
					return
				}
			}
		}()
		round := 0
		probes[i] = newProbe(e, fmt.Sprintf("self-waking %d", i), func(cx *future.Context) (int, bool) {
			if round == rounds {
				return round, true
			}
			round++
			select {
			case wakeMe <- cx.Waker():
			case <-time.After(waitTimeout):
				e.failf("self-waking %d: helper gone", i)
				return 0, true
			}
			e.block(woke, "self-waking task")
			return 0, false
		})
		handles[i] = scheduler.Spawn(e.s, nil, future.Future[int](probes[i]))
	}
	for i, h := range handles {
		v, err := wait(e, h, fmt.Sprintf("self-waking %d", i))
		require.NoError(t, err)
		require.Equal(t, rounds, v)
		require.Equal(t, int32(rounds+1), probes[i].polls.Load(), "polls of task %d", i)
	}
}

// TestWakeAfterCompletionIsIgnored wakes a completed task's waker, from a
// goroutine and from another task's poll: nothing happens, nothing panics.
func TestWakeAfterCompletionIsIgnored(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	var wk waker.Waker
	h := scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
		wk = cx.Waker()
		return 1, true
	}))
	_, err := wait(e, h, "task")
	require.NoError(t, err)
	wk.Wake()
	h2 := scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
		cx.Wake(wk)
		return 2, true
	}))
	v, err := wait(e, h2, "waker of a completed task")
	require.NoError(t, err)
	require.Equal(t, 2, v)
	eventually(t, func() bool { return e.s.Stats().Live == 0 }, "live count back to 0")
	require.Equal(t, 0, e.s.Stats().GlobalQueue)
}
