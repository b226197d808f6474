package blitz_test

import (
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// oneshot is a minimal single-use channel for the ping-pong benchmark: one
// value, one receiver, woken through the sender's Context so that the
// receiver runs next on the sender's worker. The channels module (issue 4)
// will replace it.
type oneshot struct {
	mu  sync.Mutex
	set bool        // guarded by mu
	wk  waker.Waker // the receiver's Waker, guarded by mu
}

// send delivers the value and wakes the receiver.
func (o *oneshot) send(cx *future.Context) {
	o.mu.Lock()
	o.set = true
	wk := o.wk
	o.wk = waker.Waker{}
	o.mu.Unlock()
	cx.Wake(wk)
}

// Poll receives.
func (o *oneshot) Poll(cx *future.Context) (struct{}, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.set {
		return struct{}{}, true
	}
	o.wk = cx.Waker()
	return struct{}{}, false
}

// latch counts down to zero and then closes done.
type latch struct {
	left atomic.Int64
	done chan struct{}
}

func newLatch(n int) *latch {
	l := &latch{done: make(chan struct{})}
	l.left.Store(int64(n))
	return l
}

// countDown records one completion.
func (l *latch) countDown() {
	if l.left.Add(-1) == 0 {
		close(l.done)
	}
}

// doneFuture completes at once, counting down its latch: the trivial task.
// It is pointer-shaped, so storing it in a Future interface allocates
// nothing.
type doneFuture struct{ l *latch }

func (d doneFuture) Poll(*future.Context) (struct{}, bool) {
	d.l.countDown()
	return struct{}{}, true
}
