package scheduler_test

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// gatedPanic panics with its id once its gate opens.
type gatedPanic struct {
	id int
	g  *gate
}

func (p *gatedPanic) Poll(cx *future.Context) (int, bool) {
	if !p.g.poll(cx) {
		return 0, false
	}
	panic(fmt.Sprintf("task %d", p.id))
}

// TestFinishRacesDetachAndPoll races each task's completion (a panic, once
// its gate opens) with its handle's Detach, from another goroutine, and
// with a third goroutine polling or waiting on a copy of the handle: the
// completion publishes the outcome without a lock, and whichever of the
// completion and the Detach holds the last reference releases it. The
// panic of a task whose handle is detached is reported to Config.OnPanic
// exactly once, whatever the order (also when a Wait saw it before the
// Detach, as Detach documents); the panic of any other task is never
// reported, and its Wait returns it.
func TestFinishRacesDetachAndPoll(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	var reported sync.Map // id -> count
	var nReported atomic.Int32
	e := newEnv(t, scheduler.Config{Workers: 2, OnPanic: func(pe *scheduler.PanicError) {
		v, _ := reported.LoadOrStore(pe.Value, new(atomic.Int32))
		v.(*atomic.Int32).Add(1)
		nReported.Add(1)
	}})
	type task struct {
		h        scheduler.JoinHandle[int]
		g        *gate
		detached bool
	}
	tasks := make([]task, n)
	for i := range tasks {
		g := &gate{}
		tasks[i] = task{h: scheduler.Spawn(e.s, nil, future.Future[int](&gatedPanic{id: i, g: g})), g: g, detached: i%2 == 0}
	}
	var collected atomic.Int32
	var wg sync.WaitGroup
	for i, tk := range tasks {
		eventually(t, tk.g.registered, "task %d polled", i)
		wg.Add(3)
		go func() { defer wg.Done(); tk.g.Open() }()
		go func() {
			defer wg.Done()
			if tk.detached {
				runtime.Gosched()
				tk.h.Detach()
			}
		}()
		go func() {
			defer wg.Done()
			_, err := tk.h.Wait(e.ctx())
			var pe *scheduler.PanicError
			switch {
			case errors.As(err, &pe):
				if pe.Value != fmt.Sprintf("task %d", i) {
					e.failf("task %d: another task's panic %v", i, pe.Value)
				}
				collected.Add(1)
			case errors.Is(err, scheduler.ErrDetached) && tk.detached:
			default:
				e.failf("task %d (detached %v): Wait returned %v", i, tk.detached, err)
			}
		}()
	}
	wg.Wait()
	e.checkNow()
	count := func(i int) int32 {
		if v, ok := reported.Load(fmt.Sprintf("task %d", i)); ok {
			return v.(*atomic.Int32).Load()
		}
		return 0
	}
	deadline := time.Now().Add(waitTimeout)
	for int(nReported.Load()) < n/2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond) // a second report, if any, comes now
	for i, tk := range tasks {
		if tk.detached {
			require.Equal(t, int32(1), count(i), "task %d, detached: reports", i)
		} else {
			require.Zero(t, count(i), "task %d: reported though its handle collected it", i)
		}
	}
	require.GreaterOrEqual(t, int(collected.Load()), n/2, "panics collected through handles")
	eventually(t, func() bool { return e.s.Stats().Live == 0 }, "live back to 0")
}
