package blitz_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
)

// TestUnusedRuntimeSleeps: a runtime that was never used (its workers
// start in New) costs no wake-ups: once its workers have parked, none
// polls or parks again while nothing happens, and it holds one goroutine
// per worker and no more. This is the measured reason workers start
// eagerly instead of at the first spawn (see New).
func TestUnusedRuntimeSleeps(t *testing.T) {
	before := runtime.NumGoroutine()
	rt := newRuntime(t, blitz.Config{Workers: 2})
	parked := func() (parks uint64, polls uint64) {
		st := rt.Stats()
		return st.Parked, st.Polled
	}
	// Wait until both workers parked once and the counts stay still.
	deadline := time.Now().Add(30 * time.Second)
	for {
		p0, q0 := parked()
		time.Sleep(20 * time.Millisecond)
		p1, q1 := parked()
		if p1 >= 2 && p1 == p0 && q1 == q0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the workers of an unused runtime never settled: parks %d, polls %d", p1, q1)
		}
	}
	p0, q0 := parked()
	time.Sleep(300 * time.Millisecond)
	if p1, q1 := parked(); p1 != p0 || q1 != q0 {
		t.Fatalf("an unused runtime woke up: parks %d -> %d, polls %d -> %d in 300ms", p0, p1, q0, q1)
	}
	if n := runtime.NumGoroutine() - before; n > 2 {
		t.Errorf("an unused runtime with 2 workers holds %d goroutines; want 2", n)
	}
}
