package channels

import (
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/waker"
)

// waitSet is the waiter list of Broadcast and Watch: receivers wait for
// "something new", and every send wakes them all. Nothing is handed over, so
// a wake only means "look again".
//
// Protocol (a Dekker handshake on sequentially consistent atomics): a
// receiver pushes its waiter and increments n under mu, then rechecks its
// ready condition; a sender publishes its message (a tail or version store)
// and then loads n, taking mu only when n is not zero. At least one of the
// two sees the other, so no wake is lost, and a send with nobody waiting
// takes no lock.
type waitSet struct {
	mu   sync.Mutex           // guards list
	list waker.List[struct{}] // the waiting receivers
	// n mirrors list.Len(): written under mu, loaded without it by senders
	// (after their publishing store; pairs with the Add in register).
	n atomic.Int64
}

// register pushes w with wk unless ready reports, after the push is visible
// in n, that there is something new; it reports whether w stays pushed.
func (s *waitSet) register(w *waker.Waiter[struct{}], wk waker.Waker, ready func() bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list.PushBack(w, wk)
	s.n.Add(1)
	if ready() { // after n: see "Protocol"
		s.list.Remove(w)
		s.n.Add(-1)
		return false
	}
	return true
}

// unregister removes w if it is still linked.
func (s *waitSet) unregister(w *waker.Waiter[struct{}]) {
	s.mu.Lock()
	if s.list.Remove(w) {
		s.n.Add(-1)
	}
	s.mu.Unlock()
}

// keepWaiting refreshes the Waker of a still-linked waiter, reporting false
// when it was woken (unlinked) and must look again.
func (s *waitSet) keepWaiting(w *waker.Waiter[struct{}], wk waker.Waker) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !w.Linked() {
		return false
	}
	if !w.Waker().WillWake(wk) {
		w.SetWaker(wk)
	}
	return true
}

// linked reports whether w is still linked: not woken ("Unlinked means
// woken" in package waker).
func (s *waitSet) linked(w *waker.Waiter[struct{}]) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return w.Linked()
}

// wakeAll wakes every waiting receiver, outside mu but for the rare overflow
// beyond waker.WakeListCap. Senders call it after their publishing store.
func (s *waitSet) wakeAll() {
	if s.n.Load() == 0 { // after the publishing store: see "Protocol"
		return
	}
	var wl waker.WakeList
	s.mu.Lock()
	k := s.list.PopInto(&wl)
	k += s.list.WakeAll()
	s.n.Add(int64(-k))
	s.mu.Unlock()
	wl.WakeAll()
}

// len reports how many receivers wait (for tests).
func (s *waitSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.list.Len()
}
