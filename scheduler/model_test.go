package scheduler_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// outcome is the reference model's class of a task's end.
type outcome int

const (
	outShutdown  outcome = iota // still pending at the end: dropped by the shutdown
	outValue                    // its future completed
	outCancelled                // JoinHandle.Cancel took effect first
)

func (o outcome) String() string { return [...]string{"shutdown", "value", "cancelled"}[o] }

// mTask is a task of the model test and the model's view of it.
type mTask struct {
	id int
	g  *gate
	p  *probe
	h  scheduler.JoinHandle[int]
	// The model.
	want          outcome
	detached      bool
	detachedFirst bool // detached before its outcome was decided
}

// spawner is a task that spawns, from inside (with its poll's cx), the
// futures queued by spawnInside, and hands the handles back.
type spawner struct {
	mu   sync.Mutex
	reqs []spawnReq
	stop bool
	g    gate // only its waker: the spawner's own
}

type spawnReq struct {
	f     future.Future[int]
	reply chan scheduler.JoinHandle[int]
}

func (sp *spawner) Poll(cx *future.Context, s *scheduler.Scheduler) bool {
	sp.mu.Lock()
	reqs, stop := sp.reqs, sp.stop
	sp.reqs = nil
	sp.mu.Unlock()
	for _, r := range reqs {
		r.reply <- scheduler.Spawn(s, cx, r.f)
	}
	if stop {
		return true
	}
	sp.g.poll(cx)
	sp.mu.Lock()
	more := len(sp.reqs) > 0 || sp.stop
	sp.mu.Unlock()
	if more {
		cx.Waker().Wake()
	}
	return false
}

func (sp *spawner) spawn(t *testing.T, f future.Future[int]) scheduler.JoinHandle[int] {
	r := spawnReq{f, make(chan scheduler.JoinHandle[int], 1)}
	sp.mu.Lock()
	sp.reqs = append(sp.reqs, r)
	sp.mu.Unlock()
	sp.g.wake()
	return recv(t, r.reply, "spawn from inside")
}

// runModelProgram runs one seeded random program of operations on e's
// scheduler and returns its tasks with the model's predictions. Each
// operation waits for its effect (a completion, an abort) before the next,
// so the model's prediction is exact; programs run concurrently with each
// other for the interleavings.
func runModelProgram(t *testing.T, e *env, seed uint64, ops int) (tasks []*mTask, sp scheduler.JoinHandle[int]) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	spw := &spawner{}
	sp = scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
		return -1, spw.Poll(cx, e.s)
	}))
	newTask := func(inside bool) {
		m := &mTask{id: len(tasks), g: &gate{}}
		m.p = gateProbe(e, fmt.Sprintf("seed %d task %d", seed, m.id), m.g, m.id)
		if inside {
			m.h = spw.spawn(t, m.p)
		} else {
			m.h = scheduler.Spawn(e.s, nil, future.Future[int](m.p))
		}
		tasks = append(tasks, m)
	}
	for op := range ops {
		if len(tasks) == 0 || rng.IntN(6) == 0 {
			newTask(rng.IntN(2) == 0)
			continue
		}
		m := tasks[rng.IntN(len(tasks))]
		switch rng.IntN(5) {
		case 0: // spawn, from outside or inside
			newTask(rng.IntN(2) == 0)
		case 1: // spurious wake
			m.g.wake()
		case 2: // cancel
			m.h.Cancel()
			if m.want == outShutdown {
				m.want = outCancelled
				eventually(t, func() bool { return m.p.cancels.Load() == 1 }, "seed %d op %d: cancel of task %d took effect", seed, op, m.id)
			}
		case 3: // detach
			if !m.detached && m.want == outShutdown {
				m.detachedFirst = true
			}
			m.h.Detach()
			m.detached = true
		case 4: // complete by flag
			m.g.Open()
			if m.want == outShutdown {
				m.want = outValue
				eventually(t, m.p.done.Load, "seed %d op %d: task %d completed", seed, op, m.id)
			}
		}
	}
	spw.mu.Lock()
	spw.stop = true
	spw.mu.Unlock()
	spw.g.wake()
	return tasks, sp
}

// TestModelRandomPrograms runs seeded random programs of spawns (from
// outside and from inside a task), spurious wakes, cancels, detaches and
// completions against a reference model of each task's outcome, then shuts
// down (dropping whatever is still pending) and compares every task's end
// with the model: through its handle, and through its future (completed
// once, or cancelled once, never both).
func TestModelRandomPrograms(t *testing.T) {
	programs, ops := 6, 400
	if testing.Short() {
		ops = 120
	}
	e := newEnv(t, scheduler.Config{Workers: 3})
	results := make([][]*mTask, programs)
	spawners := make([]scheduler.JoinHandle[int], programs)
	t.Run("programs", func(t *testing.T) {
		for i := range programs {
			t.Run(fmt.Sprintf("seed=%d", 1000+i), func(t *testing.T) {
				t.Parallel() // the programs run at once, on one scheduler
				results[i], spawners[i] = runModelProgram(t, e, uint64(1000+i), ops)
			})
		}
	})
	if t.Failed() {
		return
	}
	for i, h := range spawners {
		_, err := wait(e, h, fmt.Sprintf("spawner %d", i))
		require.NoError(t, err)
	}
	e.shutdown()

	var total, cancelled uint64
	counts := map[outcome]int{}
	for i, tasks := range results {
		for _, m := range tasks {
			total++
			counts[m.want]++
			what := fmt.Sprintf("seed %d task %d (want %v, detached %v)", 1000+i, m.id, m.want, m.detached)
			switch m.want {
			case outValue:
				require.True(t, m.p.done.Load(), what)
				require.Zero(t, m.p.cancels.Load(), what)
			case outCancelled:
				cancelled++
				fallthrough
			case outShutdown:
				require.False(t, m.p.done.Load(), what)
				require.Equal(t, int32(1), m.p.cancels.Load(), what)
			}
			v, err := wait(e, m.h, what)
			switch {
			case m.detached:
				// Detached after its outcome, a handle still reports a
				// result instead of ErrDetached: that is
				// TestJoinHandleDetachAfterCompletion's bug.
				if m.detachedFirst {
					require.ErrorIs(t, err, scheduler.ErrDetached, what)
				}
			case m.want == outValue:
				require.NoError(t, err, what)
				require.Equal(t, m.id, v, what)
			case m.want == outCancelled:
				require.ErrorIs(t, err, scheduler.ErrCancelled, what)
			default:
				require.ErrorIs(t, err, scheduler.ErrShutdown, what)
			}
		}
	}
	t.Logf("%d tasks: %v", total, counts)
	st := e.s.Stats()
	require.Equal(t, total+uint64(programs), st.Spawned)
	require.Equal(t, cancelled, st.Cancelled)
	require.Zero(t, st.Live)
	e.checkNow()
}
