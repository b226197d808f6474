package channels

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
	"github.com/stretchr/testify/require"
)

// obwCounter is a Wakeable that counts its wakes (shared by the oneshot,
// broadcast and watch tests).
type obwCounter struct{ n atomic.Int64 }

func (c *obwCounter) Wake() { c.n.Add(1) }

// obwCx returns a poll context whose waker counts into a new counter.
func obwCx() (*future.Context, *obwCounter) {
	c := new(obwCounter)
	return future.NewContext(waker.New(c)), c
}

// obwSize scales a stress size with testing.Short.
func obwSize(full, short int) int {
	if testing.Short() {
		return short
	}
	return full
}

func TestOneshotSendTryRecv(t *testing.T) {
	tx, rx := NewOneshot[int]()
	_, err := rx.TryRecv()
	require.ErrorIs(t, err, ErrEmpty)
	require.NoError(t, tx.Send(7))
	require.ErrorIs(t, tx.Send(8), ErrAlreadySent)
	tx.Close() // no-op after a send
	v, err := rx.TryRecv()
	require.NoError(t, err)
	require.Equal(t, 7, v)
	_, err = rx.TryRecv()
	require.ErrorIs(t, err, ErrClosed, "the value is delivered once")
	require.False(t, tx.IsClosed())
}

func TestOneshotSenderClose(t *testing.T) {
	tx, rx := NewOneshot[string]()
	tx.Close()
	tx.Close() // idempotent
	_, err := rx.TryRecv()
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, tx.Send("x"), ErrClosed)
	v, err := rx.RecvBlocking(context.Background())
	require.ErrorIs(t, err, ErrClosed)
	require.Empty(t, v)
}

func TestOneshotReceiverClose(t *testing.T) {
	tx, rx := NewOneshot[int]()
	rx.Close()
	rx.Close()
	require.True(t, tx.IsClosed())
	require.ErrorIs(t, tx.Send(1), ErrClosed)
	_, err := rx.TryRecv()
	require.ErrorIs(t, err, ErrClosed)

	// A value sent before the receiver's Close stays receivable.
	tx, rx = NewOneshot[int]()
	require.NoError(t, tx.Send(5))
	rx.Close()
	v, err := rx.TryRecv()
	require.NoError(t, err)
	require.Equal(t, 5, v)
}

func TestOneshotFutureWake(t *testing.T) {
	tx, rx := NewOneshot[int]()
	f := rx.Recv()
	cx, c := obwCx()
	_, ok := f.Poll(cx)
	require.False(t, ok)
	require.Equal(t, 1, rx.st.waiters())
	_, ok = f.Poll(cx) // same waker: kept
	require.False(t, ok)
	require.NoError(t, tx.Send(3))
	require.EqualValues(t, 1, c.n.Load())
	res, ok := f.Poll(cx)
	require.True(t, ok)
	require.NoError(t, res.Err)
	require.Equal(t, 3, res.Value)
	require.PanicsWithValue(t, future.ErrPolledAfterCompletion, func() { f.Poll(cx) })
	f.Cancel() // no-op after completion
}

func TestOneshotFutureWakerReplaced(t *testing.T) {
	tx, rx := NewOneshot[int]()
	f := rx.Recv()
	cx1, c1 := obwCx()
	cx2, c2 := obwCx()
	_, ok := f.Poll(cx1)
	require.False(t, ok)
	_, ok = f.Poll(cx2)
	require.False(t, ok)
	tx.Close()
	require.EqualValues(t, 0, c1.n.Load(), "the replaced waker is not woken")
	require.EqualValues(t, 1, c2.n.Load())
	res, ok := f.Poll(cx2)
	require.True(t, ok)
	require.ErrorIs(t, res.Err, ErrClosed)
}

func TestOneshotFutureCancel(t *testing.T) {
	t.Run("beforePoll", func(t *testing.T) {
		tx, rx := NewOneshot[int]()
		f := rx.Recv()
		f.Cancel()
		f.Cancel()
		cx, _ := obwCx()
		require.PanicsWithValue(t, future.ErrPolledAfterCancel, func() { f.Poll(cx) })
		require.NoError(t, tx.Send(1))
		v, err := rx.TryRecv()
		require.NoError(t, err)
		require.Equal(t, 1, v)
	})
	t.Run("afterRegister", func(t *testing.T) {
		tx, rx := NewOneshot[int]()
		f := rx.Recv()
		cx, c := obwCx()
		_, ok := f.Poll(cx)
		require.False(t, ok)
		f.Cancel()
		require.Equal(t, 0, rx.st.waiters())
		require.NoError(t, tx.Send(2))
		require.EqualValues(t, 0, c.n.Load(), "a cancelled future is not woken")
		g := rx.Recv()
		res, ok := g.Poll(cx)
		require.True(t, ok)
		require.Equal(t, 2, res.Value)
	})
	t.Run("afterWake", func(t *testing.T) {
		tx, rx := NewOneshot[int]()
		f := rx.Recv()
		cx, c := obwCx()
		_, ok := f.Poll(cx)
		require.False(t, ok)
		require.NoError(t, tx.Send(4))
		require.EqualValues(t, 1, c.n.Load())
		f.Cancel() // woken, not re-polled: the value stays
		v, err := rx.TryRecv()
		require.NoError(t, err)
		require.Equal(t, 4, v)
	})
	t.Run("staleCancel", func(t *testing.T) {
		// A cancelled older future must not remove a newer registration.
		tx, rx := NewOneshot[int]()
		f := rx.Recv()
		g := rx.Recv()
		cx1, _ := obwCx()
		cx2, c2 := obwCx()
		f.Poll(cx1)
		g.Poll(cx2)
		f.Cancel()
		require.Equal(t, 1, rx.st.waiters())
		require.NoError(t, tx.Send(1))
		require.EqualValues(t, 1, c2.n.Load())
		g.Cancel()
	})
}

func TestOneshotReceiverCloseWakesFuture(t *testing.T) {
	_, rx := NewOneshot[int]()
	f := rx.Recv()
	cx, c := obwCx()
	_, ok := f.Poll(cx)
	require.False(t, ok)
	rx.Close()
	require.EqualValues(t, 1, c.n.Load())
	res, ok := f.Poll(cx)
	require.True(t, ok)
	require.ErrorIs(t, res.Err, ErrClosed)
}

func TestOneshotBlocking(t *testing.T) {
	tx, rx := NewOneshot[int]()
	go func() {
		waitUntil(t, "the receiver waiting", func() bool { return rx.st.waiters() == 1 })
		_ = tx.Send(9)
	}()
	v, err := rx.RecvBlocking(context.Background())
	require.NoError(t, err)
	require.Equal(t, 9, v)

	_, rx = NewOneshot[int]()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	_, err = rx.RecvBlocking(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, 0, rx.st.waiters())

	// ctx already done with the value there: available wins.
	tx, rx = NewOneshot[int]()
	require.NoError(t, tx.Send(1))
	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	v, err = rx.RecvBlocking(done)
	require.NoError(t, err)
	require.Equal(t, 1, v)

	// Receiver closed while a goroutine waits.
	_, rx = NewOneshot[int]()
	go func() {
		waitUntil(t, "the receiver waiting", func() bool { return rx.st.waiters() == 1 })
		rx.Close()
	}()
	_, err = rx.RecvBlocking(context.Background())
	require.ErrorIs(t, err, ErrClosed)
}

func TestOneshotBlockingCancelKeepsValue(t *testing.T) {
	tx, rx := NewOneshot[int]()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() {
		_, err := rx.RecvBlocking(ctx)
		errc <- err
	}()
	require.True(t, waitUntil(t, "the receiver waiting", func() bool { return rx.st.waiters() == 1 }))
	cancel()
	err := <-errc
	if err == nil {
		t.Fatal("no value was sent")
	}
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, tx.Send(3))
	v, err := rx.TryRecv()
	require.NoError(t, err)
	require.Equal(t, 3, v)
}

func TestOneshotAllocs(t *testing.T) {
	tx, rx := NewOneshot[int]()
	cx, _ := obwCx()
	require.Zero(t, testing.AllocsPerRun(100, func() { _, _ = rx.TryRecv() }))
	require.NoError(t, tx.Send(1))
	require.Zero(t, testing.AllocsPerRun(100, func() {
		f := rx.Recv()
		f.Poll(cx)
	}))
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = tx.Send(2) }))
	sink := make([]OneshotReceiver[int], 1)
	require.Equal(t, 1.0, testing.AllocsPerRun(100, func() {
		tx, rx := NewOneshot[int]()
		_ = tx.Send(1)
		sink[0] = rx // escapes: the state is one heap allocation
	}), "one allocation per oneshot")
}

// TestOneshotTasks delivers values between tasks and goroutines.
func TestOneshotTasks(t *testing.T) {
	s := newScheduler(t, 2)
	n := obwSize(2000, 200)
	var got atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		tx, rx := NewOneshot[int]()
		f := rx.Recv()
		h := spawnFn(s, func(cx *future.Context) bool {
			res, ok := f.Poll(cx)
			if ok && res.Err == nil {
				got.Add(int64(res.Value))
			}
			return ok
		})
		if i%2 == 0 {
			wg.Go(func() { _ = tx.Send(i) })
		} else {
			h2 := spawnFn(s, func(*future.Context) bool { _ = tx.Send(i); return true })
			waitAll(t, h2)
		}
		waitAll(t, h)
	}
	wg.Wait()
	require.EqualValues(t, n*(n-1)/2, got.Load())
}

// TestOneshotStress races send, close and receive (task, goroutine,
// TryRecv, a cancelled future, a timed-out blocking receive) on many
// oneshots: each value is delivered exactly once if Send returned nil (a
// final TryRecv collects one a receiver left behind) and never if Send
// returned an error.
func TestOneshotStress(t *testing.T) {
	s := newScheduler(t, 4)
	n := obwSize(100_000, 5_000)
	const batch = 1000
	for base := 0; base < n; base += batch {
		var wg sync.WaitGroup
		var hs []scheduler.JoinHandle[struct{}]
		got := make([]atomic.Int32, batch)
		sentOK := make([]atomic.Bool, batch)
		rxs := make([]OneshotReceiver[int], batch)
		for j := range batch {
			tx, rx := NewOneshot[int]()
			rxs[j] = rx
			deliver := func(v int) { got[v].Add(1) }
			wg.Go(func() {
				if tx.Send(j) == nil {
					sentOK[j].Store(true)
				}
			})
			if j%3 == 0 {
				wg.Go(func() { rx.Close() })
			}
			if j%5 == 0 {
				wg.Go(func() { tx.Close() }) // races the Send: one of them wins
			}
			switch j % 4 {
			case 0: // a task
				f := rx.Recv()
				hs = append(hs, spawnFn(s, func(cx *future.Context) bool {
					res, ok := f.Poll(cx)
					if ok && res.Err == nil {
						deliver(res.Value)
					}
					return ok
				}))
			case 1: // a goroutine
				wg.Go(func() {
					if v, err := rx.RecvBlocking(context.Background()); err == nil {
						deliver(v)
					}
				})
			case 2: // a task that gives up after one poll
				f := rx.Recv()
				hs = append(hs, spawnFn(s, func(cx *future.Context) bool {
					if res, ok := f.Poll(cx); ok {
						if res.Err == nil {
							deliver(res.Value)
						}
						return true
					}
					f.Cancel()
					return true
				}))
			case 3: // a goroutine with a very short deadline
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), time.Microsecond)
					defer cancel()
					if v, err := rx.RecvBlocking(ctx); err == nil {
						deliver(v)
					}
				})
			}
		}
		wg.Wait()
		for _, h := range hs {
			if _, err := h.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		for j, rx := range rxs {
			if v, err := rx.TryRecv(); err == nil {
				got[v].Add(1)
			} else if err != ErrClosed {
				t.Fatalf("oneshot %d: final TryRecv: %v", base+j, err)
			}
			want := int32(0)
			if sentOK[j].Load() {
				want = 1
			}
			require.Equal(t, want, got[j].Load(), "oneshot %d", base+j)
		}
	}
}

// oneshotModel is the reference: a plain mutex-free sequential model.
type oneshotModel struct {
	sent, value, txClosed, rxClosed, taken bool
	v                                      int
}

func (m *oneshotModel) send(v int) error {
	switch {
	case m.rxClosed || m.txClosed:
		return ErrClosed
	case m.sent:
		return ErrAlreadySent
	}
	m.sent, m.value, m.v = true, true, v
	return nil
}

func (m *oneshotModel) tryRecv() (int, error) {
	switch {
	case m.taken:
		return 0, ErrClosed
	case m.value:
		m.taken = true
		return m.v, nil
	case m.txClosed || m.rxClosed:
		return 0, ErrClosed
	}
	return 0, ErrEmpty
}

// TestOneshotModel runs random sequences of every operation against the
// model, futures included.
func TestOneshotModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range obwSize(20_000, 2_000) {
		tx, rx := NewOneshot[int]()
		var m oneshotModel
		var f *OneshotRecvFuture[int]
		cx, c := obwCx()
		fwoken := int64(0)
		for step := range 8 {
			switch rng.IntN(7) {
			case 0:
				v := iter*10 + step
				require.Equal(t, m.send(v), tx.Send(v))
			case 1:
				tx.Close()
				if !m.sent {
					m.txClosed = true
				}
			case 2:
				rx.Close()
				m.rxClosed = true
			case 3:
				v, err := rx.TryRecv()
				mv, merr := m.tryRecv()
				require.Equal(t, merr, err)
				require.Equal(t, mv, v)
			case 4:
				require.Equal(t, m.rxClosed, tx.IsClosed())
			case 5:
				if f == nil {
					f = new(OneshotRecvFuture[int])
					*f = *rx.Recv()
				}
				res, ok := f.Poll(cx)
				mv, merr := m.tryRecv()
				if merr == ErrEmpty {
					require.False(t, ok)
					fwoken = c.n.Load()
				} else {
					require.True(t, ok)
					require.Equal(t, merr, res.Err)
					require.Equal(t, mv, res.Value)
					f = nil
				}
			case 6:
				if f != nil {
					f.Cancel()
					f = nil
				}
			}
			if f != nil {
				_, merr := m.peek()
				// a waiting future is woken exactly when it can complete
				require.Equal(t, merr != ErrEmpty, c.n.Load() > fwoken, "iter %d step %d", iter, step)
			}
		}
	}
}

func (m *oneshotModel) peek() (int, error) {
	c := *m
	return c.tryRecv()
}

func TestOneshotErrorsAreSentinels(t *testing.T) {
	require.True(t, errors.Is(ErrAlreadySent, ErrAlreadySent))
	require.NotEqual(t, ErrAlreadySent.Error(), ErrClosed.Error())
}

// TestOneshotWakerReplaceRace re-polls with alternating Wakers while the
// sender sends or closes: the Waker registered last is always woken.
func TestOneshotWakerReplaceRace(t *testing.T) {
	n := obwSize(20_000, 2_000)
	var sigs [2]waker.Signal
	cxs := [2]*future.Context{future.NewContext(waker.New(&sigs[0])), future.NewContext(waker.New(&sigs[1]))}
	for i := range n {
		tx, rx := NewOneshot[int]()
		done := make(chan struct{})
		go func() {
			defer close(done)
			if i%2 == 0 {
				_ = tx.Send(i)
			} else {
				tx.Close()
			}
		}()
		f := rx.Recv()
		sigs[0].TryWait()
		sigs[1].TryWait()
		var res future.Result[int]
		ok := false
		last := 0
		for k := 0; k < 6 && !ok; k++ {
			last = k % 2
			res, ok = f.Poll(cxs[last])
		}
		if !ok {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			require.NoError(t, sigs[last].Wait(ctx), "lost wakeup")
			cancel()
			res, ok = f.Poll(cxs[last])
			require.True(t, ok)
		}
		<-done
		if i%2 == 0 {
			require.NoError(t, res.Err)
			require.Equal(t, i, res.Value)
		} else {
			require.ErrorIs(t, res.Err, ErrClosed)
		}
	}
}
