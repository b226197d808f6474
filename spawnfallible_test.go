package blitz_test

import (
	"context"
	"errors"
	"testing"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// TestSpawnFallible: the handle of a task whose future yields a Result
// gives the value, the future's error, or the task's own error, each as
// one (T, error), from a task (Poll) and from a goroutine (Wait).
func TestSpawnFallible(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	h := rt.Handle()
	errBad := errors.New("bad")
	ok := blitz.SpawnFallibleOn(h, future.Ready(future.Ok(7)))
	if v, err := ok.Wait(testCtx(t)); v != 7 || err != nil {
		t.Fatalf("Wait: %d, %v; want 7", v, err)
	}
	failed := blitz.SpawnFallibleOn(h, future.Ready(future.Fail[int](errBad)))
	if _, err := failed.Wait(testCtx(t)); !errors.Is(err, errBad) {
		t.Fatalf("Wait: %v; want the future's error", err)
	}
	panicked := blitz.SpawnFallibleOn(h, future.PollFn(func(*future.Context) (future.Result[int], bool) { panic("boom") }))
	if _, err := panicked.Wait(testCtx(t)); !errors.Is(err, blitz.ErrPanicked) {
		t.Fatalf("Wait: %v; want the task's panic", err)
	}
	// From a task: spawn beside itself and await the handle.
	var child blitz.FallibleHandle[int]
	spawned := false
	r, err := blitz.BlockOn(testCtx(t), h, future.PollFn(func(cx *future.Context) (future.Result[int], bool) {
		if !spawned {
			child, spawned = blitz.SpawnFallible(cx, future.Ready(future.Fail[int](errBad))), true
		}
		return child.Poll(cx)
	}))
	if err != nil || !errors.Is(r.Err, errBad) {
		t.Fatalf("awaited from a task: %+v, %v; want the child's error", r, err)
	}
	cancelled := blitz.SpawnFallibleOn(h, future.Pending[future.Result[int]]())
	cancelled.Cancel()
	if _, err := cancelled.Wait(context.Background()); !errors.Is(err, blitz.ErrCancelled) {
		t.Fatalf("Wait: %v; want ErrCancelled", err)
	}
}
