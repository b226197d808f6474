package blitz_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// gate is a future of v that completes once opened; its Cancel is counted.
type gate struct {
	mu      sync.Mutex
	open    bool
	wk      waker.Waker
	v       int
	cancels *atomic.Int32
}

func newGate(v int, cancels *atomic.Int32) *gate { return &gate{v: v, cancels: cancels} }

func (g *gate) Poll(cx *future.Context) (int, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open {
		return g.v, true
	}
	g.wk = cx.Waker()
	return 0, false
}

func (g *gate) Cancel() {
	if g.cancels != nil {
		g.cancels.Add(1)
	}
}

func (g *gate) Open() {
	g.mu.Lock()
	g.open = true
	wk := g.wk
	g.mu.Unlock()
	wk.Wake()
}

func TestJoinSetReportsInCompletionOrder(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	ctx := testCtx(t)
	var set blitz.JoinSet[int]
	gates := []*gate{newGate(0, nil), newGate(1, nil), newGate(2, nil), newGate(3, nil)}
	for _, g := range gates {
		set.SpawnOn(rt.Handle(), g)
	}
	assert.Equal(t, 4, set.Len())
	for _, i := range []int{2, 0, 3, 1} {
		gates[i].Open()
		v, err := set.WaitNext(ctx)
		require.NoError(t, err)
		assert.Equal(t, i, v, "the task that finished is the one reported")
	}
	assert.Equal(t, 0, set.Len())
	_, err := set.WaitNext(ctx)
	assert.ErrorIs(t, err, blitz.ErrJoinSetEmpty)
}

func TestJoinSetEmptyNextCompletesAtOnce(t *testing.T) {
	var set blitz.JoinSet[string]
	r, ok := set.Next().Poll(future.NewContext(waker.Noop()))
	require.True(t, ok)
	assert.ErrorIs(t, r.Err, blitz.ErrJoinSetEmpty)
	out, err := set.WaitAll(testCtx(t))
	assert.NoError(t, err)
	assert.Empty(t, out)
}

func TestJoinSetCancelAllReportsCancelled(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	ctx := testCtx(t)
	var set blitz.JoinSet[int]
	var cancels atomic.Int32
	const n = 5
	for i := range n {
		set.SpawnOn(rt.Handle(), newGate(i, &cancels))
	}
	set.SpawnOn(rt.Handle(), future.Ready(42)) // may finish before the cancel
	set.CancelAll()
	out, err := set.WaitAll(ctx)
	require.NoError(t, err)
	require.Len(t, out, n+1)
	cancelled := 0
	for _, r := range out {
		if r.Err != nil {
			assert.ErrorIs(t, r.Err, blitz.ErrCancelled)
			cancelled++
		} else {
			assert.Equal(t, 42, r.Value)
		}
	}
	assert.GreaterOrEqual(t, cancelled, n)
	assert.Equal(t, int32(n), cancels.Load(), "every pending future's Cancel ran")
	assert.Equal(t, 0, set.Len())
}

func TestJoinSetReportsPanicsAndNil(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	var set blitz.JoinSet[int]
	set.SpawnOn(rt.Handle(), future.PollFn(func(*future.Context) (int, bool) { panic("boom") }))
	set.SpawnOn(rt.Handle(), nil)
	out, err := set.WaitAll(testCtx(t))
	require.NoError(t, err)
	require.Len(t, out, 2)
	var panicked, nilf int
	for _, r := range out {
		var pe *blitz.PanicError
		switch {
		case errors.As(r.Err, &pe):
			assert.ErrorIs(t, r.Err, blitz.ErrPanicked)
			panicked++
		case errors.Is(r.Err, blitz.ErrNilFuture):
			nilf++
		}
	}
	assert.Equal(t, 1, panicked)
	assert.Equal(t, 1, nilf)
}

// setOwner is a task that owns a set: it spawns its children, awaits them
// all, and closes the set when it is cancelled.
type setOwner struct {
	set      blitz.JoinSet[int]
	children []*gate
	spawned  chan struct{}
	all      future.Future[[]future.Result[int]]
}

func (o *setOwner) Poll(cx *future.Context) (int, bool) {
	if o.all == nil {
		for _, g := range o.children {
			o.set.Spawn(cx, g)
		}
		o.all = o.set.All()
		close(o.spawned)
	}
	rs, ok := o.all.Poll(cx)
	return len(rs), ok
}

func (o *setOwner) Cancel() {
	future.Cancel(o.all)
	o.set.Close()
}

func TestJoinSetCancellingOwnerCancelsChildren(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	var cancels atomic.Int32
	o := &setOwner{spawned: make(chan struct{})}
	const n = 8
	for i := range n {
		o.children = append(o.children, newGate(i, &cancels))
	}
	h := blitz.SpawnOn(rt.Handle(), future.Future[int](o))
	select {
	case <-o.spawned:
	case <-testCtx(t).Done():
		t.Fatal("the owner never ran")
	}
	h.Cancel()
	_, err := h.Wait(testCtx(t))
	require.ErrorIs(t, err, blitz.ErrCancelled)
	// The children are cancelled by the workers: wait for all, bounded.
	deadline := time.Now().Add(10 * time.Second)
	for cancels.Load() < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, int32(n), cancels.Load(), "every child was cancelled with its owner")
	out, err := o.set.WaitAll(testCtx(t))
	require.NoError(t, err)
	assert.Len(t, out, n)
	for _, r := range out {
		assert.ErrorIs(t, r.Err, blitz.ErrCancelled)
	}

	// Spawns into a closed set are cancelled too.
	var late atomic.Int32
	o.set.SpawnOn(rt.Handle(), newGate(0, &late))
	r, err := o.set.WaitNext(testCtx(t))
	assert.ErrorIs(t, err, blitz.ErrCancelled, "value %d", r)
	assert.Equal(t, int32(1), late.Load())
}

func TestJoinSetWaitNextBoundedByContext(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	var set blitz.JoinSet[int]
	g := newGate(7, nil)
	set.SpawnOn(rt.Handle(), g)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := set.WaitNext(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 1, set.Len(), "the task stays in the set")
	g.Open()
	v, err := set.WaitNext(testCtx(t))
	assert.NoError(t, err)
	assert.Equal(t, 7, v)
}

func TestJoinSetWaitNextInTaskRefuses(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	h := blitz.SpawnOn(rt.Handle(), future.PollFn(func(cx *future.Context) (error, bool) {
		var set blitz.JoinSet[int]
		set.Spawn(cx, future.Pending[int]())
		_, err := set.WaitNext(context.Background())
		set.Close()
		return err, true
	}))
	err, werr := h.Wait(testCtx(t))
	require.NoError(t, werr)
	assert.ErrorIs(t, err, blitz.ErrBlockingInTask)
}

// collector spawns n tasks that each yield y times and return their index,
// then awaits Next until the set is empty, recording what it got.
type collector struct {
	n, y    int
	started bool
	set     blitz.JoinSet[int]
	next    *blitz.JoinNextFuture[int]
	got     []int
}

type yielder struct {
	i, left int
	y       future.Future[struct{}]
}

func (y *yielder) Poll(cx *future.Context) (int, bool) {
	for y.left > 0 {
		if y.y == nil {
			y.y = blitz.Yield()
		}
		if _, ok := y.y.Poll(cx); !ok {
			return 0, false
		}
		y.y = nil
		y.left--
	}
	return y.i, true
}

func (c *collector) Poll(cx *future.Context) ([]int, bool) {
	if !c.started {
		c.started = true
		for i := range c.n {
			c.set.Spawn(cx, &yielder{i: i, left: i % (c.y + 1)})
		}
	}
	for {
		if c.next == nil {
			c.next = c.set.Next()
		}
		r, ok := c.next.Poll(cx)
		if !ok {
			return nil, false
		}
		c.next = nil
		if errors.Is(r.Err, blitz.ErrJoinSetEmpty) {
			return c.got, true
		}
		if r.Err != nil {
			panic(r.Err)
		}
		c.got = append(c.got, r.Value)
	}
}

// TestJoinSetStressNoLostWakeup has many tasks finish on several workers
// while their owner is polling Next, and goroutines spawning into a set
// that a goroutine waits on: every outcome arrives exactly once, and
// nothing hangs (a lost wakeup would run into the test's context).
func TestJoinSetStressNoLostWakeup(t *testing.T) {
	rounds, n := 200, 64
	if testing.Short() {
		rounds, n = 20, 32
	}
	rt := newRuntime(t, blitz.Config{Workers: 4})
	ctx := testCtx(t)
	for round := range rounds {
		c := &collector{n: n, y: round % 4}
		got, err := blitz.JoinHandle[[]int](blitz.SpawnOn(rt.Handle(), future.Future[[]int](c))).Wait(ctx)
		require.NoError(t, err, "round %d", round)
		sort.Ints(got)
		require.Len(t, got, n)
		for i, v := range got {
			require.Equal(t, i, v, "round %d", round)
		}
	}

	// Spawns from several goroutines racing a goroutine's WaitNext.
	var set blitz.JoinSet[int]
	const spawners = 4
	total := spawners * n * 4
	var wg sync.WaitGroup
	for s := range spawners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range total / spawners {
				set.SpawnOn(rt.Handle(), &yielder{i: s*total/spawners + i, left: i % 3})
			}
		}()
	}
	seen := make([]bool, total)
	for range total {
		for set.Len() == 0 { // the spawners may not have started yet
			time.Sleep(10 * time.Microsecond)
			require.NoError(t, ctx.Err())
		}
		v, err := set.WaitNext(ctx)
		require.NoError(t, err)
		require.False(t, seen[v], "value %d reported twice", v)
		seen[v] = true
	}
	wg.Wait()
	assert.Equal(t, 0, set.Len())
}

// TestJoinSetConcurrentWaiters: several goroutines and tasks await Next on
// one set at once, some of them cancelling their wait after being woken.
// Every task's outcome is returned exactly once, and every waiter returns:
// the last ones with ErrJoinSetEmpty once the set ran dry.
func TestJoinSetConcurrentWaiters(t *testing.T) {
	rounds, tasks := 50, 64
	if testing.Short() {
		rounds, tasks = 10, 32
	}
	rt := newRuntime(t, blitz.Config{Workers: 4})
	for round := range rounds {
		var set blitz.JoinSet[int]
		for i := range tasks {
			set.SpawnOn(rt.Handle(), future.PollFn(func(*future.Context) (int, bool) { return i, true }))
		}
		var mu sync.Mutex
		seen := make(map[int]int)
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; ; n++ {
					ctx := testCtx(t)
					if (w+n)%3 == 0 { // give up some waits early: a woken Next cancelled must pass its wake on
						var cancel context.CancelFunc
						ctx, cancel = context.WithTimeout(ctx, 50*time.Microsecond)
						defer cancel()
					}
					v, err := set.WaitNext(ctx)
					switch {
					case errors.Is(err, blitz.ErrJoinSetEmpty):
						return
					case errors.Is(err, context.DeadlineExceeded):
						continue
					case err != nil:
						t.Errorf("round %d: WaitNext: %v", round, err)
						return
					}
					mu.Lock()
					seen[v]++
					mu.Unlock()
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: waiters still blocked 30s on; %d of %d outcomes returned, Len %d", round, len(seen), tasks, set.Len())
		}
		for i := range tasks {
			if seen[i] != 1 {
				t.Fatalf("round %d: task %d returned %d times", round, i, seen[i])
			}
		}
	}
}

// TestJoinSetNextSpendsTheBudget: a task taking 300 outcomes that are all
// ready, one Next after another in one poll, yields to the budget at least
// every future.TaskBudget of them, and still takes every outcome once.
func TestJoinSetNextSpendsTheBudget(t *testing.T) {
	const n = 300
	rt := newRuntime(t, blitz.Config{Workers: 1})
	var set blitz.JoinSet[int]
	var finished atomic.Int32
	for i := range n {
		set.SpawnOn(rt.Handle(), future.Map(future.Ready(i), func(v int) int { finished.Add(1); return v }))
	}
	require.Eventually(t, func() bool { return finished.Load() == n }, 20*time.Second, time.Millisecond)
	var polls int
	seen := make(map[int]bool)
	var next *blitz.JoinNextFuture[int]
	drain := future.PollFn(func(cx *future.Context) (struct{}, bool) {
		polls++
		for len(seen) < n {
			if next == nil {
				next = set.Next()
			}
			r, ok := next.Poll(cx)
			if !ok {
				return struct{}{}, false
			}
			next = nil
			require.NoError(t, r.Err)
			require.False(t, seen[r.Value], "outcome %d taken twice", r.Value)
			seen[r.Value] = true
		}
		return struct{}{}, true
	})
	_, err := blitz.SpawnOn(rt.Handle(), drain).Wait(testCtx(t))
	require.NoError(t, err)
	assert.Len(t, seen, n)
	assert.GreaterOrEqual(t, polls, (n+future.TaskBudget-1)/future.TaskBudget, "the budget made the task yield")
	assert.LessOrEqual(t, polls, 2*((n+future.TaskBudget-1)/future.TaskBudget), "every outcome was ready: the polls are the budget's")
}

// TestJoinSetValuesCollectsEveryValue: Values gives every task's value
// once the set is empty, cancelling none.
func TestJoinSetValuesCollectsEveryValue(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	var set blitz.JoinSet[int]
	var cancels atomic.Int32
	gates := []*gate{newGate(1, &cancels), newGate(2, &cancels), newGate(3, &cancels)}
	for _, g := range gates {
		set.SpawnOn(rt.Handle(), g)
	}
	res := make(chan future.Result[[]int], 1)
	go func() {
		v, err := blitz.BlockOn(testCtx(t), rt.Handle(), set.Values())
		if err != nil {
			v = future.Fail[[]int](err)
		}
		res <- v
	}()
	for _, i := range []int{2, 0, 1} {
		gates[i].Open()
	}
	r := <-res
	require.NoError(t, r.Err)
	assert.ElementsMatch(t, []int{1, 2, 3}, r.Value)
	assert.Zero(t, set.Len())
	assert.Zero(t, cancels.Load())
}

// TestJoinSetValuesFailsAtTheFirstFailureAndCancelsTheRest: a task that
// panics makes Values fail with its error and cancel the others, whose
// cancellations Next then reports.
func TestJoinSetValuesFailsAtTheFirstFailureAndCancelsTheRest(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	var set blitz.JoinSet[int]
	var cancels atomic.Int32
	set.SpawnOn(rt.Handle(), newGate(1, &cancels))
	set.SpawnOn(rt.Handle(), future.PollFn(func(*future.Context) (int, bool) { panic("boom") }))
	set.SpawnOn(rt.Handle(), newGate(2, &cancels))
	r, err := blitz.BlockOn(testCtx(t), rt.Handle(), set.Values())
	require.NoError(t, err)
	require.ErrorIs(t, r.Err, blitz.ErrPanicked)
	assert.Nil(t, r.Value)
	out, err := set.WaitAll(testCtx(t))
	require.NoError(t, err)
	require.Len(t, out, 2)
	for _, o := range out {
		assert.ErrorIs(t, o.Err, blitz.ErrCancelled)
	}
	assert.EqualValues(t, 2, cancels.Load())
}

// TestJoinSetValuesOfAnEmptySet completes at once with no values.
func TestJoinSetValuesOfAnEmptySet(t *testing.T) {
	var set blitz.JoinSet[string]
	r, ok := set.Values().Poll(future.NewContext(waker.Noop()))
	require.True(t, ok)
	require.NoError(t, r.Err)
	assert.Empty(t, r.Value)
}
