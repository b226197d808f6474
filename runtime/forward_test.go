package runtime_test

// This test uses the deprecated path as a program written against it does.
//lint:file-ignore SA1019 the deprecated package is what is tested

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/runtime"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestOldPathForwards(t *testing.T) {
	ctx := context.Background()
	rt, err := runtime.New(runtime.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	// The old types are the new ones: no conversion anywhere.
	var nrt *blitz.Runtime = rt
	var h blitz.Handle = rt.Handle()
	shut := false
	defer func() {
		if !shut {
			nrt.Shutdown(ctx)
		}
	}()

	var jh runtime.JoinHandle[int] = runtime.SpawnOn(h, future.Ready(42))
	v, err := jh.Wait(ctx)
	if v != 42 || err != nil {
		t.Fatalf("SpawnOn(Ready(42)).Wait = %d, %v; want 42, nil", v, err)
	}

	start := time.Now()
	if _, err := runtime.BlockOn(ctx, h, runtime.Sleep(5*time.Millisecond)); err != nil {
		t.Fatalf("BlockOn(Sleep) = %v", err)
	}
	if d := time.Since(start); d < 5*time.Millisecond {
		t.Fatalf("Sleep(5ms) ended after %v", d)
	}

	r, err := runtime.BlockOn(ctx, h, runtime.Timeout(time.Millisecond, future.Pending[int]()))
	if err != nil || !errors.Is(r.Err, runtime.ErrTimeout) || !errors.Is(r.Err, blitz.ErrTimeout) {
		t.Fatalf("Timeout(Pending) = %v, %v; want an error matching ErrTimeout at both paths", r.Err, err)
	}

	if err := rt.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	shut = true
	_, err = runtime.TrySpawnOn(h, future.Ready(1))
	if !errors.Is(err, runtime.ErrShutdown) || !errors.Is(err, blitz.ErrShutdown) {
		t.Fatalf("TrySpawnOn after Shutdown = %v; want ErrShutdown (old and new path)", err)
	}
}

// TestSentinelsAreTheSame checks that the copied variables are the new package's values.
func TestSentinelsAreTheSame(t *testing.T) {
	for _, c := range []struct {
		name     string
		old, new error
	}{
		{"ErrShutdown", runtime.ErrShutdown, blitz.ErrShutdown},
		{"ErrCancelled", runtime.ErrCancelled, blitz.ErrCancelled},
		{"ErrTimeout", runtime.ErrTimeout, blitz.ErrTimeout},
		{"ErrClosed", runtime.ErrClosed, blitz.ErrClosed},
	} {
		if c.old != c.new || !errors.Is(c.old, c.new) || !errors.Is(c.new, c.old) {
			t.Errorf("runtime.%s is not blitz.%s", c.name, c.name)
		}
	}
}
