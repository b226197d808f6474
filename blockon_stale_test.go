package blitz_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// settable completes once set; it keeps the Waker of its latest poll.
type settable struct {
	mu  sync.Mutex
	set bool
	wk  waker.Waker
}

func (s *settable) Poll(cx *future.Context) (bool, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set {
		return true, true
	}
	s.wk = cx.Waker()
	return false, false
}

// wake wakes the kept Waker, setting the future first if set.
func (s *settable) wake(set bool) {
	s.mu.Lock()
	s.set = s.set || set
	wk := s.wk
	s.mu.Unlock()
	wk.Wake()
}

// BlockOn reuses its Signal and Context from call to call, so the Wakers
// of finished calls wake later calls. Goroutines block in turn on futures
// set by another goroutine while every Waker ever handed out is woken
// again and again: no call may return before its own future is set.
func TestBlockOnStaleWakersNeverEndALaterCallEarly(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	calls := 200
	if testing.Short() {
		calls = 50
	}
	var (
		mu    sync.Mutex
		stale []*settable
		stop  atomic.Bool
		storm sync.WaitGroup
	)
	storm.Go(func() {
		for !stop.Load() {
			mu.Lock()
			fs := append([]*settable(nil), stale...)
			mu.Unlock()
			for _, f := range fs {
				f.wake(false)
			}
			time.Sleep(20 * time.Microsecond)
		}
	})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range calls {
				f := &settable{}
				mu.Lock()
				stale = append(stale, f)
				mu.Unlock()
				var set atomic.Bool
				go func() {
					time.Sleep(50 * time.Microsecond)
					set.Store(true)
					f.wake(true)
				}()
				v, err := blitz.BlockOn(context.Background(), rt.Handle(), future.Future[bool](f))
				if err != nil || !v || !set.Load() {
					t.Errorf("BlockOn returned (%v, %v) before its future was set", v, err)
					return
				}
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	storm.Wait()
}
