package scheduler

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// gate holds the Wakers of the futures waiting for it to open.
type gate struct {
	mu   sync.Mutex
	open bool
	wks  []waker.Waker
}

// openAll opens the gate and wakes every waiter.
func (g *gate) openAll() {
	g.mu.Lock()
	g.open = true
	wks := g.wks
	g.wks = nil
	g.mu.Unlock()
	for _, w := range wks {
		w.Wake()
	}
}

// gated completes with v once its gate is open.
type gated struct {
	g *gate
	v int
}

func (f *gated) Poll(cx *future.Context) (int, bool) {
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	if f.g.open {
		return f.v, true
	}
	f.g.wks = append(f.g.wks, cx.Waker())
	return 0, false
}

// TestJoinStripesManyAwaiters: tasks whose handles are waited on by several
// goroutines at once (their Wakers beyond the first kept in the join
// stripes, which tasks share), some of which give up before the end and
// some handles detached while awaited: every awaiter that stays gets its
// own task's value or ErrDetached, none is left waiting, and the stripes
// keep nothing once every task finished.
func TestJoinStripesManyAwaiters(t *testing.T) {
	tasks, awaiters := 400, 4
	if testing.Short() {
		tasks = 100
	}
	s, err := New(Config{Workers: 2})
	require.NoError(t, err)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, s.Shutdown(ctx))
	}()
	g := &gate{}
	handles := make([]JoinHandle[int], tasks)
	for i := range handles {
		handles[i] = Spawn(s, nil, future.Future[int](&gated{g: g, v: i}))
	}
	var wg sync.WaitGroup
	var wrong, registered atomic.Int32
	for i, h := range handles {
		for a := range awaiters {
			quitter := a == 1 // gives up before the gate opens
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if quitter {
					var qctx context.Context
					qctx, cancel = context.WithTimeout(ctx, time.Millisecond)
					defer cancel()
					ctx = qctx
				}
				registered.Add(1)
				v, err := h.Wait(ctx)
				switch {
				case quitter && errors.Is(err, context.DeadlineExceeded):
				case errors.Is(err, ErrDetached) && i%5 == 0:
				case err == nil && v == i:
				default:
					wrong.Add(1)
					t.Errorf("task %d, awaiter %d: %d, %v", i, a, v, err)
				}
			})
		}
	}
	for registered.Load() < int32(tasks*awaiters) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // most awaiters are registered now; the quitters are gone
	for i, h := range handles {
		if i%5 == 0 {
			h.Detach()
		}
	}
	g.openAll()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("awaiters left waiting: a wake was lost")
	}
	require.Zero(t, wrong.Load())
	for i := range s.joins {
		st := &s.joins[i]
		st.mu.Lock()
		n := len(st.more)
		st.mu.Unlock()
		require.Zero(t, n, "stripe %d keeps awaiters of finished tasks", i)
	}
}
