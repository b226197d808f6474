package gentest

import (
	"sync"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// Probe is a future whose completion the test decides (Complete), and
// which counts its polls and cancels. It keeps the last waker it was given
// and wakes it on completion. Polling it after a Cancel panics with
// future.ErrPolledAfterCancel. Safe for a test goroutine and a polling
// task at once: mu guards every field.
type Probe struct {
	mu        sync.Mutex
	v         int
	ready     bool
	taken     bool // it returned its value
	polls     int
	cancelled int
	wk        waker.Waker
	hasWaker  bool
}

// NewProbe returns a pending probe of value v.
func NewProbe(v int) *Probe { return &Probe{v: v} }

// ReadyProbe returns a probe of value v that is ready at its first poll.
func ReadyProbe(v int) *Probe { return &Probe{v: v, ready: true} }

// Poll returns the value once the probe is complete.
func (p *Probe) Poll(cx *future.Context) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.polls++
	if p.cancelled > 0 {
		panic(future.ErrPolledAfterCancel)
	}
	if p.ready {
		p.taken = true
		return p.v, true
	}
	p.wk, p.hasWaker = cx.Waker(), true
	return 0, false
}

// Cancel counts a cancel.
func (p *Probe) Cancel() {
	p.mu.Lock()
	p.cancelled++
	p.mu.Unlock()
}

// Complete makes the probe ready and wakes its poller.
func (p *Probe) Complete() {
	p.mu.Lock()
	p.ready = true
	wk, has := p.wk, p.hasWaker
	p.mu.Unlock()
	if has {
		wk.Wake()
	}
}

// State returns the polls and cancels counted, and whether a poll took
// the value.
func (p *Probe) State() (polls, cancelled int, taken bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.polls, p.cancelled, p.taken
}

// Reset forgets that the value was taken and the cancels, for a probe
// reused by a later run.
func (p *Probe) Reset() {
	p.mu.Lock()
	p.taken, p.cancelled = false, 0
	p.mu.Unlock()
}
