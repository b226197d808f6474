package channels

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/stretchr/testify/require"
)

func TestBroadcastCapacity(t *testing.T) {
	require.PanicsWithValue(t, ErrCapacity, func() { NewBroadcast[int](0) })
	require.PanicsWithValue(t, ErrCapacity, func() { NewBroadcast[int](-1) })
}

func TestBroadcastSendRecv(t *testing.T) {
	b := NewBroadcast[int](4)
	n, err := b.Send(1)
	require.ErrorIs(t, err, ErrNoReceivers)
	require.Zero(t, n)
	r1 := b.Subscribe()
	r2 := b.Subscribe()
	require.Equal(t, 2, b.ReceiverCount())
	for i := range 3 {
		n, err := b.Send(i)
		require.NoError(t, err)
		require.Equal(t, 2, n)
	}
	r3 := b.Subscribe() // starts at the next message
	_, err = b.Send(3)
	require.NoError(t, err)
	for _, r := range []*BroadcastReceiver[int]{r1, r2} {
		for i := range 4 {
			v, err := r.TryRecv()
			require.NoError(t, err)
			require.Equal(t, i, v)
		}
		_, err := r.TryRecv()
		require.ErrorIs(t, err, ErrEmpty)
	}
	v, err := r3.TryRecv()
	require.NoError(t, err)
	require.Equal(t, 3, v)
	r3.Close()
	r3.Close()
	require.Equal(t, 2, b.ReceiverCount())
	_, err = r3.TryRecv()
	require.ErrorIs(t, err, ErrClosed)
}

func TestBroadcastLag(t *testing.T) {
	for _, capacity := range []int{1, 3, 4} {
		b := NewBroadcast[int](capacity)
		r := b.Subscribe()
		for i := range 10 {
			_, err := b.Send(i)
			require.NoError(t, err)
		}
		_, err := r.TryRecv()
		var le *LaggedError
		require.ErrorAs(t, err, &le)
		require.ErrorIs(t, err, ErrLagged)
		require.EqualValues(t, 10-capacity, le.Missed, "capacity %d", capacity)
		require.Contains(t, err.Error(), "missed")
		for i := 10 - capacity; i < 10; i++ {
			v, err := r.TryRecv()
			require.NoError(t, err)
			require.Equal(t, i, v)
		}
		_, err = r.TryRecv()
		require.ErrorIs(t, err, ErrEmpty)
	}
}

func TestBroadcastCloseDrains(t *testing.T) {
	b := NewBroadcast[int](8)
	r := b.Subscribe()
	for i := range 3 {
		_, _ = b.Send(i)
	}
	b.Close()
	b.Close()
	_, err := b.Send(9)
	require.ErrorIs(t, err, ErrClosed)
	for i := range 3 {
		v, err := r.TryRecv()
		require.NoError(t, err)
		require.Equal(t, i, v)
	}
	_, err = r.TryRecv()
	require.ErrorIs(t, err, ErrClosed)
	_, err = r.RecvBlocking(context.Background())
	require.ErrorIs(t, err, ErrClosed)
	f := r.Recv()
	cx, _ := obwCx()
	res, ok := f.Poll(cx)
	require.True(t, ok)
	require.ErrorIs(t, res.Err, ErrClosed)
}

func TestBroadcastFuture(t *testing.T) {
	b := NewBroadcast[int](2)
	r := b.Subscribe()
	f := r.Recv()
	cx1, c1 := obwCx()
	cx2, c2 := obwCx()
	_, ok := f.Poll(cx1)
	require.False(t, ok)
	_, ok = f.Poll(cx2) // replaces the waker
	require.False(t, ok)
	require.Equal(t, 1, b.waiters())
	_, _ = b.Send(5)
	require.EqualValues(t, 0, c1.n.Load())
	require.EqualValues(t, 1, c2.n.Load())
	require.Equal(t, 0, b.waiters())
	res, ok := f.Poll(cx2)
	require.True(t, ok)
	require.NoError(t, res.Err)
	require.Equal(t, 5, res.Value)
	require.PanicsWithValue(t, future.ErrPolledAfterCompletion, func() { f.Poll(cx2) })
	f.Cancel()

	// Close wakes a waiting future.
	g := r.Recv()
	_, ok = g.Poll(cx1)
	require.False(t, ok)
	b.Close()
	require.EqualValues(t, 1, c1.n.Load())
	res, ok = g.Poll(cx1)
	require.True(t, ok)
	require.ErrorIs(t, res.Err, ErrClosed)
}

func TestBroadcastFutureCancel(t *testing.T) {
	b := NewBroadcast[int](4)
	r := b.Subscribe()
	cx, c := obwCx()

	f := r.Recv() // before the first poll
	f.Cancel()
	f.Cancel()
	require.PanicsWithValue(t, future.ErrPolledAfterCancel, func() { f.Poll(cx) })

	g := r.Recv() // after registering
	_, ok := g.Poll(cx)
	require.False(t, ok)
	g.Cancel()
	require.Equal(t, 0, b.waiters())
	_, _ = b.Send(1)
	require.EqualValues(t, 0, c.n.Load())

	h := r.Recv() // ready at once; cancel after completion is a no-op
	res, ok := h.Poll(cx)
	require.True(t, ok)
	require.Equal(t, 1, res.Value)
	h.Cancel()

	k := r.Recv() // woken, then cancelled before the re-poll: nothing lost
	_, ok = k.Poll(cx)
	require.False(t, ok)
	_, _ = b.Send(2)
	require.EqualValues(t, 1, c.n.Load())
	k.Cancel()
	require.Equal(t, 0, b.waiters())
	v, err := r.TryRecv()
	require.NoError(t, err)
	require.Equal(t, 2, v)
}

func TestBroadcastBlocking(t *testing.T) {
	b := NewBroadcast[int](4)
	r := b.Subscribe()
	go func() {
		waitUntil(t, "the receiver waiting", func() bool { return b.waiters() == 1 })
		_, _ = b.Send(3)
	}()
	v, err := r.RecvBlocking(context.Background())
	require.NoError(t, err)
	require.Equal(t, 3, v)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	_, err = r.RecvBlocking(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, 0, b.waiters())

	_, _ = b.Send(4) // ctx done, message there: available wins
	v, err = r.RecvBlocking(ctx)
	require.NoError(t, err)
	require.Equal(t, 4, v)

	go func() {
		waitUntil(t, "the receiver waiting", func() bool { return b.waiters() == 1 })
		b.Close()
	}()
	_, err = r.RecvBlocking(context.Background())
	require.ErrorIs(t, err, ErrClosed)
}

func TestBroadcastAllocs(t *testing.T) {
	b := NewBroadcast[int](64)
	r := b.Subscribe()
	cx, _ := obwCx()
	require.Zero(t, testing.AllocsPerRun(100, func() {
		_, _ = b.Send(1)
		_, _ = r.TryRecv()
	}))
	require.Zero(t, testing.AllocsPerRun(100, func() { _, _ = r.TryRecv() }))
	// The future lives in the task's state (here: outside the measured
	// function), so a receive that is ready at once allocates nothing.
	var f BroadcastRecvFuture[int]
	require.Zero(t, testing.AllocsPerRun(100, func() {
		_, _ = b.Send(1)
		f = *r.Recv()
		_, ok := f.Poll(cx)
		require.True(t, ok)
	}))
	require.Zero(t, testing.AllocsPerRun(100, func() {
		_, _ = b.Send(1)
		_, _ = r.RecvBlocking(context.Background())
	}))
}

// bcModel is the reference broadcast: the whole log of messages, and each
// receiver's position in it.
type bcModel struct {
	log    []int
	pos    map[int]int
	closed map[int]bool
	shut   bool
	cap    int
}

func (m *bcModel) tryRecv(id int) (v int, missed uint64, err error) {
	if m.closed[id] {
		return 0, 0, ErrClosed
	}
	oldest := max(0, len(m.log)-m.cap)
	p := m.pos[id]
	switch {
	case p < oldest:
		m.pos[id] = oldest
		return 0, uint64(oldest - p), ErrLagged
	case p < len(m.log):
		m.pos[id] = p + 1
		return m.log[p], 0, nil
	case m.shut:
		return 0, 0, ErrClosed
	}
	return 0, 0, ErrEmpty
}

// TestBroadcastModel runs random operations against the model.
func TestBroadcastModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range obwSize(2000, 300) {
		capacity := 1 + rng.IntN(5)
		b := NewBroadcast[int](capacity)
		m := &bcModel{pos: map[int]int{}, closed: map[int]bool{}, cap: capacity}
		var rs []*BroadcastReceiver[int]
		next := 0
		for range 60 {
			switch op := rng.IntN(10); {
			case op < 4:
				n, err := b.Send(next)
				live := len(rs) - len(m.closed)
				switch {
				case m.shut:
					require.ErrorIs(t, err, ErrClosed)
				case live == 0:
					require.ErrorIs(t, err, ErrNoReceivers)
				default:
					require.NoError(t, err)
					require.Equal(t, live, n)
					m.log = append(m.log, next)
				}
				next++
			case op == 4:
				m.pos[len(rs)] = len(m.log)
				rs = append(rs, b.Subscribe())
			case op == 5 && len(rs) > 0:
				id := rng.IntN(len(rs))
				rs[id].Close()
				m.closed[id] = true
			case op == 6 && rng.IntN(8) == 0:
				b.Close()
				m.shut = true
			case op >= 7 && len(rs) > 0:
				id := rng.IntN(len(rs))
				v, err := rs[id].TryRecv()
				mv, missed, merr := m.tryRecv(id)
				require.ErrorIs(t, err, merr)
				require.Equal(t, mv, v)
				var le *LaggedError
				if errors.As(err, &le) {
					require.Equal(t, missed, le.Missed)
				}
			}
			require.Equal(t, len(rs)-len(m.closed), b.ReceiverCount())
		}
	}
}

// bcProgress is one receiver's count of messages, read by the sender.
type bcProgress struct {
	count atomic.Int64
}

// TestBroadcastStress: 4 receivers (2 tasks, 2 goroutines) see every one of
// n messages in order; the sender keeps within the capacity of the slowest
// receiver, so nobody lags.
func TestBroadcastStress(t *testing.T) {
	s := newScheduler(t, 2)
	n := obwSize(1_000_000, 20_000)
	const capacity = 1024
	b := NewBroadcast[int](capacity)
	var prog [4]bcProgress
	errs := make(chan error, 4)
	var failed atomic.Bool
	check := func(i int, v int, err error) bool {
		switch {
		case err == ErrClosed:
			return true
		case err != nil:
			errs <- fmt.Errorf("receiver %d at %d: %w", i, prog[i].count.Load(), err)
			failed.Store(true)
			return true
		case int64(v) != prog[i].count.Load():
			errs <- fmt.Errorf("receiver %d: got %d, want %d", i, v, prog[i].count.Load())
			failed.Store(true)
			return true
		}
		prog[i].count.Add(1)
		return false
	}
	var hs []scheduler.JoinHandle[struct{}]
	var wg sync.WaitGroup
	for i := range 4 {
		r := b.Subscribe()
		if i%2 == 0 {
			var f BroadcastRecvFuture[int]
			started := false
			hs = append(hs, spawnFn(s, func(cx *future.Context) bool {
				for {
					if !started {
						f = *r.Recv()
						started = true
					}
					res, ok := f.Poll(cx)
					if !ok {
						return false
					}
					started = false
					if check(i, res.Value, res.Err) {
						return true
					}
				}
			}))
		} else {
			wg.Go(func() {
				for {
					v, err := r.RecvBlocking(context.Background())
					if check(i, v, err) {
						return
					}
				}
			})
		}
	}
	// The sender waits for the slowest receiver to come within half the
	// capacity. The watchdog measures progress, not time: it reports a
	// lost wakeup only when the slowest receiver has not moved for
	// stallAfter, however long the whole run takes on a loaded machine.
	slowest, moved := int64(-1), time.Now()
send:
	for i := range n {
		for {
			slow := prog[0].count.Load()
			for j := 1; j < 4; j++ {
				slow = min(slow, prog[j].count.Load())
			}
			if int64(i)-slow < capacity/2 || failed.Load() {
				break
			}
			if slow != slowest {
				slowest, moved = slow, time.Now()
			} else if time.Since(moved) > stallAfter { // a lost wakeup: say where everyone is
				t.Errorf("stuck for %v at i=%d prog=%d %d %d %d tail=%d nWait=%d waiters=%d", stallAfter, i, prog[0].count.Load(), prog[1].count.Load(), prog[2].count.Load(), prog[3].count.Load(), b.tail.Load(), b.waiting.n.Load(), b.waiters())
				break send // Close releases the receivers
			}
			runtime.Gosched()
		}
		_, err := b.Send(i)
		require.NoError(t, err)
	}
	b.Close()
	if t.Failed() {
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the goroutine receivers did not return after Close")
		}
		return // the scheduler's shutdown cancels the tasks
	}
	waitAll(t, hs...)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := range prog {
		require.EqualValues(t, n, prog[i].count.Load())
	}
	require.Equal(t, 0, b.waiters())
}

// TestBroadcastLagStress: a fast sender and a tiny ring; each receiver's
// messages are increasing and received + missed = sent, exactly.
func TestBroadcastLagStress(t *testing.T) {
	s := newScheduler(t, 2)
	n := obwSize(200_000, 20_000)
	b := NewBroadcast[int](4)
	type tally struct{ got, missed, last int64 }
	res := make([]tally, 4)
	var hs []scheduler.JoinHandle[struct{}]
	var wg sync.WaitGroup
	fail := make(chan error, 4)
	step := func(i int, v int, err error) bool {
		tl := &res[i]
		var le *LaggedError
		switch {
		case err == nil:
			if int64(v) < tl.last {
				fail <- errors.New("went backwards")
				return true
			}
			tl.last = int64(v)
			tl.got++
		case errors.As(err, &le):
			tl.missed += int64(le.Missed)
		case err == ErrClosed:
			return true
		default:
			fail <- err
			return true
		}
		return false
	}
	for i := range 4 {
		r := b.Subscribe()
		if i < 2 {
			var f BroadcastRecvFuture[int]
			started := false
			hs = append(hs, spawnFn(s, func(cx *future.Context) bool {
				for {
					if !started {
						f, started = *r.Recv(), true
					}
					out, ok := f.Poll(cx)
					if !ok {
						return false
					}
					started = false
					if step(i, out.Value, out.Err) {
						return true
					}
				}
			}))
		} else {
			wg.Go(func() {
				for {
					v, err := r.RecvBlocking(context.Background())
					if step(i, v, err) {
						return
					}
				}
			})
		}
	}
	for i := range n {
		_, err := b.Send(i)
		require.NoError(t, err)
	}
	b.Close()
	waitAll(t, hs...)
	wg.Wait()
	close(fail)
	for err := range fail {
		t.Fatal(err)
	}
	for i, tl := range res {
		require.EqualValues(t, n, tl.got+tl.missed, "receiver %d", i)
		require.EqualValues(t, n-1, tl.last, "receiver %d ends with the last message", i)
	}
}

// TestBroadcastCancelStress races cancelled receives with sends: a
// cancelled receive consumes nothing, and the waiter list ends empty.
func TestBroadcastCancelStress(t *testing.T) {
	s := newScheduler(t, 2)
	n := obwSize(50_000, 5_000)
	b := NewBroadcast[int](n + 1)
	r := b.Subscribe()
	var got []int
	var f BroadcastRecvFuture[int]
	live := false
	h := spawnFn(s, func(cx *future.Context) bool {
		for {
			if live {
				f.Cancel() // abandon the waiting receive, start a new one
			}
			f, live = *r.Recv(), true
			res, ok := f.Poll(cx)
			if !ok {
				return false
			}
			live = false
			if res.Err != nil {
				return true
			}
			got = append(got, res.Value)
		}
	})
	for i := range n {
		_, _ = b.Send(i)
	}
	b.Close()
	waitAll(t, h)
	require.Len(t, got, n)
	for i, v := range got {
		require.Equal(t, i, v)
	}
	require.Equal(t, 0, b.waiters())
}

// TestBroadcastMultiSender: two senders (a goroutine and a task) and a
// ring big enough for everything; every receiver gets each sender's
// messages complete and in that sender's order.
func TestBroadcastMultiSender(t *testing.T) {
	s := newScheduler(t, 2)
	n := obwSize(50_000, 5_000)
	b := NewBroadcast[int](2*n + 1)
	rs := []*BroadcastReceiver[int]{b.Subscribe(), b.Subscribe(), b.Subscribe()}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			_, _ = b.Send(2 * i)
		}
	})
	i := 0
	h := spawnFn(s, func(*future.Context) bool {
		for ; i < n; i++ {
			_, _ = b.Send(2*i + 1)
		}
		return true
	})
	wg.Wait()
	waitAll(t, h)
	b.Close()
	for _, r := range rs {
		next := [2]int{0, 1}
		for {
			v, err := r.RecvBlocking(context.Background())
			if err != nil {
				require.ErrorIs(t, err, ErrClosed)
				break
			}
			require.Equal(t, next[v%2], v)
			next[v%2] += 2
		}
		require.Equal(t, [2]int{2 * n, 2*n + 1}, next)
	}
}
