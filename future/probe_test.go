package future

import (
	"sync"

	"github.com/blitz-go/blitz/waker"
)

// This file is the tests' seam (as export_test.go elsewhere): Registry and
// Probe are compiled only into this package's tests, and the external
// future_test package uses them too.

// Registry stands for a primitive's waiter list: Probes register their
// task's Waker in it while pending, as a channel or a semaphore would, and
// Len tells a test whether anything is left registered. Every field is
// guarded by mu. Any goroutine may call its methods.
type Registry struct {
	mu   sync.Mutex
	list waker.List[struct{}] // the registered probes' waiters; mu
}

// Len returns the number of probes registered in r.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.list.Len()
}

// ProbeStats is what a Probe counted.
type ProbeStats struct {
	Polls         int  // calls of Poll
	Registrations int  // PushBacks of the waiter (first pending polls)
	Cancels       int  // calls of Cancel, including redundant ones
	Misuse        int  // polls after delivery or after Cancel
	Delivered     bool // Poll returned the value
	Registered    bool // the waiter is in the Registry now
}

// Probe is a leaf future for tests that follows the waiting protocol of the
// waker package: pending, it registers its poll's Waker in its Registry;
// Complete (from any goroutine) hands it the value, unlinks it and wakes it;
// Cancel removes it. It counts what happens to it, and records misuse
// instead of panicking so that a test can assert on it. Every field is
// guarded by reg.mu.
type Probe[T any] struct {
	reg       *Registry
	w         waker.Waiter[struct{}]
	value     T
	completed bool // Complete was called
	cancelled bool // Cancel was called
	stats     ProbeStats
}

// NewProbe returns a pending Probe registering in reg.
func NewProbe[T any](reg *Registry) *Probe[T] {
	return &Probe[T]{reg: reg}
}

// Poll implements Future. The probe's owner calls it.
func (p *Probe[T]) Poll(cx *Context) (T, bool) {
	p.reg.mu.Lock()
	defer p.reg.mu.Unlock()
	p.stats.Polls++
	var zero T
	if p.stats.Delivered || p.cancelled {
		p.stats.Misuse++
		return zero, false
	}
	if p.completed {
		p.stats.Delivered = true
		v := p.value
		p.value = zero
		return v, true
	}
	if p.w.Linked() {
		if !p.w.Waker().WillWake(cx.Waker()) {
			p.w.SetWaker(cx.Waker())
		}
		return zero, false
	}
	p.reg.list.PushBack(&p.w, cx.Waker())
	p.stats.Registrations++
	return zero, false
}

// Cancel implements Canceler: it deregisters the probe. The probe's owner
// calls it.
func (p *Probe[T]) Cancel() {
	p.reg.mu.Lock()
	defer p.reg.mu.Unlock()
	p.stats.Cancels++
	p.cancelled = true
	p.reg.list.Remove(&p.w)
}

// Complete hands v to the probe and wakes the Waker it registered, if any,
// after unlocking. It panics if called twice. Any goroutine may call it.
func (p *Probe[T]) Complete(v T) {
	p.reg.mu.Lock()
	if p.completed {
		p.reg.mu.Unlock()
		panic("probe: completed twice")
	}
	p.completed, p.value = true, v
	var wk waker.Waker
	if p.reg.list.Remove(&p.w) {
		wk = p.w.Waker()
	}
	p.reg.mu.Unlock()
	wk.Wake()
}

// Stats returns what the probe counted so far. Any goroutine may call it.
func (p *Probe[T]) Stats() ProbeStats {
	p.reg.mu.Lock()
	defer p.reg.mu.Unlock()
	s := p.stats
	s.Registered = p.w.Linked()
	return s
}
