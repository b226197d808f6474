package httpserver

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// A request's context made lazily behaves as a cancelCtx would: a cancel
// before Done was asked for is seen by Done and Err, Done and Err agree,
// and contexts derived from it are cancelled with it.
func TestReqContextLazy(t *testing.T) {
	t.Run("cancel before Done", func(t *testing.T) {
		var c reqContext
		if err := c.Err(); err != nil {
			t.Fatalf("Err before cancel = %v", err)
		}
		c.cancel()
		c.cancel() // idempotent
		if err := c.Err(); !errors.Is(err, context.Canceled) {
			t.Fatalf("Err after cancel = %v, want context.Canceled", err)
		}
		select {
		case <-c.Done():
		default:
			t.Fatal("Done not closed after cancel")
		}
	})
	t.Run("derived", func(t *testing.T) {
		var c reqContext
		child, stop := context.WithCancel(&c)
		defer stop()
		val := context.WithValue(&c, testKey{}, 1)
		timed, stopTimed := context.WithTimeout(val, time.Hour)
		defer stopTimed()
		if _, ok := c.Deadline(); ok {
			t.Fatal("a request's context has a deadline")
		}
		c.cancel()
		for _, d := range []context.Context{child, val, timed} {
			select {
			case <-d.Done():
			case <-time.After(10 * time.Second):
				t.Fatalf("%v not cancelled 10s after its parent", d)
			}
			if !errors.Is(d.Err(), context.Canceled) || !errors.Is(context.Cause(d), context.Canceled) {
				t.Fatalf("%v: Err %v, Cause %v", d, d.Err(), context.Cause(d))
			}
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		for range 100 {
			var c reqContext
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); c.cancel() }()
			go func() {
				defer wg.Done()
				done := c.Done()
				// Err and Done agree: non-nil Err means Done is closed.
				if c.Err() != nil {
					select {
					case <-done:
					default:
						t.Error("Err is set while Done is open")
					}
				}
			}()
			wg.Wait()
			select {
			case <-c.Done():
			default:
				t.Fatal("Done not closed after cancel")
			}
		}
	})
}

// testKey is a context key of the tests.
type testKey struct{}
