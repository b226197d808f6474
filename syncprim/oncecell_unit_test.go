package syncprim

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
	"github.com/stretchr/testify/require"
)

var errOcInit = errors.New("init failed")

// ocFut is an init future the test completes by hand.
type ocFut struct {
	mu        sync.Mutex
	done      bool
	r         future.Result[int]
	wk        waker.Waker
	polls     int
	cancelled bool
	panicPoll bool
}

func (f *ocFut) Poll(cx *future.Context) (future.Result[int], bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.polls++
	if f.panicPoll {
		panic("poll boom")
	}
	f.wk = cx.Waker()
	return f.r, f.done
}

func (f *ocFut) Cancel() {
	f.mu.Lock()
	f.cancelled = true
	f.mu.Unlock()
}

func (f *ocFut) complete(r future.Result[int]) {
	f.mu.Lock()
	f.done, f.r = true, r
	wk := f.wk
	f.mu.Unlock()
	wk.Wake()
}

// ocInit returns an init function that counts its calls and returns f.
func ocInit(f *ocFut, calls *int) func() future.Future[future.Result[int]] {
	return func() future.Future[future.Result[int]] { *calls++; return f }
}

func TestOnceCellSetGet(t *testing.T) {
	var c OnceCell[string]
	v, ok := c.Get()
	require.False(t, ok)
	require.Equal(t, "", v)
	require.False(t, c.IsInitialized())
	require.NoError(t, c.Set("a"))
	require.ErrorIs(t, c.Set("b"), ErrAlreadySet)
	v, ok = c.Get()
	require.True(t, ok)
	require.Equal(t, "a", v)
	require.True(t, c.IsInitialized())
	_, cx := bnCx()
	f := c.GetOrInit(func() future.Future[future.Result[string]] { panic("not called") })
	r, ok := f.Poll(cx)
	require.True(t, ok)
	require.Equal(t, future.Ok("a"), r)
	require.Equal(t, future.ErrPolledAfterCompletion, bnPanics(func() { f.Poll(cx) }))
	f.Cancel()
	got, err := c.GetOrInitBlocking(context.Background(), func(context.Context) (string, error) { panic("not called") })
	require.NoError(t, err)
	require.Equal(t, "a", got)
}

func TestOnceCellNilInitPanics(t *testing.T) {
	var c OnceCell[int]
	require.Equal(t, ErrNilInit, bnPanics(func() { c.GetOrInit(nil) }))
	require.Equal(t, ErrNilInit, bnPanics(func() { c.GetOrInitBlocking(context.Background(), nil) }))
	_, cx := bnCx()
	f := c.GetOrInit(func() future.Future[future.Result[int]] { return nil })
	require.Equal(t, ErrNilInit, bnPanics(func() { f.Poll(cx) }))
	require.False(t, c.IsInitialized())
	require.NoError(t, c.Set(1), "not stuck in INITIALIZING")
}

func TestOnceCellOwnerAndWaiters(t *testing.T) {
	var c OnceCell[int]
	var initF ocFut
	calls, otherCalls := 0, 0
	_, cx1 := bnCx()
	w2, cx2 := bnCx()
	f1 := c.GetOrInit(ocInit(&initF, &calls))
	f2 := c.GetOrInit(ocInit(new(ocFut), &otherCalls))
	_, ok := f1.Poll(cx1)
	require.False(t, ok)
	require.Equal(t, 1, calls)
	require.ErrorIs(t, c.Set(5), ErrInitializing)
	_, ok = f2.Poll(cx2)
	require.False(t, ok)
	done := make(chan int, 1)
	go func() {
		v, err := c.GetOrInitBlocking(context.Background(), func(context.Context) (int, error) { panic("not called") })
		if err != nil {
			t.Error(err)
		}
		done <- v
	}()
	require.True(t, waitUntil(t, "two queued waiters", func() bool { return c.waiterCount() == 2 }))
	initF.complete(future.Ok(7))
	r, ok := f1.Poll(cx1)
	require.True(t, ok)
	require.Equal(t, future.Ok(7), r)
	require.EqualValues(t, 1, w2.n.Load())
	r, ok = f2.Poll(cx2)
	require.True(t, ok)
	require.Equal(t, future.Ok(7), r)
	require.Equal(t, 7, <-done)
	require.Equal(t, 0, otherCalls)
	require.Equal(t, 1, calls)
}

func TestOnceCellFailurePassesRight(t *testing.T) {
	var c OnceCell[int]
	var a, b ocFut
	ca, cb := 0, 0
	_, cx1 := bnCx()
	w2, cx2 := bnCx()
	f1 := c.GetOrInit(ocInit(&a, &ca))
	f2 := c.GetOrInit(ocInit(&b, &cb))
	f1.Poll(cx1)
	f2.Poll(cx2)
	a.complete(future.Fail[int](errOcInit))
	r, ok := f1.Poll(cx1)
	require.True(t, ok)
	require.ErrorIs(t, r.Err, errOcInit)
	require.EqualValues(t, 1, w2.n.Load())
	require.False(t, c.IsInitialized())
	_, ok = f2.Poll(cx2) // now the owner: calls its own init
	require.False(t, ok)
	require.Equal(t, 1, cb)
	b.complete(future.Ok(3))
	r, ok = f2.Poll(cx2)
	require.True(t, ok)
	require.Equal(t, future.Ok(3), r)
	// Failure with nobody waiting: back to UNINITIALIZED.
	var d OnceCell[int]
	var e ocFut
	e.complete(future.Fail[int](errOcInit))
	f := d.GetOrInit(ocInit(&e, new(int)))
	r, ok = f.Poll(cx1)
	require.True(t, ok)
	require.ErrorIs(t, r.Err, errOcInit)
	require.NoError(t, d.Set(1))
}

func TestOnceCellCancelPassesRight(t *testing.T) {
	var c OnceCell[int]
	var a, b, d ocFut
	_, cx := bnCx()
	// Cancel before the first poll: nothing happens.
	f0 := c.GetOrInit(ocInit(&a, new(int)))
	f0.Cancel()
	f0.Cancel()
	require.Equal(t, future.ErrPolledAfterCancel, bnPanics(func() { f0.Poll(cx) }))
	f1 := c.GetOrInit(ocInit(&a, new(int)))
	f2 := c.GetOrInit(ocInit(&b, new(int)))
	f3 := c.GetOrInit(ocInit(&d, new(int)))
	f1.Poll(cx)
	f2.Poll(cx)
	f3.Poll(cx)
	f1.Cancel() // the owner: cancels its init future, passes to f2
	require.True(t, a.cancelled)
	require.Equal(t, 1, c.waiterCount())
	f2.Cancel() // handed the right, not repolled: passes to f3
	require.False(t, b.cancelled, "f2 never called its init")
	_, ok := f3.Poll(cx)
	require.False(t, ok)
	require.Equal(t, 1, d.polls)
	d.complete(future.Ok(9))
	r, ok := f3.Poll(cx)
	require.True(t, ok)
	require.Equal(t, 9, r.Value)
	// A queued waiter cancelled leaves the list.
	var e OnceCell[int]
	g1 := e.GetOrInit(ocInit(&ocFut{}, new(int)))
	g2 := e.GetOrInit(ocInit(&ocFut{}, new(int)))
	g1.Poll(cx)
	g2.Poll(cx)
	g2.Cancel()
	require.Equal(t, 0, e.waiterCount())
	g1.Cancel()
	require.NoError(t, e.Set(1))
	// Woken with the value but cancelled before the repoll: nothing to do.
	var h OnceCell[int]
	var hf ocFut
	h1 := h.GetOrInit(ocInit(&hf, new(int)))
	h2 := h.GetOrInit(ocInit(&ocFut{}, new(int)))
	h1.Poll(cx)
	h2.Poll(cx)
	hf.complete(future.Ok(1))
	h1.Poll(cx)
	h2.Cancel()
	v, ok := h.Get()
	require.True(t, ok)
	require.Equal(t, 1, v)
}

func TestOnceCellPanicInInitPassesRight(t *testing.T) {
	var c OnceCell[int]
	_, cx := bnCx()
	f1 := c.GetOrInit(func() future.Future[future.Result[int]] { panic("boom") })
	require.Equal(t, "boom", bnPanics(func() { f1.Poll(cx) }))
	require.False(t, c.IsInitialized())
	pf := &ocFut{panicPoll: true}
	f2 := c.GetOrInit(ocInit(pf, new(int)))
	w3, cx3 := bnCx()
	var ok3 ocFut
	f3 := c.GetOrInit(ocInit(&ok3, new(int)))
	_, cx2 := bnCx()
	f2Started := false
	pf.mu.Lock()
	pf.panicPoll = false // first poll registers, the second panics
	pf.mu.Unlock()
	_, f2Started = f2.Poll(cx2)
	require.False(t, f2Started)
	f3.Poll(cx3)
	pf.mu.Lock()
	pf.panicPoll = true
	pf.mu.Unlock()
	require.Equal(t, "poll boom", bnPanics(func() { f2.Poll(cx2) }))
	require.EqualValues(t, 1, w3.n.Load(), "the right passed to f3")
	f2.Cancel() // no-op after the panic
	ok3.complete(future.Ok(4))
	r, ok := f3.Poll(cx3)
	require.True(t, ok)
	require.Equal(t, 4, r.Value)
	// Blocking: a panic in init passes on too.
	var d OnceCell[int]
	require.Equal(t, "boom", bnPanics(func() {
		d.GetOrInitBlocking(context.Background(), func(context.Context) (int, error) { panic("boom") })
	}))
	require.NoError(t, d.Set(2))
}

func TestOnceCellBlocking(t *testing.T) {
	var c OnceCell[int]
	v, err := c.GetOrInitBlocking(context.Background(), func(context.Context) (int, error) { return 0, errOcInit })
	require.ErrorIs(t, err, errOcInit)
	require.Equal(t, 0, v)
	require.False(t, c.IsInitialized())
	// A waiting goroutine's ctx ends: wrapped error, no trace.
	var a ocFut
	_, cx := bnCx()
	f := c.GetOrInit(ocInit(&a, new(int)))
	f.Poll(cx)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	_, err = c.GetOrInitBlocking(ctx, func(context.Context) (int, error) { return 1, nil })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, 0, c.waiterCount())
	// A blocking waiter handed the right after the owner failed runs its init.
	done := make(chan int, 1)
	go func() {
		v, err := c.GetOrInitBlocking(context.Background(), func(context.Context) (int, error) { return 8, nil })
		if err != nil {
			t.Error(err)
		}
		done <- v
	}()
	require.True(t, waitUntil(t, "one queued waiter", func() bool { return c.waiterCount() == 1 }))
	a.complete(future.Fail[int](errOcInit))
	r, _ := f.Poll(cx)
	require.ErrorIs(t, r.Err, errOcInit)
	require.Equal(t, 8, <-done)
	v, _ = c.Get()
	require.Equal(t, 8, v)
}

// TestOnceCellBlockingCtxRacesGrant: a waiting goroutine whose ctx ends as
// the owner fails either takes the right or passes it on; the cell ends
// initialized by someone, never stuck.
func TestOnceCellBlockingCtxRacesGrant(t *testing.T) {
	rounds := 1_000
	if testing.Short() {
		rounds = 200
	}
	for range rounds {
		var c OnceCell[int]
		var a ocFut
		_, cx := bnCx()
		f := c.GetOrInit(ocInit(&a, new(int)))
		f.Poll(cx)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := c.GetOrInitBlocking(ctx, func(context.Context) (int, error) { return 2, nil })
			errc <- err
		}()
		for c.waiterCount() != 1 {
			time.Sleep(10 * time.Microsecond)
		}
		go cancel()
		a.complete(future.Fail[int](errOcInit))
		f.Poll(cx)
		err := <-errc
		cancel()
		if err == nil {
			require.True(t, c.IsInitialized())
		} else {
			require.ErrorIs(t, err, context.Canceled)
			require.False(t, c.IsInitialized())
			require.NoError(t, c.Set(1), "stuck in INITIALIZING")
		}
	}
}

// nilInitString and nilInitBlocking are inits that an initialized cell
// never calls (package-level, so taking them allocates nothing).
func nilInitString() future.Future[future.Result[string]] { panic("not called") }

func nilInitBlocking(context.Context) (string, error) { panic("not called") }
