package channels

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// ErrNoReceivers reports a broadcast Send with no receiver subscribed: the
// value is not retained.
var ErrNoReceivers = errors.New("channels: broadcast has no receivers")

// ErrLagged is the sentinel that a *LaggedError matches with errors.Is.
var ErrLagged = errors.New("channels: broadcast receiver lagged")

// LaggedError reports that a broadcast receiver fell behind by more than the
// capacity: Missed messages were overwritten before it read them. The
// receiver continues from the oldest message still retained.
type LaggedError struct {
	Missed uint64 // how many messages the receiver will never see
}

// Error describes the lag.
func (e *LaggedError) Error() string {
	return fmt.Sprintf("channels: broadcast receiver lagged: missed %d messages", e.Missed)
}

// Is reports target == ErrLagged.
func (e *LaggedError) Is(target error) bool { return target == ErrLagged }

// bcSlot is one slot of the ring: the value and the position it holds.
type bcSlot[T any] struct {
	mu  sync.RWMutex // guards seq and val: a sender writes, receivers read
	seq uint64       // 1 + the position whose value val holds; 0: never written
	val T
}

// Broadcast is a multi-producer, multi-consumer broadcast channel: every
// subscribed receiver sees every message, in order, unless it falls behind
// by more than the capacity. Send never waits: it overwrites the oldest slot
// when the ring is full, and a receiver that was lapped is told how many
// messages it missed (*LaggedError) and continues from the oldest retained.
//
// Protocol. The ring is a tail-indexed array of slots; slot pos%cap holds the
// message at absolute position pos with its sequence number. Senders are
// serialized by txMu (which also orders Close and Subscribe with sends);
// a send writes the slot under the slot's write lock, then publishes the new
// tail with an atomic store. Each receiver keeps its own position and reads
// the slot under its read lock, comparing the sequence to its position:
// equal is a message, older is "nothing yet", newer is a lag. T is copied to
// each receiver.
//
// Waiting receivers (tasks and goroutines) sit in one waiter list, with an
// atomic count of them: a receiver registers (counts itself in) and then
// re-reads tail and closed; a sender stores tail and then reads the count,
// taking the list's lock only when someone waits. The atomics are
// sequentially consistent, so one of the two sees the other: no wakeup is
// lost, and an uncontended Send takes no waiter lock. A send wakes every
// waiting receiver, outside the lock (PopInto/WakeList); a wake means
// "look", nothing is handed over, so a cancelled receive has nothing to
// pass on.
type Broadcast[T any] struct {
	// num is the channel's number in task dumps, taken at its first wait
	// (number).
	num   atomic.Uint64
	slots []bcSlot[T] // fixed at construction
	mask  uint64      // len(slots)-1 when a power of two, else 0
	cap   uint64      // len(slots)

	txMu   sync.Mutex    // serializes Send, Close and Subscribe
	tail   atomic.Uint64 // the next position to write; written under txMu, read by receivers
	closed atomic.Bool   // set once under txMu; read by receivers
	nRecv  atomic.Int64  // subscribed receivers; incremented under txMu

	waiting waitSet // receivers waiting for a message
}

// NewBroadcast returns a broadcast channel retaining the last capacity
// messages. It panics with ErrCapacity when capacity < 1.
func NewBroadcast[T any](capacity int) *Broadcast[T] {
	if capacity < 1 {
		panic(ErrCapacity)
	}
	b := &Broadcast[T]{slots: make([]bcSlot[T], capacity), cap: uint64(capacity)}
	if capacity&(capacity-1) == 0 {
		b.mask = uint64(capacity) - 1
	}
	return b
}

// slot returns the slot of position pos.
func (b *Broadcast[T]) slot(pos uint64) *bcSlot[T] {
	if b.mask != 0 || b.cap == 1 {
		return &b.slots[pos&b.mask]
	}
	return &b.slots[pos%b.cap]
}

// Send broadcasts v to every subscribed receiver and returns how many there
// were. It never waits: when the ring is full the oldest message is
// overwritten. It returns ErrNoReceivers (v is not retained) when no
// receiver is subscribed and ErrClosed after Close. It allocates nothing.
func (b *Broadcast[T]) Send(v T) (int, error) {
	b.txMu.Lock()
	if b.closed.Load() {
		b.txMu.Unlock()
		return 0, ErrClosed
	}
	n := int(b.nRecv.Load())
	if n == 0 {
		b.txMu.Unlock()
		return 0, ErrNoReceivers
	}
	pos := b.tail.Load()
	s := b.slot(pos)
	s.mu.Lock()
	s.seq = pos + 1
	s.val = v
	s.mu.Unlock()
	b.tail.Store(pos + 1) // publishes; pairs with the receivers' tail loads
	b.txMu.Unlock()
	b.waiting.wakeAll() // after the tail store: see waitSet's "Protocol"
	return n, nil
}

// Subscribe returns a new receiver, which starts at the next message sent
// after the call.
func (b *Broadcast[T]) Subscribe() *BroadcastReceiver[T] {
	b.txMu.Lock()
	r := &BroadcastReceiver[T]{b: b, pos: b.tail.Load()}
	b.nRecv.Add(1)
	b.txMu.Unlock()
	return r
}

// Close closes the channel: Send fails with ErrClosed, and receivers drain
// what they have not yet seen, then get ErrClosed. Idempotent.
func (b *Broadcast[T]) Close() {
	b.txMu.Lock()
	was := b.closed.Swap(true)
	b.txMu.Unlock()
	if !was {
		b.waiting.wakeAll()
	}
}

// ReceiverCount reports how many receivers are subscribed.
func (b *Broadcast[T]) ReceiverCount() int { return int(b.nRecv.Load()) }

// waiters reports how many receivers wait (for tests).
func (b *Broadcast[T]) waiters() int { return b.waiting.len() }

// BroadcastReceiver is one subscription to a Broadcast. It has a single
// owner: its methods and receive futures are used by one goroutine or task
// at a time.
type BroadcastReceiver[T any] struct {
	b      *Broadcast[T]
	pos    uint64 // the next position to read; owner only
	closed bool   // unsubscribed; owner only

	// bw is RecvBlocking's waiter, so a blocking wait allocates nothing;
	// linked in b.waiting under waiting.mu while the owner waits.
	bw waker.Waiter[struct{}]
}

// TryRecv returns the next message. It returns ErrEmpty when there is none
// yet, ErrClosed when the channel is closed and drained or the receiver is
// closed, and a *LaggedError (errors.Is(err, ErrLagged)) when messages were
// overwritten before it read them; the next call continues from the oldest
// retained message. It registers nothing and allocates nothing except the
// LaggedError.
func (r *BroadcastReceiver[T]) TryRecv() (T, error) {
	var zero T
	if r.closed {
		return zero, ErrClosed
	}
	v, err := r.read()
	if err == ErrEmpty && r.b.closed.Load() {
		// Close is ordered after every Send: one more look is definitive.
		v, err = r.read()
		if err == ErrEmpty {
			err = ErrClosed
		}
	}
	return v, err
}

// read reads position pos: a message, ErrEmpty or a lag.
func (r *BroadcastReceiver[T]) read() (T, error) {
	b := r.b
	s := b.slot(r.pos)
	s.mu.RLock()
	seq := s.seq
	if seq == r.pos+1 {
		v := s.val
		s.mu.RUnlock()
		r.pos++
		return v, nil
	}
	s.mu.RUnlock()
	var zero T
	if seq < r.pos+1 {
		return zero, ErrEmpty
	}
	// Lapped: continue from the oldest message the ring still holds. The
	// newest written is at least seq-1 (its tail store may still be on the
	// way) and at least tail-1. A send in progress may overwrite the oldest
	// too; the next read then reports that lag.
	oldest := max(b.tail.Load(), seq) - b.cap
	missed := oldest - r.pos
	r.pos = oldest
	return zero, &LaggedError{Missed: missed}
}

// ready reports, without reading a slot, whether TryRecv would not return
// ErrEmpty: a message at pos was published, or the channel is closed.
func (r *BroadcastReceiver[T]) ready() bool {
	return r.closed || r.b.tail.Load() != r.pos || r.b.closed.Load()
}

// Close unsubscribes the receiver. Idempotent.
func (r *BroadcastReceiver[T]) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.b.nRecv.Add(-1)
}

// BroadcastRecvFuture is the future of BroadcastReceiver.Recv. Its pointer
// is a future.Future[future.Result[T]] and a future.Canceler. It completes
// with the next message, ErrClosed or a *LaggedError, as TryRecv. Its waiter
// lives inside it, so waiting allocates nothing.
type BroadcastRecvFuture[T any] struct {
	_         noCopy
	r         *BroadcastReceiver[T]
	w         waker.Waiter[struct{}] // linked in r.b.waiting while waiting; under waiting.mu
	pushed    bool                   // w was pushed since the last look; owner only
	done      bool                   // owner only
	cancelled bool                   // owner only
}

// Recv returns a future that receives the next message.
func (r *BroadcastReceiver[T]) Recv() *BroadcastRecvFuture[T] {
	return &BroadcastRecvFuture[T]{r: r}
}

// Poll completes with the next message (or an error), or waits.
// Completing consumes a unit of the task's budget; with none left, Poll
// yields instead (see the package doc, "Tiers").
func (f *BroadcastRecvFuture[T]) Poll(cx *future.Context) (future.Result[T], bool) {
	f.checkPoll()
	if !cx.Proceed() {
		return future.Result[T]{}, false
	}
	r := f.r
	if f.pushed {
		if !r.ready() && r.b.waiting.keepWaiting(&f.w, cx.Waker()) {
			cx.Waiting(waitBroadcastRecv, number(&r.b.num)) // for a task dump: which channel
			return future.Result[T]{}, false
		}
		r.b.waiting.unregister(&f.w)
		f.pushed = false
	}
	for {
		v, err := r.TryRecv()
		if err != ErrEmpty {
			cx.Spend()
			f.done = true
			return future.Result[T]{Value: v, Err: err}, true
		}
		if r.b.waiting.register(&f.w, cx.Waker(), r.ready) {
			f.pushed = true
			cx.Waiting(waitBroadcastRecv, number(&r.b.num)) // for a task dump: which channel
			return future.Result[T]{}, false
		}
	}
}

// checkPoll panics on a poll after completion or cancellation.
func (f *BroadcastRecvFuture[T]) checkPoll() {
	if f.done {
		panic(future.ErrPolledAfterCompletion)
	}
	if f.cancelled {
		panic(future.ErrPolledAfterCancel)
	}
}

// Cancel removes the waiter; nothing was handed to it (a wake only means
// "look"), so nothing is lost. Idempotent; a no-op after completion.
func (f *BroadcastRecvFuture[T]) Cancel() {
	if f.done || f.cancelled {
		return
	}
	f.cancelled = true
	if f.pushed {
		f.r.b.waiting.unregister(&f.w)
		f.pushed = false
	}
}

// RecvBlocking waits in the calling goroutine for the next message, with
// TryRecv's results. When ctx is done first it returns an error wrapping
// ctx.Err(), having consumed nothing (a message there by then is returned
// instead).
func (r *BroadcastReceiver[T]) RecvBlocking(ctx context.Context) (T, error) {
	if v, err := r.TryRecv(); err != ErrEmpty {
		return v, err
	}
	sig := getSignal()
	defer putSignal(sig)
	w := &r.bw
	for {
		if !r.b.waiting.register(w, waker.New(sig), r.ready) {
			if v, err := r.TryRecv(); err != ErrEmpty {
				return v, err
			}
			continue
		}
		for {
			err := sig.Wait(ctx)
			if err == nil && !r.ready() && r.b.waiting.linked(w) {
				continue // spurious: a late wake meant for an earlier user of sig
			}
			// Woken (perhaps by a send we had already read: a waiter is
			// woken by every send after it registered) or ctx done.
			r.b.waiting.unregister(w)
			if v, rerr := r.TryRecv(); rerr != ErrEmpty {
				return v, rerr
			}
			if err != nil {
				var zero T
				return zero, fmt.Errorf("channels: broadcast recv: %w", err)
			}
			break // register again
		}
	}
}
