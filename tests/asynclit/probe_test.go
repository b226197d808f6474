package asynclit

import (
	"sync"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// probe is a future whose completion the test decides (complete), and
// which counts its polls and cancels. It keeps the last waker it was given
// and wakes it on completion. Safe for a test goroutine and a polling
// task at once.
type probe struct {
	mu        sync.Mutex
	v         int
	ready     bool
	taken     bool // it returned its value
	polls     int
	cancelled int
	wk        waker.Waker
	hasWaker  bool
}

func newProbe(v int) *probe { return &probe{v: v} }

func (p *probe) Poll(cx *future.Context) (int, bool) {
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

func (p *probe) Cancel() {
	p.mu.Lock()
	p.cancelled++
	p.mu.Unlock()
}

// complete makes the probe ready and wakes its poller.
func (p *probe) complete() {
	p.mu.Lock()
	p.ready = true
	wk, has := p.wk, p.hasWaker
	p.mu.Unlock()
	if has {
		wk.Wake()
	}
}

func (p *probe) state() (polls, cancelled int, taken bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.polls, p.cancelled, p.taken
}
