package parallel

import (
	"sync"
	"sync/atomic"
)

// OnceLatch is set once and waited for: by goroutines with Wait, which
// blocks, and by jobs with WaitCtx, which runs other work of the pool while
// it waits. The zero OnceLatch is valid and unset. It must not be copied
// after first use.
type OnceLatch struct {
	// done is set once by Set (store-release, under mu) and read by
	// everyone (load-acquire in Probe and in the workers' wait loop).
	done atomic.Bool
	// mu guards ch and workers.
	mu sync.Mutex
	// ch is made by the first Wait that blocks and closed by Set.
	ch chan struct{}
	// workers are the workers in WaitCtx; Set notifies each.
	workers []*Ctx
}

// Set sets the latch and releases its waiters; setting it again does
// nothing. Any goroutine may call it.
func (l *OnceLatch) Set() {
	l.mu.Lock()
	if l.done.Load() {
		l.mu.Unlock()
		return
	}
	l.done.Store(true) // store-release; pairs with the done loads of Probe and waitUntil
	if l.ch != nil {
		close(l.ch)
	}
	ws := l.workers
	l.workers = nil
	l.mu.Unlock()
	for _, c := range ws {
		c.notify() // after done: section "Latches and notification"
	}
}

// Probe reports whether the latch is set. Any goroutine may call it.
func (l *OnceLatch) Probe() bool { return l.done.Load() } // load-acquire; pairs with Set's store

// lockUnset locks mu and reports true while the latch is not set, so that
// the caller can register itself for Set to wake; it reports false, with mu
// unlocked, once the latch is set. Any goroutine may call it.
func (l *OnceLatch) lockUnset() bool {
	if l.done.Load() { // load-acquire; pairs with Set's store
		return false
	}
	l.mu.Lock()
	if l.done.Load() { // Set stores done under mu: this sees it or Set sees the registration
		l.mu.Unlock()
		return false
	}
	return true
}

// Wait blocks until the latch is set. Any goroutine may call it; a job
// should call WaitCtx instead, which keeps its worker busy.
func (l *OnceLatch) Wait() {
	if !l.lockUnset() {
		return
	}
	if l.ch == nil {
		l.ch = make(chan struct{})
	}
	ch := l.ch
	l.mu.Unlock()
	<-ch
}

// WaitCtx returns when the latch is set, running other work of c's pool
// meanwhile, and sleeping when there is none (package doc, section
// "Waiting"). Called by the job c was passed to, on its goroutine.
func (l *OnceLatch) WaitCtx(c *Ctx) {
	if !l.lockUnset() {
		return
	}
	l.workers = append(l.workers, c) // Set will notify c
	l.mu.Unlock()
	c.waitUntil(&l.done)
	l.mu.Lock()
	l.removeWorkerLocked(c)
	l.mu.Unlock()
}

// removeWorkerLocked removes one occurrence of c from l.workers, if Set has
// not taken the list already. l.mu must be held.
func (l *OnceLatch) removeWorkerLocked(c *Ctx) {
	for i, w := range l.workers {
		if w == c {
			l.workers = append(l.workers[:i], l.workers[i+1:]...)
			return
		}
	}
}

// CountLatch is set when its count drops to zero: a count of outstanding
// jobs, each of which calls CountDown when it finishes. It is waited for like
// a OnceLatch. The zero CountLatch has count zero and is not set: Add to it
// first, as with a sync.WaitGroup, except that Wait on a zero CountLatch
// that nobody counts down blocks forever. It must not be copied after first
// use.
type CountLatch struct {
	// count is the outstanding count: Add and CountDown are atomic adds.
	// The one that brings it to zero sets once.
	count atomic.Int64
	once  OnceLatch
}

// NewCountLatch returns a latch with count n; with n == 0 it is set
// already. n must not be negative. Any goroutine may call it.
func NewCountLatch(n int) *CountLatch {
	if n < 0 {
		panic(msgCountNegative)
	}
	l := &CountLatch{}
	l.count.Store(int64(n))
	if n == 0 {
		l.once.Set()
	}
	return l
}

// Add adds delta, which must be positive, to the count. It panics if the
// latch is set already. Any goroutine may call it, normally a job that
// holds a count, for the jobs it starts.
func (l *CountLatch) Add(delta int) {
	if delta < 0 {
		panic(msgCountNegative)
	}
	if l.once.Probe() {
		panic(msgCountAfterSet)
	}
	l.count.Add(int64(delta)) // RMW; pairs with CountDown's
}

// CountDown subtracts one from the count and sets the latch when it reaches
// zero. It panics if the count was zero. Any goroutine may call it.
func (l *CountLatch) CountDown() {
	switch n := l.count.Add(-1); { // RMW; pairs with Add's and the other CountDowns
	case n == 0:
		l.once.Set()
	case n < 0:
		panic(msgCountNegative)
	}
}

// Count returns a snapshot of the count. Any goroutine may call it.
func (l *CountLatch) Count() int { return int(l.count.Load()) }

// Probe reports whether the latch is set. Any goroutine may call it.
func (l *CountLatch) Probe() bool { return l.once.Probe() }

// Wait blocks until the latch is set. Any goroutine may call it; a job
// should call WaitCtx instead.
func (l *CountLatch) Wait() { l.once.Wait() }

// WaitCtx returns when the latch is set, running other work of c's pool
// meanwhile. Called by the job c was passed to, on its goroutine.
func (l *CountLatch) WaitCtx(c *Ctx) { l.once.WaitCtx(c) }
