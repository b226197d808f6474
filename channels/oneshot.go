package channels

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// ErrAlreadySent reports a second Send on a oneshot: a oneshot carries one
// value, and the first Send claimed it.
var ErrAlreadySent = errors.New("channels: oneshot already sent")

// The bits of oneshotState.state. VALUE, TX_CLOSED and RX_CLOSED are
// terminal: once set they are never cleared. They are independent bits
// rather than one of four states (empty, value sent, receiver waiting,
// closed): "receiver waiting" (RX_WAKER) coexists with the others, so a
// terminal transition learns atomically whether it must wake; CLOSED is
// split by side (TX_CLOSED: the receiver gets ErrClosed; RX_CLOSED: a later
// Send does, while a value already sent stays receivable); SENDING lets a
// Send claim the one slot before writing the value (a second Send, even a
// racing one from a copy of the sender, gets ErrAlreadySent); TAKEN makes
// delivery exactly once.
const (
	osSending  uint32 = 1 << iota // the sender claimed the one send (in progress or done)
	osValue                       // the value is in val and published (terminal)
	osTxClosed                    // the sender gave up without a value (terminal)
	osRxClosed                    // the receiver is no longer interested (terminal)
	osRxWaker                     // rxWaker holds the receiver's registered Waker
	osTaken                       // the receiver took the value out of val

	osTerminal = osValue | osTxClosed | osRxClosed
)

// oneshotState is the one allocation of a oneshot, shared by its sender and
// receiver handles. There is no mutex: every transition is a CAS (or Or) on
// state, and the two plain fields are handed between the sides by it.
//
// The waker handshake ("receiver registers" vs "sender sends"):
//   - The receiver writes rxWaker (and rxGen) only while RX_WAKER is clear
//     and no terminal bit is set, then publishes it with a CAS that sets
//     RX_WAKER and fails if a terminal bit appeared meanwhile (it then sees
//     the terminal state and completes without waiting). To replace a
//     registered Waker it first clears RX_WAKER by a CAS that also fails on
//     a terminal bit.
//   - A party that ends the wait (the sender publishing VALUE or TX_CLOSED,
//     the receiver's Close setting RX_CLOSED) sets its terminal bit with one
//     atomic step; only if the state it replaced had RX_WAKER does it read
//     rxWaker and wake it. That read happens after the receiver's publishing
//     CAS (it observed its bit), and after the terminal bit the receiver
//     never writes rxWaker again: no lost wakeup and no data race.
type oneshotState[T any] struct {
	// num is the channel's number in task dumps, taken at its first wait
	// (number).
	num   atomic.Uint64
	state atomic.Uint32 // the bits above; every access atomic

	// val is written by the sender between claiming osSending and setting
	// osValue (or, on ErrClosed, cleared before it returns), and after osValue
	// it belongs to the receiver, who reads and clears it once (osTaken).
	val T

	// rxWaker and rxGen are written by the receiver side only, under the
	// handshake above; rxWaker is read by whoever sets a terminal bit over
	// RX_WAKER, rxGen only by the receiver side (a cancel checks that the
	// registration is still its own).
	rxWaker waker.Waker
	rxGen   uint32
}

// OneshotSender is the sending half of a oneshot: a value type, copied
// freely, sharing the state with its OneshotReceiver. Send delivers the one
// value; Close gives up.
type OneshotSender[T any] struct {
	st *oneshotState[T]
}

// OneshotReceiver is the receiving half of a oneshot: a value type sharing
// the state with its OneshotSender. It has a single owner: its methods and
// its receive futures are used by one goroutine or task at a time, and at
// most one receive (a polled Recv future or a RecvBlocking) waits at a time
// (a newer registration replaces an older one). Close may be called by any
// goroutine.
type OneshotReceiver[T any] struct {
	st *oneshotState[T]
}

// NewOneshot returns the two halves of a new oneshot: one allocation, the
// state both share.
func NewOneshot[T any]() (OneshotSender[T], OneshotReceiver[T]) {
	st := new(oneshotState[T])
	return OneshotSender[T]{st: st}, OneshotReceiver[T]{st: st}
}

// Send delivers v. It returns nil when v is now the receiver's (it stays
// receivable until the receiver takes it, even after a Close of the
// receiver that comes later), ErrClosed when the receiver closed first or
// the sender closed (the caller keeps v) and ErrAlreadySent on a second
// Send. It never waits and allocates nothing.
func (s OneshotSender[T]) Send(v T) error {
	st := s.st
	if err := st.claimSend(); err != nil {
		return err
	}
	st.val = v
	for {
		old := st.state.Load()
		if old&osRxClosed != 0 {
			var zero T
			st.val = zero // never published: still ours
			return ErrClosed
		}
		if st.state.CompareAndSwap(old, old|osValue) {
			if old&osRxWaker != 0 {
				st.rxWaker.Wake() // the CAS observed the registration
			}
			return nil
		}
	}
}

// claimSend sets osSending, failing if the receiver or sender closed or a
// send already claimed it.
func (st *oneshotState[T]) claimSend() error {
	for {
		old := st.state.Load()
		switch {
		case old&(osRxClosed|osTxClosed) != 0:
			return ErrClosed
		case old&osSending != 0:
			return ErrAlreadySent
		}
		if st.state.CompareAndSwap(old, old|osSending) {
			return nil
		}
	}
}

// Close gives up sending: the receiver gets ErrClosed. It is a no-op after a
// Send (the value stands) and idempotent.
func (s OneshotSender[T]) Close() {
	st := s.st
	for {
		old := st.state.Load()
		if old&(osSending|osTxClosed) != 0 {
			return
		}
		if st.state.CompareAndSwap(old, old|osTxClosed) {
			if old&osRxWaker != 0 {
				st.rxWaker.Wake()
			}
			return
		}
	}
}

// IsClosed reports whether the receiver closed: a Send would fail.
func (s OneshotSender[T]) IsClosed() bool {
	return s.st.state.Load()&osRxClosed != 0
}

// TryRecv takes the value if it was sent. It returns ErrEmpty when nothing
// was sent yet and ErrClosed when nothing will come (the sender closed, the
// receiver closed with no value sent, or the value was already taken). It
// registers nothing and allocates nothing.
func (r OneshotReceiver[T]) TryRecv() (T, error) {
	return r.st.tryRecv(r.st.state.Load())
}

// tryRecv decides on the state s that the caller loaded.
func (st *oneshotState[T]) tryRecv(s uint32) (T, error) {
	var zero T
	switch {
	case s&osTaken != 0:
		return zero, ErrClosed
	case s&osValue != 0:
		if st.state.Or(osTaken)&osTaken != 0 {
			return zero, ErrClosed // a racing copy of the receiver took it
		}
		v := st.val
		st.val = zero
		return v, nil
	case s&(osTxClosed|osRxClosed) != 0:
		return zero, ErrClosed
	}
	return zero, ErrEmpty
}

// Close tells the sender that the receiver is no longer interested: a later
// Send returns ErrClosed. A value sent before stays receivable by TryRecv.
// A registered receive is woken (it then completes with the value if there
// is one, or ErrClosed). Idempotent; any goroutine may call it.
func (r OneshotReceiver[T]) Close() {
	st := r.st
	old := st.state.Or(osRxClosed)
	if old&osRxClosed == 0 && old&osRxWaker != 0 {
		st.rxWaker.Wake() // the Or observed the registration
	}
}

// register publishes wk as the receiver's Waker and returns its generation,
// or false when a terminal bit is (or became) set, so the caller completes
// instead of waiting. When registered is true and generation gen is still
// the registration and already wakes wk (WillWake), it is left in place.
func (st *oneshotState[T]) register(wk waker.Waker, gen uint32, registered bool) (uint32, bool) {
	for {
		s := st.state.Load()
		if s&osTerminal != 0 || s&osTaken != 0 {
			return 0, false
		}
		if s&osRxWaker != 0 {
			if registered && st.rxGen == gen && st.rxWaker.WillWake(wk) {
				return gen, true
			}
			if !st.state.CompareAndSwap(s, s&^osRxWaker) {
				continue // a terminal bit appeared: it owns the old Waker
			}
			s &^= osRxWaker
		}
		st.rxGen++
		st.rxWaker = wk
		if st.state.CompareAndSwap(s, s|osRxWaker) {
			return st.rxGen, true
		}
		// only a terminal bit can have changed s: loop and report it
	}
}

// deregister clears RX_WAKER if the registration is still generation gen.
func (st *oneshotState[T]) deregister(gen uint32) {
	for {
		s := st.state.Load()
		if s&osRxWaker == 0 || st.rxGen != gen {
			return
		}
		if st.state.CompareAndSwap(s, s&^osRxWaker) {
			return
		}
	}
}

// OneshotRecvFuture is the future of OneshotReceiver.Recv. Its pointer is a
// future.Future[future.Result[T]] and a future.Canceler. It completes with
// the value, or with ErrClosed when none will come. Waiting allocates
// nothing: the Waker is kept in the oneshot's state. Cancel withdraws the
// registration; a value sent meanwhile stays for a later TryRecv or Recv.
type OneshotRecvFuture[T any] struct {
	_          noCopy
	st         *oneshotState[T]
	gen        uint32 // the generation of our registration; owner only
	registered bool   // we published a Waker; owner only
	done       bool   // completed; owner only
	cancelled  bool   // cancelled; owner only
}

// Recv returns a future that receives the value.
func (r OneshotReceiver[T]) Recv() *OneshotRecvFuture[T] {
	return &OneshotRecvFuture[T]{st: r.st}
}

// Poll completes with the value or ErrClosed, or registers cx's Waker.
// Completing consumes a unit of the task's budget; with none left, Poll
// yields instead (see the package doc, "Tiers").
func (f *OneshotRecvFuture[T]) Poll(cx *future.Context) (future.Result[T], bool) {
	f.checkPoll()
	if !cx.Proceed() {
		return future.Result[T]{}, false
	}
	st := f.st
	for {
		if v, err := st.tryRecv(st.state.Load()); err != ErrEmpty {
			cx.Spend()
			f.done = true
			return future.Result[T]{Value: v, Err: err}, true
		}
		gen, ok := st.register(cx.Waker(), f.gen, f.registered)
		if ok {
			f.gen, f.registered = gen, true
			cx.Waiting(waitOneshotRecv, number(&st.num)) // for a task dump: which channel
			return future.Result[T]{}, false
		}
	}
}

// checkPoll panics on a poll after completion or cancellation.
func (f *OneshotRecvFuture[T]) checkPoll() {
	if f.done {
		panic(future.ErrPolledAfterCompletion)
	}
	if f.cancelled {
		panic(future.ErrPolledAfterCancel)
	}
}

// Cancel withdraws the registration. Idempotent; a no-op after completion.
func (f *OneshotRecvFuture[T]) Cancel() {
	if f.done || f.cancelled {
		return
	}
	f.cancelled = true
	if f.registered {
		f.st.deregister(f.gen)
	}
}

// RecvBlocking waits in the calling goroutine for the value. It returns
// ErrClosed when none will come, and an error wrapping ctx.Err() when ctx is
// done first (a value that is there by then is returned instead: available
// wins). A cancelled wait leaves the value, if it comes, for a later receive.
func (r OneshotReceiver[T]) RecvBlocking(ctx context.Context) (T, error) {
	st := r.st
	if v, err := st.tryRecv(st.state.Load()); err != ErrEmpty {
		return v, err
	}
	sig := getSignal()
	defer putSignal(sig)
	gen, ok := st.register(waker.New(sig), 0, false)
	if !ok { // completed meanwhile
		return st.tryRecv(st.state.Load())
	}
	for {
		if err := sig.Wait(ctx); err != nil {
			st.deregister(gen)
			if v, rerr := st.tryRecv(st.state.Load()); rerr != ErrEmpty {
				return v, rerr
			}
			var zero T
			return zero, fmt.Errorf("channels: oneshot recv: %w", err)
		}
		if _, err := st.peek(); err != ErrEmpty {
			break
		}
		// spurious (a late wake meant for an earlier user of sig): still registered
	}
	st.deregister(gen)
	return st.tryRecv(st.state.Load())
}

// peek reports what tryRecv would, without taking the value.
func (st *oneshotState[T]) peek() (struct{}, error) {
	s := st.state.Load()
	switch {
	case s&osTaken != 0:
		return struct{}{}, ErrClosed
	case s&osValue != 0:
		return struct{}{}, nil
	case s&(osTxClosed|osRxClosed) != 0:
		return struct{}{}, ErrClosed
	}
	return struct{}{}, ErrEmpty
}

// waiters reports 1 when a receive is registered and still waiting (for
// tests).
func (st *oneshotState[T]) waiters() int {
	if s := st.state.Load(); s&osRxWaker != 0 && s&osTerminal == 0 {
		return 1
	}
	return 0
}
