package future_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
	"github.com/stretchr/testify/require"
)

func TestBlockReturnsWhenAChildIsCompletedFromAnotherGoroutine(t *testing.T) {
	var reg future.Registry
	ps := probes(&reg, 3)
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Go(func() {
			time.Sleep(time.Duration(i+1) * time.Millisecond)
			p.Complete(i * 10)
		})
	}
	v, err := future.Block(context.Background(), future.JoinAll(asFutures(ps)...))
	wg.Wait()
	require.NoError(t, err)
	require.Equal(t, []int{0, 10, 20}, v)
	require.Zero(t, reg.Len())
}

func TestBlockRaceReturnsTheFirstAndCancelsTheRest(t *testing.T) {
	var reg future.Registry
	ps := probes(&reg, 3)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for reg.Len() < 3 { // wait until Block's first poll registered all three
			time.Sleep(100 * time.Microsecond)
		}
		ps[1].Complete(7)
	}()
	v, err := future.Block(context.Background(), future.Race(asFutures(ps)...))
	<-done
	require.NoError(t, err)
	require.Equal(t, 7, v)
	require.Equal(t, []int{1, 0, 1}, cancels(ps))
	require.Zero(t, reg.Len())
}

// flagFuture completes once its flag is set; it stores the latest Waker and
// is woken spuriously by the test, so that Block has to recheck.
type flagFuture struct {
	mu    sync.Mutex
	set   bool
	wk    waker.Waker // the Waker of the latest poll; mu
	polls atomic.Int32
}

func (f *flagFuture) Poll(cx *future.Context) (bool, bool) {
	f.polls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.set {
		return true, true
	}
	f.wk = cx.Waker()
	return false, false
}

// wake wakes the registered Waker, setting the flag first if set is true.
func (f *flagFuture) wake(set bool) bool {
	f.mu.Lock()
	if set {
		f.set = true
	}
	wk := f.wk
	f.mu.Unlock()
	wk.Wake()
	return !wk.IsZero()
}

func TestBlockNeverReturnsEarly(t *testing.T) {
	f := &flagFuture{}
	var setAt atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for woken := 0; woken < 50; {
			if f.wake(false) { // spurious: the future is not ready
				woken++
			}
			time.Sleep(50 * time.Microsecond)
		}
		setAt.Store(time.Now().UnixNano())
		f.wake(true)
	}()
	v, err := future.Block(context.Background(), f)
	returnedAt := time.Now().UnixNano()
	<-done
	require.NoError(t, err)
	require.True(t, v)
	require.NotZero(t, setAt.Load())
	require.GreaterOrEqual(t, returnedAt, setAt.Load(), "Block returned before the future was ready")
	require.Greater(t, f.polls.Load(), int32(1), "spurious wakes made Block poll again")
}

func TestBlockWithACancelledContextCancelsTheFuture(t *testing.T) {
	var reg future.Registry
	p := future.NewProbe[int](&reg)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v, err := future.Block(ctx, future.Map(p, func(x int) int { return x }))
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, v)
	st := p.Stats()
	require.Equal(t, 1, st.Cancels)
	require.False(t, st.Registered)
	require.Zero(t, reg.Len())
}

func TestBlockCancelledWhileWaitingCancelsTheFuture(t *testing.T) {
	var reg future.Registry
	ps := probes(&reg, 2)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for reg.Len() < 2 {
			time.Sleep(100 * time.Microsecond)
		}
		cancel()
	}()
	_, err := future.Block(ctx, future.JoinAll(asFutures(ps)...))
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, []int{1, 1}, cancels(ps))
	require.Zero(t, reg.Len())
}

func TestBlockErrorWrapsTheCauseAndTheContextError(t *testing.T) {
	cause := errors.New("shutting down")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	_, err := future.Block(ctx, future.Pending[int]())
	require.ErrorIs(t, err, cause)
	require.ErrorIs(t, err, context.Canceled)

	tctx, tcancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer tcancel()
	_, err = future.Block(tctx, future.Pending[int]())
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestBlockOnAReadyFutureWinsOverADoneContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v, err := future.Block(ctx, future.Ready(3))
	require.NoError(t, err)
	require.Equal(t, 3, v)
}

// TestBlockNilFutureReturnsError: Block returns an error, so a nil future
// is answered with ErrNilFuture there rather than a panic.
func TestBlockNilFutureReturnsError(t *testing.T) {
	var err error
	require.NotPanics(t, func() { _, err = future.Block[int](context.Background(), nil) })
	require.ErrorIs(t, err, future.ErrNilFuture)
}

// TestBlockStaleWakersNeverEndALaterCallEarly: Block reuses its Signal
// and Context from call to call, so the Wakers of finished calls, kept by
// their futures, wake the blockers of later calls. Goroutines each block
// in turn on futures that are completed by another goroutine, while every
// Waker ever handed out is woken again and again; each call must still
// return only once its own future is complete.
func TestBlockStaleWakersNeverEndALaterCallEarly(t *testing.T) {
	goroutines, calls := 4, 300
	if testing.Short() {
		calls = 60
	}
	var (
		mu    sync.Mutex
		stale []*flagFuture // every future handed to Block so far
		stop  atomic.Bool
	)
	var waking sync.WaitGroup
	waking.Go(func() { // wakes every Waker of every past call, spuriously
		for !stop.Load() {
			mu.Lock()
			fs := append([]*flagFuture(nil), stale...)
			mu.Unlock()
			for _, f := range fs {
				f.wake(false)
			}
			time.Sleep(20 * time.Microsecond)
		}
	})
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range calls {
				f := &flagFuture{}
				mu.Lock()
				stale = append(stale, f)
				mu.Unlock()
				var set atomic.Bool
				go func() {
					time.Sleep(50 * time.Microsecond)
					set.Store(true)
					f.wake(true)
				}()
				v, err := future.Block(context.Background(), f)
				if err != nil || !v || !set.Load() {
					t.Errorf("Block returned (%v, %v) before its future was ready", v, err)
					return
				}
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	waking.Wait()
}

// A Blocker put back twice is given out once: the second Put does nothing.
func TestBlockerPutTwice(t *testing.T) {
	b := future.GetBlocker()
	b.Put()
	b.Put()
	x, y := future.GetBlocker(), future.GetBlocker()
	defer x.Put()
	defer y.Put()
	require.NotSame(t, x, y, "one Blocker given to two users")
}
