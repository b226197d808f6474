package scheduler_test

import (
	"context"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// TestLockOSThreads: with LockOSThreads every poll a worker makes runs on
// that worker's one OS thread, across yields and while other goroutines
// make the Go scheduler move threads around (blocking system calls hand
// their P to another thread).
func TestLockOSThreads(t *testing.T) {
	e := newEnv(t, scheduler.Config{Workers: 2, LockOSThreads: true})
	stop := make(chan struct{})
	var churn sync.WaitGroup
	for range 4 {
		churn.Add(1)
		go func() {
			defer churn.Done()
			var ts syscall.Timespec
			for {
				select {
				case <-stop:
					return
				default:
					ts.Nsec = 10_000
					_ = syscall.Nanosleep(&ts, nil)
				}
			}
		}()
	}
	defer func() { close(stop); churn.Wait() }()
	var mu sync.Mutex
	tids := map[int]map[int]bool{} // worker -> threads seen
	var y scheduler.YieldFuture
	polls := 0
	h := scheduler.Spawn(e.s, nil, future.PollFn(func(cx *future.Context) (int, bool) {
		mu.Lock()
		if tids[cx.Worker()] == nil {
			tids[cx.Worker()] = map[int]bool{}
		}
		tids[cx.Worker()][syscall.Gettid()] = true
		mu.Unlock()
		polls++
		if polls%10 == 0 {
			// A blocking system call long enough for the Go scheduler to
			// hand the worker's P to another thread: an unlocked worker
			// may resume on a different thread afterwards.
			ts := syscall.Timespec{Nsec: 200_000}
			_ = syscall.Nanosleep(&ts, nil)
		}
		if polls < 500 {
			y = scheduler.YieldFuture{} // a fresh yield: its first poll wakes the task and returns false
			_, done := y.Poll(cx)
			require.False(t, done)
			return 0, false
		}
		return polls, true
	}))
	n, err := h.Wait(context.Background())
	require.NoError(t, err)
	require.Equal(t, 500, n)
	mu.Lock()
	defer mu.Unlock()
	for w, seen := range tids {
		require.Len(t, seen, 1, "worker %d ran on threads %v", w, seen)
	}
}
