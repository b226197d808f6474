package future_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
	"github.com/stretchr/testify/require"
)

// The event and waitFuture below are the package doc's "Writing a future by
// hand" example, verbatim, so that the doc's code is known to compile and
// to keep the poll contract.

type event struct {
	mu      sync.Mutex
	set     bool
	waiters waker.List[struct{}] // guarded by mu
}

// waitFuture is event.Wait's future; its owner polls and cancels it.
type waitFuture struct {
	ev *event                 // set at construction, read-only
	w  waker.Waiter[struct{}] // in ev.waiters while waiting; ev.mu
}

func (f *waitFuture) Poll(cx *future.Context) (struct{}, bool) {
	f.ev.mu.Lock()
	defer f.ev.mu.Unlock()
	switch {
	case f.ev.set:
		f.ev.waiters.Remove(&f.w) // woken or not, leave the list
		return struct{}{}, true
	case f.w.Linked(): // polled again: keep or refresh the Waker
		if !f.w.Waker().WillWake(cx.Waker()) {
			f.w.SetWaker(cx.Waker())
		}
	default: // first poll: register, so that Set wakes us
		f.ev.waiters.PushBack(&f.w, cx.Waker())
	}
	return struct{}{}, false
}

// Cancel leaves the list, so that nothing refers to f afterwards.
func (f *waitFuture) Cancel() {
	f.ev.mu.Lock()
	f.ev.waiters.Remove(&f.w)
	f.ev.mu.Unlock()
}

func (e *event) Set() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.set = true
	e.waiters.WakeAll()
}

func (e *event) waiting() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.waiters.Len()
}

func TestHandWrittenFutureOfThePackageDoc(t *testing.T) {
	ev := &event{}
	go func() {
		for ev.waiting() < 2 {
			time.Sleep(100 * time.Microsecond)
		}
		ev.Set()
	}()
	v, err := future.Block(context.Background(),
		future.JoinAll[struct{}](&waitFuture{ev: ev}, &waitFuture{ev: ev}))
	require.NoError(t, err)
	require.Len(t, v, 2)
	require.Zero(t, ev.waiting())

	// A loser of a race leaves the event's list.
	ev2 := &event{}
	r, err := future.Block(context.Background(),
		future.Select2[struct{}, int](&waitFuture{ev: ev2}, future.Ready(1)))
	require.NoError(t, err)
	require.Equal(t, 1, r.Index)
	require.Zero(t, ev2.waiting())

	// Polled while waiting, and cancelled, it leaves nothing registered.
	ev3 := &event{}
	cx, _ := newCx()
	f := future.Map[struct{}](&waitFuture{ev: ev3}, func(struct{}) int { return 0 })
	_, ok := f.Poll(cx)
	require.False(t, ok)
	require.Equal(t, 1, ev3.waiting())
	future.Cancel(f)
	require.Zero(t, ev3.waiting())
}
