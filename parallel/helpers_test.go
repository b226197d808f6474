package parallel_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/blitz-go/blitz/parallel"
	"github.com/stretchr/testify/require"
)

// newPool returns a pool of n workers (0: GOMAXPROCS), closed when the test
// ends.
func newPool(t testing.TB, n int) *parallel.Pool {
	t.Helper()
	p, err := parallel.NewPool(parallel.Config{Workers: n})
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// scale returns full, or short under -short.
func scale(full, short int) int {
	if testing.Short() {
		return short
	}
	return full
}

// recoverPanic runs f and returns what it panicked with, or nil.
func recoverPanic(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

// panicValue runs f, requires that it panics with a *PanicError, and returns
// the original panic value.
func panicValue(t *testing.T, f func()) any {
	t.Helper()
	r := recoverPanic(f)
	require.NotNil(t, r, "no panic")
	pe, ok := r.(*parallel.PanicError)
	require.Truef(t, ok, "panic value %T %v is not a *PanicError", r, r)
	require.NotEmpty(t, pe.Stack)
	return pe.Value
}

// spinUntil spins until cond holds or d passes, and reports whether cond
// held.
func spinUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for i := 0; !cond(); i++ {
		if time.Now().After(deadline) {
			return false
		}
		if i < 1000 {
			runtime.Gosched()
		} else {
			time.Sleep(10 * time.Microsecond)
		}
	}
	return true
}
