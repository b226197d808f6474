package idle

import (
	"fmt"
	"time"
)

// Parking: PrepareToPark, Park, and Close.

// Prepared is the result of [State.PrepareToPark].
type Prepared struct {
	// WasLastSearcher is true when the worker was searching and its
	// announcement took the searching count to zero. The caller must then
	// check every work source once more and call [State.NotifyOne] if it
	// finds any, before calling Park (rule 2 in "No lost wakeup").
	WasLastSearcher bool
}

// ParkResult is how [State.Park] returned. The caller must switch on it: the
// worker's role differs.
type ParkResult uint8

const (
	// Notified: a notifier claimed the worker. It is now a searcher,
	// already counted: it searches, then calls TransitionFromSearching if it
	// finds work or PrepareToPark(id, true) if not.
	Notified ParkResult = 1 + iota
	// TimedOut: the timeout elapsed and nobody claimed the worker. Its
	// announcement is withdrawn; it is a running, non-searching worker (it
	// typically runs its timers and looks for work again).
	TimedOut
	// Closed: the State is closed. The announcement is withdrawn and
	// the worker is running and not searching; it should shut down.
	Closed
	// Interrupted: ParkWith's block function reported that it produced
	// work (an I/O completion woke a task) before anyone claimed the
	// worker. The announcement is withdrawn, as for TimedOut.
	Interrupted
)

// String returns "Notified", "TimedOut" or "Closed".
func (r ParkResult) String() string {
	switch r {
	case Notified:
		return "Notified"
	case TimedOut:
		return "TimedOut"
	case Closed:
		return "Closed"
	case Interrupted:
		return "Interrupted"
	}
	return fmt.Sprintf("ParkResult(%d)", uint8(r))
}

// PrepareToPark announces worker id as parked: the parked count goes up, the
// searching count goes down if searching is true (the worker was a
// searcher), and then the worker's parked bit is set, after which notifiers
// can claim it. The result says whether the worker was the last searcher, in
// which case the caller must check for work once more (see [Prepared]). The
// worker must call [State.Park] next, even if it finds work in that check:
// it then calls NotifyOne first, which may claim the worker itself, and Park
// returns at once.
//
// It panics with [ErrAlreadyPrepared] if the worker is already announced,
// with [ErrNotSearching] if searching is true and no searcher is counted,
// and with [ErrWorkerID] for a bad id. Called only by worker id's own
// goroutine.
func (s *State) PrepareToPark(id int, searching bool) Prepared {
	s.checkID(id)
	w := &s.workers[id]
	if w.announced {
		panic(fmt.Errorf("%w: worker %d", ErrAlreadyPrepared, id))
	}
	delta := uint64(parkedOne)
	if searching {
		delta -= searchingOne
	}
	var c uint64
	for {
		c = s.word.Load() // load: pairs with every CAS/Add on the counts word
		if searching && counts(c).searching() == 0 {
			panic(ErrNotSearching)
		}
		if s.word.CompareAndSwap(c, c+delta) { // CAS: rule 2, announce before the re-check; pairs with NotifyOne's load (rule 1)
			break
		}
	}
	w.announced = true
	mask := uint64(1) << (id & 63)
	if old := s.bitmap[id>>6].Or(mask); old&mask != 0 { // or: publishes the bit to claimers; pairs with claim's CAS and Close's Swap
		panic(fmt.Errorf("%w: worker %d parked bit already set", errBroken, id))
	}
	return Prepared{WasLastSearcher: searching && counts(c).searching() == 1}
}

// Park puts worker id to sleep until a notifier claims it ([Notified]), the
// timeout elapses unclaimed ([TimedOut]), or the State is closed ([Closed]).
// A negative timeout waits without limit; zero only polls (Notified if a
// claim already happened, else the announcement is withdrawn and TimedOut).
// A claim that happens before Park sleeps is not lost: its token is waiting
// in the worker's channel. A timeout that races with a claim is resolved by
// the parked bit: whoever clears it wins, and if a claimer did, Park waits
// for its token (a few instructions away) and reports the claim, so the
// counts stay right (see "Timeouts").
//
// It panics with [ErrNotPrepared] if PrepareToPark was not called since the
// worker's last Park. Called only by worker id's own goroutine.
func (s *State) Park(id int, timeout time.Duration) ParkResult {
	s.checkID(id)
	w := &s.workers[id]
	if !w.announced {
		panic(fmt.Errorf("%w: worker %d", ErrNotPrepared, id))
	}
	w.announced = false
	if s.closed.Load() { // load: pairs with Close's Swap; if false, Close's bitmap sweep comes later and sees our bit
		return s.cancel(id, Closed)
	}
	switch {
	case timeout < 0:
		return result(<-w.token) // receive: pairs with send
	case timeout == 0:
		select {
		case k := <-w.token: // receive: pairs with send
			return result(k)
		default:
			return s.cancel(id, TimedOut)
		}
	}
	if w.timer == nil {
		w.timer = time.NewTimer(timeout)
	} else {
		w.timer.Reset(timeout) // Go 1.23 timers: no stale value after Stop or a receive
	}
	select {
	case k := <-w.token: // receive: pairs with send
		w.timer.Stop()
		return result(k)
	case <-w.timer.C:
		return s.cancel(id, TimedOut)
	}
}

// ParkWith is Park for a worker that sleeps somewhere other than its token
// channel: the runtime's I/O driver, which blocks in the backend's Wait so
// that completions and timers and wakes all end one sleep. block(d) must
// block for up to d (negative: without limit) and must return promptly when
// the unparker installed with SetUnparker is called for this worker; it may
// return early for reasons of its own, and returns true when it produced
// work (woke a task), which ends the park with Interrupted.
//
// The protocol is Park's, with one addition that keeps wakeups from being
// lost: a claimer sends the token first and calls the unparker second, and
// ParkWith looks at the token before each call of block; so a claim that
// lands between the look and block's sleep finds the unparker's wake
// pending (the backend's Wake is sticky), and block returns at once.
//
// Same preconditions and panics as Park. Called only by worker id's own
// goroutine.
func (s *State) ParkWith(id int, timeout time.Duration, block func(time.Duration) bool) ParkResult {
	s.checkID(id)
	w := &s.workers[id]
	if !w.announced {
		panic(fmt.Errorf("%w: worker %d", ErrNotPrepared, id))
	}
	w.announced = false
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	for {
		select {
		case k := <-w.token: // receive: pairs with send, which precedes the unparker
			return result(k)
		default:
		}
		if s.closed.Load() { // load: pairs with Close's Swap, as in Park
			return s.cancel(id, Closed)
		}
		d := timeout
		if timeout > 0 {
			if d = time.Until(deadline); d <= 0 {
				return s.cancel(id, TimedOut)
			}
		}
		if timeout == 0 {
			// Poll once: block(0) collects what is ready without sleeping.
			if block(0) {
				return s.cancel(id, Interrupted)
			}
			return s.cancel(id, TimedOut)
		}
		if block(d) {
			return s.cancel(id, Interrupted)
		}
	}
}

// SetUnparker installs f, called with a worker's id each time a claimer
// (NotifyOne, Close) has sent that worker a token, so that a worker sleeping
// in ParkWith's block function can be woken there. f must not block and
// must tolerate being called for a worker that sleeps in Park or does not
// sleep at all (it then does nothing, or wakes nobody in particular). Call
// it before any worker parks; it is not synchronized with the claimers.
func (s *State) SetUnparker(f func(id int)) { s.unparker = f }

// cancel withdraws worker id's announcement, or finds that it was already
// claimed. It clears the worker's parked bit; if the bit was still set the
// worker wins, lowers the parked count and returns r. If a claimer cleared
// it first, the claimer's token is on its way: cancel receives it and
// returns what it says. Called by Park, on worker id's goroutine.
func (s *State) cancel(id int, r ParkResult) ParkResult {
	mask := uint64(1) << (id & 63)
	if old := s.bitmap[id>>6].And(^mask); old&mask == 0 { // and: rule 4, races claim's CAS and Close's Swap for the one clear
		return result(<-s.workers[id].token) // receive: the claimer sends after its clear
	}
	s.word.Add(minusParked) // add: after the bit clear, so parked never counts fewer than the set bits
	return r
}

// result maps a token to the ParkResult that Park returns.
func result(k wake) ParkResult {
	if k == wakeClose {
		return Closed
	}
	return Notified
}

// Close wakes every parked worker with [Closed] and makes every later Park
// return Closed at once. It returns the number of workers it woke. Workers
// claimed by a notifier before Close still see [Notified] (they are counted
// as searchers); their next Park returns Closed. Close is idempotent; later
// calls return 0. The other methods keep working, so the counts stay exact.
// Any goroutine may call it.
func (s *State) Close() int {
	if s.closed.Swap(true) { // swap: pairs with Park's load; the sweep below comes after it
		return 0
	}
	woken := 0
	for wi := range s.bitmap {
		old := s.bitmap[wi].Swap(0) // swap: rule 4, claims every set bit of the word at once
		for old != 0 {
			b := trailingZeros(old)
			old &= old - 1
			s.word.Add(minusParked) // add: after the bit clear
			s.send(wi*64+b, wakeClose)
			woken++
		}
	}
	return woken
}
