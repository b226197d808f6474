package channels

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/stretchr/testify/require"
)

func TestWatchBasics(t *testing.T) {
	w := NewWatch("a")
	require.Equal(t, "a", w.Borrow())
	r := w.Subscribe()
	changed, err := r.HasChanged()
	require.NoError(t, err)
	require.False(t, changed, "a new receiver has seen the current version")
	require.NoError(t, w.Send("b"))
	changed, err = r.HasChanged()
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, "b", r.Borrow())
	changed, _ = r.HasChanged()
	require.True(t, changed, "Borrow does not mark seen")
	require.Equal(t, "b", r.BorrowAndUpdate())
	changed, _ = r.HasChanged()
	require.False(t, changed)
	require.NoError(t, w.SendModify(func(s *string) { *s += "c" }))
	require.Equal(t, "bc", r.BorrowAndUpdate())
}

func TestWatchClose(t *testing.T) {
	w := NewWatch(1)
	r := w.Subscribe()
	require.NoError(t, w.Send(2))
	w.Close()
	w.Close()
	require.ErrorIs(t, w.Send(3), ErrClosed)
	called := false
	require.ErrorIs(t, w.SendModify(func(*int) { called = true }), ErrClosed)
	require.False(t, called)
	changed, err := r.HasChanged()
	require.NoError(t, err)
	require.True(t, changed, "the last send is still unseen")
	require.NoError(t, r.ChangedBlocking(context.Background()))
	require.Equal(t, 2, r.Borrow())
	changed, err = r.HasChanged()
	require.ErrorIs(t, err, ErrClosed)
	require.False(t, changed)
	require.ErrorIs(t, r.ChangedBlocking(context.Background()), ErrClosed)
	f := r.Changed()
	cx, _ := obwCx()
	err, ok := f.Poll(cx)
	require.True(t, ok)
	require.ErrorIs(t, err, ErrClosed)
	require.Equal(t, 2, w.Borrow(), "the value stays readable")
}

func TestWatchSendModifyPanic(t *testing.T) {
	w := NewWatch(1)
	require.Panics(t, func() { _ = w.SendModify(func(*int) { panic("boom") }) })
	require.NoError(t, w.Send(2), "the lock was released")
	require.Equal(t, 2, w.Borrow())
}

func TestWatchFuture(t *testing.T) {
	w := NewWatch(0)
	r := w.Subscribe()
	f := r.Changed()
	cx1, c1 := obwCx()
	cx2, c2 := obwCx()
	err, ok := f.Poll(cx1)
	require.False(t, ok)
	require.NoError(t, err)
	_, ok = f.Poll(cx2)
	require.False(t, ok)
	require.Equal(t, 1, w.waiters())
	require.NoError(t, w.Send(1))
	require.EqualValues(t, 0, c1.n.Load())
	require.EqualValues(t, 1, c2.n.Load())
	err, ok = f.Poll(cx2)
	require.True(t, ok)
	require.NoError(t, err)
	changed, _ := r.HasChanged()
	require.False(t, changed, "Changed marks the version seen")
	require.PanicsWithValue(t, future.ErrPolledAfterCompletion, func() { f.Poll(cx2) })
	f.Cancel()

	g := r.Changed()
	_, ok = g.Poll(cx1)
	require.False(t, ok)
	w.Close()
	require.EqualValues(t, 1, c1.n.Load())
	err, ok = g.Poll(cx1)
	require.True(t, ok)
	require.ErrorIs(t, err, ErrClosed)
	require.Equal(t, 0, w.waiters())
}

func TestWatchFutureCancel(t *testing.T) {
	w := NewWatch(0)
	r := w.Subscribe()
	cx, c := obwCx()

	f := r.Changed()
	f.Cancel()
	f.Cancel()
	require.PanicsWithValue(t, future.ErrPolledAfterCancel, func() { f.Poll(cx) })

	g := r.Changed() // after registering
	_, ok := g.Poll(cx)
	require.False(t, ok)
	g.Cancel()
	require.Equal(t, 0, w.waiters())
	require.NoError(t, w.Send(1))
	require.EqualValues(t, 0, c.n.Load())
	changed, _ := r.HasChanged()
	require.True(t, changed, "a cancelled wait marks nothing seen")
	r.BorrowAndUpdate()

	k := r.Changed() // woken, cancelled before the re-poll: the change stays unseen
	_, ok = k.Poll(cx)
	require.False(t, ok)
	require.NoError(t, w.Send(2))
	require.EqualValues(t, 1, c.n.Load())
	k.Cancel()
	require.Equal(t, 0, w.waiters())
	changed, _ = r.HasChanged()
	require.True(t, changed)

	h := r.Changed() // ready at once; cancel after completion is a no-op
	err, ok := h.Poll(cx)
	require.True(t, ok)
	require.NoError(t, err)
	h.Cancel()
}

func TestWatchBlocking(t *testing.T) {
	w := NewWatch(0)
	r := w.Subscribe()
	go func() {
		waitUntil(t, "the receiver waiting", func() bool { return w.waiters() == 1 })
		_ = w.Send(1)
	}()
	require.NoError(t, r.ChangedBlocking(context.Background()))
	require.Equal(t, 1, r.BorrowAndUpdate())

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	err := r.ChangedBlocking(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, 0, w.waiters())

	require.NoError(t, w.Send(2)) // ctx done, change there: available wins
	require.NoError(t, r.ChangedBlocking(ctx))

	go func() {
		waitUntil(t, "the receiver waiting", func() bool { return w.waiters() == 1 })
		w.Close()
	}()
	require.ErrorIs(t, r.ChangedBlocking(context.Background()), ErrClosed)
}

func TestWatchAllocs(t *testing.T) {
	w := NewWatch(0)
	r := w.Subscribe()
	cx, _ := obwCx()
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = w.Borrow() }))
	require.Zero(t, testing.AllocsPerRun(100, func() { _, _ = r.HasChanged() }))
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = w.Send(1) }))
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = r.BorrowAndUpdate() }))
	var f ChangedFuture[int]
	require.Zero(t, testing.AllocsPerRun(100, func() {
		_ = w.Send(1)
		f = *r.Changed()
		_, ok := f.Poll(cx)
		require.True(t, ok)
	}))
	require.Zero(t, testing.AllocsPerRun(100, func() {
		_ = w.Send(1)
		_ = r.ChangedBlocking(context.Background())
	}))
}

// wtModel is the reference watch.
type wtModel struct {
	value, version int
	closed         bool
	seen           []int
}

// TestWatchModel runs random operations against the model.
func TestWatchModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range obwSize(3000, 500) {
		w := NewWatch(0)
		m := &wtModel{}
		var rs []*WatchReceiver[int]
		for step := range 40 {
			id := 0
			if len(rs) > 0 {
				id = rng.IntN(len(rs))
			}
			switch op := rng.IntN(9); {
			case op == 0:
				err := w.Send(step)
				if m.closed {
					require.ErrorIs(t, err, ErrClosed)
				} else {
					require.NoError(t, err)
					m.value, m.version = step, m.version+1
				}
			case op == 1:
				err := w.SendModify(func(v *int) { *v += 100 })
				if m.closed {
					require.ErrorIs(t, err, ErrClosed)
				} else {
					require.NoError(t, err)
					m.value, m.version = m.value+100, m.version+1
				}
			case op == 2:
				rs = append(rs, w.Subscribe())
				m.seen = append(m.seen, m.version)
			case op == 3 && rng.IntN(6) == 0:
				w.Close()
				m.closed = true
			case op == 4 && len(rs) > 0:
				changed, err := rs[id].HasChanged()
				unseen := m.seen[id] != m.version
				require.Equal(t, unseen, changed)
				if !unseen && m.closed {
					require.ErrorIs(t, err, ErrClosed)
				} else {
					require.NoError(t, err)
				}
			case op == 5 && len(rs) > 0:
				require.Equal(t, m.value, rs[id].BorrowAndUpdate())
				m.seen[id] = m.version
			case op == 6 && len(rs) > 0:
				require.Equal(t, m.value, rs[id].Borrow())
			case op == 7 && len(rs) > 0:
				f := rs[id].Changed()
				cx, _ := obwCx()
				err, ok := f.Poll(cx)
				switch {
				case m.seen[id] != m.version:
					require.True(t, ok)
					require.NoError(t, err)
					m.seen[id] = m.version
				case m.closed:
					require.True(t, ok)
					require.ErrorIs(t, err, ErrClosed)
				default:
					require.False(t, ok)
					f.Cancel()
				}
			case op == 8:
				require.Equal(t, m.value, w.Borrow())
			}
			require.Equal(t, 0, w.waiters())
		}
	}
}

// TestWatchStress: one sender (Send and SendModify) and 4 receivers (2
// tasks, 2 goroutines) waiting on Changed: nobody sees a value go
// backwards, and everybody ends with the final value, first without a
// Close (a missed last send would hang) and then with one.
func TestWatchStress(t *testing.T) {
	s := newScheduler(t, 2)
	n := obwSize(200_000, 20_000)
	w := NewWatch(0)
	fail := make(chan error, 4)
	step := func(r *WatchReceiver[int], last *int, err error) bool {
		if err != nil {
			if !errors.Is(err, ErrClosed) {
				fail <- err
			}
			return true
		}
		v := r.BorrowAndUpdate()
		if v < *last {
			fail <- errors.New("a value went backwards")
			return true
		}
		*last = v
		return v == n
	}
	var hs []scheduler.JoinHandle[struct{}]
	var wg sync.WaitGroup
	lasts := make([]int, 4)
	for i := range 4 {
		r := w.Subscribe()
		if i < 2 {
			var f ChangedFuture[int]
			started := false
			hs = append(hs, spawnFn(s, func(cx *future.Context) bool {
				for {
					if !started {
						f, started = *r.Changed(), true
					}
					err, ok := f.Poll(cx)
					if !ok {
						return false
					}
					started = false
					if step(r, &lasts[i], err) {
						return true
					}
				}
			}))
		} else {
			wg.Go(func() {
				for !step(r, &lasts[i], r.ChangedBlocking(context.Background())) {
				}
			})
		}
	}
	for i := 1; i <= n; i++ {
		if i%2 == 0 {
			require.NoError(t, w.Send(i))
		} else {
			require.NoError(t, w.SendModify(func(v *int) { *v = i }))
		}
	}
	waitAll(t, hs...)
	wg.Wait()
	w.Close()
	close(fail)
	for err := range fail {
		t.Fatal(err)
	}
	for i, last := range lasts {
		require.Equal(t, n, last, "receiver %d", i)
	}
	require.Equal(t, 0, w.waiters())

	// With a Close: receivers run until ErrClosed and still end on the
	// final value.
	w = NewWatch(0)
	var wg2 sync.WaitGroup
	res := make([]int, 3)
	for i := range 3 {
		r := w.Subscribe()
		wg2.Go(func() {
			for r.ChangedBlocking(context.Background()) == nil {
				res[i] = r.BorrowAndUpdate()
			}
		})
	}
	for i := 1; i <= n/10; i++ {
		_ = w.Send(i)
	}
	w.Close()
	wg2.Wait()
	for _, v := range res {
		require.Equal(t, n/10, v)
	}
}
