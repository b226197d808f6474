package waker_test

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/waker"
)

// counter is a Wakeable that counts its wakes, standing for a task.
type counter struct{ n atomic.Int64 }

func (c *counter) Wake() { c.n.Add(1) }

// event is the tiny primitive the stress tests and benchmarks build from a
// List, a Signal per waiting goroutine and a sync.Mutex, following "The
// waiting protocol" of the package documentation. permits counts stored
// notifications (a semaphore's permits): notifyOne with nobody waiting adds
// one, and a wait that may use permits consumes one.
type event struct {
	// mu guards waiters and permits.
	mu      sync.Mutex
	waiters waker.List[struct{}]
	permits int
	// stopped tells a benchmark's partner goroutine to return.
	stopped bool
}

// stop reports whether the benchmark is over.
func (e *event) stop() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stopped
}

// wait registers w and blocks on sig until woken or ctx is done. It
// reports whether it was woken: false means ctx ended the wait and w left
// the list unwoken. usePermit lets it consume a stored permit instead.
func (e *event) wait(ctx context.Context, w *waker.Waiter[struct{}], sig *waker.Signal, usePermit bool) (bool, error) {
	e.mu.Lock()
	if usePermit && e.permits > 0 {
		e.permits--
		e.mu.Unlock()
		return true, nil
	}
	e.waiters.PushBack(w, waker.New(sig))
	e.mu.Unlock()
	return e.block(ctx, w, sig)
}

// block is steps 2 and 3 of the blocking tier, for a w already pushed.
func (e *event) block(ctx context.Context, w *waker.Waiter[struct{}], sig *waker.Signal) (bool, error) {
	for {
		err := sig.Wait(ctx)
		e.mu.Lock()
		if err == nil {
			woken := !w.Linked()
			e.mu.Unlock()
			if woken {
				return true, nil
			}
			continue // a wake meant for an earlier wait: recheck
		}
		removed := e.waiters.Remove(w)
		e.mu.Unlock()
		if removed {
			return false, err
		}
		return true, nil // a waker took w before the cancel did
	}
}

// notifyOne wakes the oldest waiter, outside the lock, or stores a permit.
// Each call is consumed by exactly one wait.
func (e *event) notifyOne() {
	e.mu.Lock()
	w := e.waiters.PopFront()
	if w == nil {
		e.permits++
		e.mu.Unlock()
		return
	}
	wk := w.Waker() // read under the lock: w is its owner's again once we unlock
	e.mu.Unlock()
	wk.Wake()
}

// notifyAll wakes exactly the waiters present now: up to WakeListCap after
// unlocking, the rest under the lock. It returns how many it woke.
func (e *event) notifyAll() int {
	var wl waker.WakeList
	e.mu.Lock()
	e.waiters.PopInto(&wl)
	n := e.waiters.WakeAll()
	e.mu.Unlock()
	return n + wl.WakeAll()
}
