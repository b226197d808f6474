package waker

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Signal is the goroutine side of a wake: a *Signal is a Wakeable whose Wake
// leaves one pending wakeup, and Wait blocks an ordinary goroutine until
// there is one. A goroutine registers New(sig) in a waiter List to take the
// blocking tier of a primitive; see "Signals" and "The waiting protocol" in
// the package documentation.
//
// The zero Signal is ready to use, with no pending wakeup. A Signal must not
// be copied after first use (go vet reports copies: the atomic.Pointer
// inside carries a no-copy marker). Wake may be called by any goroutine at any
// time; Wait, TryWait and receives from Chan consume the pending wakeup, and
// any goroutine may call them, though the usual owner is the one goroutine
// that waits.
type Signal struct {
	// ch points to a channel of capacity 1 that holds the pending wakeup, if
	// any. Nil until first use; set once by the first user's CAS in chanSlow
	// and only loaded afterwards, by every method on any goroutine.
	ch atomic.Pointer[chan struct{}]
}

// c returns the channel, creating it on first use.
// Any goroutine may call it.
func (s *Signal) c() chan struct{} {
	if p := s.ch.Load(); p != nil { // load-acquire; pairs with the CAS in chanSlow
		return *p
	}
	return s.chanSlow()
}

// chanSlow creates the channel. Racing first users each make one; one CAS
// wins and the others use the winner's channel.
// Any goroutine may call it.
func (s *Signal) chanSlow() chan struct{} {
	ch := make(chan struct{}, 1)
	if s.ch.CompareAndSwap(nil, &ch) { // store-release; publishes ch to the Load in c
		return ch
	}
	return *s.ch.Load() // load-acquire; the winner's CAS
}

// Wake leaves a pending wakeup, unless one is pending already (the wakes
// coalesce). It never blocks: the send is non-blocking on a channel of
// capacity 1.
// Any goroutine may call it, any number of times.
func (s *Signal) Wake() {
	select {
	case s.c() <- struct{}{}:
	default: // a wakeup is pending already: coalesce
	}
}

// Wait blocks until a wakeup is pending, consumes it and returns nil, or
// until ctx is done and returns ctx.Err() as is (context.Canceled or
// context.DeadlineExceeded, comparable with ==). A wakeup pending at the call
// wins over a ctx that is already done; while blocked, whichever comes first
// wins. When Wait returns ctx.Err(), a wakeup that arrives later stays
// pending for the next Wait: callers waiting on a condition loop and recheck
// it (see "The waiting protocol").
// Any goroutine may call it.
func (s *Signal) Wait(ctx context.Context) error {
	ch := s.c()
	select {
	case <-ch:
		return nil
	default:
	}
	done := ctx.Done()
	if done == nil { // context.Background and friends: never done
		<-ch
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-done:
		return ctx.Err()
	}
}

// TryWait consumes a pending wakeup and reports whether there was one. It
// never blocks.
// Any goroutine may call it.
func (s *Signal) TryWait() bool {
	select {
	case <-s.c():
		return true
	default:
		return false
	}
}

// Chan returns the channel that holds the pending wakeup, for a select that
// waits on other channels too. A receive from it consumes the wakeup, as
// Wait does. The channel is never closed.
// Any goroutine may call it.
func (s *Signal) Chan() <-chan struct{} { return s.c() }

// SignalPool recycles the Signals that goroutines wait on, so that a
// blocking wait allocates nothing in steady state, and is safe for
// goroutines in testing/synctest bubbles. The Go runtime binds a channel
// made in a bubble to that bubble, and ends the process when a goroutine
// outside it (or in another) uses the channel; so the pool makes each
// Signal's channel when it makes the Signal, outside any bubble, and a
// goroutine that may be in a bubble gets a Signal of its own, which Put
// drops. Go has no call that tells whether a goroutine is in a bubble; a
// bubble's clock starts at 2000-01-01 UTC, so a goroutine that reads a
// time before 2020 is taken to be in one (a machine whose clock is that
// far behind only loses the pool). Get and Put read the clock once each.
//
// A Signal put back may still receive a late Wake meant for its previous
// user (a waking party took its Waker before the waiter gave up): the
// next user sees one spurious wakeup, which the waiting protocol
// tolerates.
//
// The zero SignalPool is ready to use. Any goroutine may call its methods.
type SignalPool struct {
	p sync.Pool
}

// Get returns a Signal for one wait, with no pending wakeup unless a late
// Wake reached it (see SignalPool).
func (sp *SignalPool) Get() *Signal {
	if MayBeInBubble() {
		return new(Signal)
	}
	if s, ok := sp.p.Get().(*Signal); ok {
		return s
	}
	s := new(Signal)
	s.c() // made here, outside any bubble
	return s
}

// Put gives s back once nothing will wait on it. A Signal of a goroutine
// that may be in a bubble is dropped.
func (sp *SignalPool) Put(s *Signal) {
	if !MayBeInBubble() {
		sp.p.Put(s)
	}
}

// bubbleClockEnd bounds the times a testing/synctest bubble's clock shows
// (it starts at 2000-01-01 UTC): see SignalPool.
var bubbleClockEnd = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// MayBeInBubble reports whether the calling goroutine may be in a
// testing/synctest bubble, for pools of values that hold channels (see
// SignalPool): whether it reads a time before 2020.
func MayBeInBubble() bool { return time.Now().Before(bubbleClockEnd) }
