package scheduler_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// notifyLog is a Notifier that keeps the tasks it was given in a table, as
// a server's set of connection handlers does: each task's tag is its index,
// and an ended task leaves the table by a swap with the last one, whose
// tag moves with it. It records every outcome by task id, and fails the
// test on a second call for a task or a call for a task it never recorded.
type notifyLog struct {
	e  *env
	mu sync.Mutex
	// tasks is the table; ended the outcome of each ended task by id.
	tasks []scheduler.TaskRef
	ended map[uint64]future.Result[int]
	// done is closed when want tasks ended.
	done chan struct{}
	want int
}

func newNotifyLog(e *env, want int) *notifyLog {
	return &notifyLog{e: e, ended: make(map[uint64]future.Result[int]), done: make(chan struct{}), want: want}
}

// spawn starts f as a task recorded in the table, holding the lock across
// the spawn as the Notifier doc allows.
func (l *notifyLog) spawn(cx *future.Context, f future.Future[int]) (scheduler.TaskRef, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ref, err := scheduler.SpawnNotifying(l.e.s, cx, f, l, uint32(len(l.tasks)))
	if err == nil {
		l.tasks = append(l.tasks, ref)
	}
	return ref, err
}

func (l *notifyLog) TaskEnded(t scheduler.TaskRef, r future.Result[int]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := int(t.Tag())
	if i >= len(l.tasks) || l.tasks[i] != t {
		l.e.failf("task %d ended with tag %d, which is not its place in the table (%d entries)", t.ID(), i, len(l.tasks))
		return
	}
	if _, twice := l.ended[t.ID()]; twice {
		l.e.failf("task %d ended twice", t.ID())
	}
	l.ended[t.ID()] = r
	last := len(l.tasks) - 1
	moved := l.tasks[last]
	l.tasks[i] = moved
	moved.SetTag(uint32(i))
	l.tasks[last] = scheduler.TaskRef{}
	l.tasks = l.tasks[:last]
	if len(l.ended) == l.want {
		close(l.done)
	}
}

// wait waits for every task to end.
func (l *notifyLog) wait() {
	l.e.t.Helper()
	select {
	case <-l.done:
	case <-time.After(waitTimeout):
		l.mu.Lock()
		defer l.mu.Unlock()
		l.e.t.Fatalf("%d of %d tasks ended: a notification was lost", len(l.ended), l.want)
	}
}

// outcome returns the outcome recorded for the task ref.
func (l *notifyLog) outcome(ref scheduler.TaskRef) (future.Result[int], bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.ended[ref.ID()]
	return r, ok
}

// TestSpawnNotifyingHandsEachOutcomeToTheNotifier: a value, a panic, a
// cancellation and a cancellation of a task that never ran each reach the
// notifier once, with the errors a JoinHandle would have given.
func TestSpawnNotifyingHandsEachOutcomeToTheNotifier(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2})
	l := newNotifyLog(e, 4)
	var g gate
	value, err := l.spawn(nil, future.Ready(7))
	require.NoError(t, err)
	panicking, err := l.spawn(nil, future.PollFn(func(*future.Context) (int, bool) { panic("boom") }))
	require.NoError(t, err)
	waiting, err := l.spawn(nil, future.PollFn(func(cx *future.Context) (int, bool) { return 1, g.poll(cx) }))
	require.NoError(t, err)
	require.Eventually(t, g.registered, waitTimeout, time.Millisecond, "the gated task never waited")
	waiting.Cancel()
	waiting.Cancel() // idempotent
	cancelledFirst, err := l.spawn(nil, future.PollFn(func(*future.Context) (int, bool) { return 2, true }))
	require.NoError(t, err)
	cancelledFirst.Cancel()
	l.wait()

	r, _ := l.outcome(value)
	require.Equal(t, future.Ok(7), r)
	r, _ = l.outcome(panicking)
	require.ErrorIs(t, r.Err, scheduler.ErrPanicked)
	var pe *scheduler.PanicError
	require.ErrorAs(t, r.Err, &pe)
	require.Equal(t, "boom", pe.Value)
	r, _ = l.outcome(waiting)
	require.ErrorIs(t, r.Err, scheduler.ErrCancelled)
	r, _ = l.outcome(cancelledFirst)
	// Either it ran before the cancel reached it, or it was cancelled.
	if r.Err != nil {
		require.ErrorIs(t, r.Err, scheduler.ErrCancelled)
	} else {
		require.Equal(t, 2, r.Value)
	}
	cancelledFirst.Cancel() // after its end: nothing
	require.Eventually(t, func() bool { return e.s.Stats().Live == 0 }, waitTimeout, time.Millisecond)
}

// TestSpawnNotifyingRefusals: a nil future and a spawn after the shutdown
// began are refused with an error, the future's Cancel is called, and the
// notifier never hears of them. A task pending at the shutdown gets
// ErrShutdown.
func TestSpawnNotifyingRefusals(t *testing.T) {
	s, err := scheduler.New(scheduler.Config{Workers: 1})
	require.NoError(t, err)
	e := &env{t: t, s: s}
	t.Cleanup(e.check)
	l := newNotifyLog(e, 1)
	ref, err := l.spawn(nil, nil)
	require.ErrorIs(t, err, scheduler.ErrNilFuture)
	require.Equal(t, scheduler.TaskRef{}, ref)
	ref.Cancel() // the zero TaskRef: nothing

	var g gate
	pending, err := l.spawn(nil, future.PollFn(func(cx *future.Context) (int, bool) { return 0, g.poll(cx) }))
	require.NoError(t, err)
	require.Eventually(t, g.registered, waitTimeout, time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	l.wait()
	r, _ := l.outcome(pending)
	require.ErrorIs(t, r.Err, scheduler.ErrShutdown)

	var cancelled atomic.Bool
	late := &cancelProbe{onCancel: func() { cancelled.Store(true) }}
	ref, err = l.spawn(nil, late)
	require.ErrorIs(t, err, scheduler.ErrShutdown)
	require.Equal(t, scheduler.TaskRef{}, ref)
	require.True(t, cancelled.Load(), "the refused future's Cancel was not called")
	l.mu.Lock()
	defer l.mu.Unlock()
	require.Len(t, l.ended, 1, "the notifier heard of a task that was refused")
}

// cancelProbe is a future that never completes and records its Cancel.
type cancelProbe struct{ onCancel func() }

func (*cancelProbe) Poll(*future.Context) (int, bool) { return 0, false }
func (c *cancelProbe) Cancel()                        { c.onCancel() }

// TestSpawnNotifyingUnderChurn spawns tasks from tasks and from outside,
// some ending at once, some after yields, some panicking, some cancelled
// from other goroutines while they run, all recorded in one table whose
// tags move as tasks leave it: every task ends exactly once, with its tag
// its place in the table (notifyLog checks both), and the table empties.
func TestSpawnNotifyingUnderChurn(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 3000
	}
	e := newEnv(t, scheduler.Config{Workers: 2})
	l := newNotifyLog(e, n)
	refs := make(chan scheduler.TaskRef, n)
	task := func(seed uint64) future.Future[int] {
		rng := rand.New(rand.NewPCG(seed, 1))
		yields := rng.IntN(4)
		kind := rng.IntN(10)
		return future.PollFn(func(cx *future.Context) (int, bool) {
			if yields > 0 {
				yields--
				cx.Waker().Wake()
				return 0, false
			}
			if kind == 0 {
				panic("churn")
			}
			return int(seed), true
		})
	}
	var spawned atomic.Int64
	spawner := func(from int) future.Future[int] {
		i := 0
		return future.PollFn(func(cx *future.Context) (int, bool) {
			for ; i < n/4; i++ {
				ref, err := l.spawn(cx, task(uint64(from*n+i)))
				if err != nil {
					e.failf("spawn: %v", err)
					continue
				}
				spawned.Add(1)
				refs <- ref
			}
			return 0, true
		})
	}
	var wg sync.WaitGroup
	for from := range 2 { // two spawning tasks
		_, err := l.spawn(nil, spawner(from))
		require.NoError(t, err)
	}
	// and two goroutines spawning from outside, the rest of the tasks
	rest := n - 2 - 2*(n/4)
	for g := range 2 {
		wg.Go(func() {
			for i := range rest / 2 {
				ref, err := l.spawn(nil, task(uint64(1)<<40+uint64(g*n+i)))
				if err != nil {
					e.failf("spawn: %v", err)
					continue
				}
				spawned.Add(1)
				refs <- ref
			}
		})
	}
	if rest%2 == 1 {
		_, err := l.spawn(nil, future.Ready(0))
		require.NoError(t, err)
	}
	// A canceller cancels every seventh task it is shown, as it runs or
	// after it ended.
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case ref := <-refs:
				if i%7 == 0 {
					ref.Cancel()
				}
			case <-l.done:
				return
			}
		}
	})
	l.wait()
	wg.Wait()
	e.checkNow()
	l.mu.Lock()
	require.Empty(t, l.tasks, "tasks left in the table")
	cancelled, panicked := 0, 0
	for _, r := range l.ended {
		switch {
		case errors.Is(r.Err, scheduler.ErrCancelled):
			cancelled++
		case errors.Is(r.Err, scheduler.ErrPanicked):
			panicked++
		case r.Err != nil:
			t.Errorf("unexpected outcome %v", r.Err)
		}
	}
	l.mu.Unlock()
	t.Logf("%d tasks: %d cancelled, %d panicked", n, cancelled, panicked)
	require.Eventually(t, func() bool { return e.s.Stats().Live == 0 }, waitTimeout, time.Millisecond)
}
