package channels

import (
	"context"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// newScheduler starts a scheduler with the given number of workers for a
// test or benchmark, and shuts it down when the test ends.
func newScheduler(tb testing.TB, workers int) *scheduler.Scheduler {
	tb.Helper()
	s, err := scheduler.New(scheduler.Config{Workers: workers})
	if err != nil {
		tb.Fatalf("scheduler.New: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			tb.Errorf("scheduler.Shutdown: %v", err)
		}
	})
	return s
}

// spawnFn runs a hand-written poll function as a task of s. The function
// is the task's state machine: it keeps its state in variables it closes
// over and returns true when the task is done.
func spawnFn(s *scheduler.Scheduler, fn func(cx *future.Context) bool) scheduler.JoinHandle[struct{}] {
	return scheduler.Spawn(s, nil, future.PollFn(func(cx *future.Context) (struct{}, bool) {
		return struct{}{}, fn(cx)
	}))
}

// spawnFuture runs f as a task of s.
func spawnFuture[T any](s *scheduler.Scheduler, f future.Future[T]) scheduler.JoinHandle[T] {
	return scheduler.Spawn(s, nil, f)
}

// waitAll waits for every handle, failing the test on an error or when
// they take longer than a generous timeout (a hang is a lost wakeup).
func waitAll[T any](tb testing.TB, hs ...scheduler.JoinHandle[T]) []T {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out := make([]T, len(hs))
	for i, h := range hs {
		v, err := h.Wait(ctx)
		if err != nil {
			tb.Fatalf("task %d: %v", i, err)
		}
		out[i] = v
	}
	return out
}
