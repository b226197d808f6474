package channels

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// ErrConcurrentRecv is the panic value of an Unbounded receive made while
// another receive of the same channel is running: an Unbounded has one
// receiver at a time.
var ErrConcurrentRecv = errors.New("channels: concurrent receives on an Unbounded")

// An Unbounded queue is a list of blocks of uLap positions; the last
// position of each block (offset uBlockCap) holds no value: a tail index at
// that offset means "the sender that took the block's last slot is
// installing the next block" (crossbeam's list channel).
const (
	uLap      = 32
	uBlockCap = uLap - 1
)

// uSlot is one cell of an Unbounded block.
type uSlot[T any] struct {
	// ready is stored (1) by the sender after writing v and loaded by the
	// receiver before reading it.
	ready atomic.Uint32
	// v is written by the sender that claimed the slot, read and cleared
	// by the receiver; ready orders the two.
	v T
}

// uBlock is a block of uBlockCap slots. The receiver keeps the last block
// it left as a spare for the next install (see recycle); other blocks are
// left to the garbage collector.
type uBlock[T any] struct {
	// next is stored once, by the sender that claimed this block's last
	// slot, before it writes that slot; loaded by the receiver when it
	// leaves the block.
	next  atomic.Pointer[uBlock[T]]
	slots [uBlockCap]uSlot[T]
}

// Unbounded is an unbounded multi-producer single-consumer queue: Send
// never waits, and one receiver at a time receives, in order. It is a
// lock-free list of blocks of 31 slots, so a send allocates at most once
// per 31 values, and a steady stream not at all (the receiver recycles the
// block it leaves). See the package documentation, "Unbounded".
//
// All methods are safe for concurrent use, except that receives (TryRecv,
// a RecvFuture's Poll, RecvBlocking) must not run at the same time as each
// other: they panic with ErrConcurrentRecv when they catch it. An Unbounded
// must not be copied.
type Unbounded[T any] struct {
	// num is the channel's number in task dumps, taken at its first wait
	// (number).
	num atomic.Uint64
	_   noCopy
	_   ringPad
	// head is the next position to receive. Written by the receiver only;
	// atomic because Len reads it.
	head atomic.Uint64
	// headBlock is the block of head. The receiver only (the receiving
	// flag's CAS orders hand-offs between successive receivers).
	headBlock *uBlock[T]
	_         ringPad
	// tail is the next position to send, with tailClosedBit once closed.
	// Senders CAS it (and add one past a block's end), Close sets the bit.
	tail atomic.Uint64
	// tailBlock is the block of tail. Stored by the sender installing the
	// next block, before it moves tail into that block; loaded by senders
	// after they load tail.
	tailBlock atomic.Pointer[uBlock[T]]
	_         ringPad

	// spare is a block the receiver has left, reset, for the next sender
	// that installs a block (Swap), so that a steady stream allocates
	// nothing. Stored by the receiver, taken by senders.
	spare atomic.Pointer[uBlock[T]]

	// receiving is set for the duration of a receive call, to catch
	// concurrent receivers.
	receiving atomic.Bool

	// mu guards recvq and every qnode linked in it.
	mu    sync.Mutex
	recvq qwaiters // the receiver waiting for a value
}

// NewUnbounded returns an empty Unbounded queue.
func NewUnbounded[T any]() *Unbounded[T] {
	u := &Unbounded[T]{}
	b := new(uBlock[T])
	u.headBlock = b
	u.tailBlock.Store(b)
	return u
}

// Send appends v. It never waits, and returns ErrClosed (bare) after Close.
// It allocates only when it takes a block's last slot and no recycled block
// is spare (at most once per 31 sends).
func (u *Unbounded[T]) Send(v T) error {
	var next *uBlock[T]
	spins := 0
	for {
		t := u.tail.Load()
		if t&tailClosedBit != 0 {
			return ErrClosed
		}
		off := t % uLap
		if off == uBlockCap { // another sender is installing the next block
			qBackoff(&spins)
			continue
		}
		b := u.tailBlock.Load()
		if off+1 == uBlockCap && next == nil {
			if next = u.spare.Swap(nil); next == nil {
				next = new(uBlock[T])
			}
		}
		if !u.tail.CompareAndSwap(t, t+1) {
			continue
		}
		if off+1 == uBlockCap { // took the last slot: install the next block
			u.tailBlock.Store(next)
			u.tail.Add(1) // keeps the closed bit
			b.next.Store(next)
		}
		s := &b.slots[off]
		s.v = v
		s.ready.Store(1)
		u.recvq.wakeOne(&u.mu, nil)
		return nil
	}
}

// enter marks the start of a receive, panicking on a concurrent one.
func (u *Unbounded[T]) enter() {
	if !u.receiving.CompareAndSwap(false, true) {
		panic(ErrConcurrentRecv)
	}
}

// leave marks the end of a receive.
func (u *Unbounded[T]) leave() { u.receiving.Store(false) }

// tryRecv takes the oldest value, or reports ErrEmpty, or ErrClosed once
// closed and drained. A send that claimed the head slot but has not yet
// written it is waited for, so ErrEmpty is linearizable. The receiver only.
func (u *Unbounded[T]) tryRecv() (T, error) {
	h := u.head.Load()
	b := u.headBlock
	off := h % uLap
	s := &b.slots[off]
	spins := 0
	for s.ready.Load() == 0 {
		t := u.tail.Load()
		if t&^tailClosedBit == h {
			var zero T
			if t&tailClosedBit != 0 {
				return zero, ErrClosed
			}
			return zero, ErrEmpty
		}
		qBackoff(&spins)
	}
	v := s.v
	var zero T
	s.v = zero
	if off+1 == uBlockCap {
		u.headBlock = b.next.Load() // stored before the slot was written
		u.head.Store(h + 2)
		u.recycle(b)
	} else {
		u.head.Store(h + 1)
	}
	return v, nil
}

// recycle keeps b, which the receiver has just left, as the spare block
// for the next sender that installs one. Every slot of b was written and
// read (the receiver saw each ready flag), and a sender writes into a block
// only after a CAS of the tail within that block's lap, which is over: no
// one touches b any more. The receiver only.
func (u *Unbounded[T]) recycle(b *uBlock[T]) {
	if u.spare.Load() != nil {
		return
	}
	b.next.Store(nil)
	for i := range b.slots {
		b.slots[i].ready.Store(0)
	}
	u.spare.Store(b)
}

// TryRecv receives a value if one is there, without waiting: ErrEmpty when
// there is none, ErrClosed once closed and drained. It never allocates.
func (u *Unbounded[T]) TryRecv() (T, error) {
	u.enter()
	defer u.leave()
	return u.tryRecv()
}

// pollRecv is one poll of a waiting receive.
func (u *Unbounded[T]) pollRecv(n *qnode, wk waker.Waker) (T, error, bool) {
	u.enter()
	defer u.leave()
	if n.registered && u.recvq.stillWaiting(&u.mu, n, wk) {
		var zero T
		return zero, nil, false
	}
	v, err := u.tryRecv()
	if err == ErrEmpty && !u.recvq.register(&u.mu, n, wk, func() bool {
		v, err = u.tryRecv()
		return err != ErrEmpty
	}) {
		return v, nil, false
	}
	return v, err, true
}

// UnboundedRecvFuture is the future of Unbounded.Recv. Its pointer
// implements future.Future[future.Result[T]] and future.Canceler. It
// completes with a value, or with Err ErrClosed once the queue is closed and
// drained. A value leaves the queue only in the poll that returns it.
type UnboundedRecvFuture[T any] struct {
	_  noCopy
	u  *Unbounded[T] // immutable
	n  qnode         // the waiting state
	ph mpPhase       // owner only
}

// Recv returns a future that receives a value, waiting for one.
func (u *Unbounded[T]) Recv() *UnboundedRecvFuture[T] {
	return &UnboundedRecvFuture[T]{u: u}
}

// Poll tries to receive. The owner calls it.
// Completing consumes a unit of the task's budget; with none left, Poll
// yields instead (see the package doc, "Tiers").
func (f *UnboundedRecvFuture[T]) Poll(cx *future.Context) (future.Result[T], bool) {
	f.ph.check()
	if !cx.Proceed() {
		return future.Result[T]{}, false
	}
	v, err, ok := f.u.pollRecv(&f.n, cx.Waker())
	if !ok {
		cx.Waiting(waitUnboundedRecv, number(&f.u.num)) // for a task dump: which channel
		return future.Result[T]{}, false
	}
	cx.Spend()
	f.ph = mpDone
	return future.Result[T]{Value: v, Err: err}, true
}

// Cancel abandons the receive; nothing was received. Idempotent. The
// owner calls it.
func (f *UnboundedRecvFuture[T]) Cancel() {
	if f.ph != mpPending {
		return
	}
	f.ph = mpCancelled
	f.u.recvq.cancel(&f.u.mu, &f.n)
}

// RecvBlocking receives a value, blocking the calling goroutine while the
// queue is empty: ErrClosed once closed and drained, or an error wrapping
// ctx.Err(). A value available wins over a ctx already done.
func (u *Unbounded[T]) RecvBlocking(ctx context.Context) (T, error) {
	u.enter()
	v, err := u.tryRecv()
	for i := 0; i < blockingYields && err == ErrEmpty; i++ {
		u.leave()
		runtime.Gosched()
		u.enter()
		v, err = u.tryRecv()
	}
	u.leave()
	if err != ErrEmpty {
		return v, err
	}
	n := qnodePool.Get().(*qnode)
	sig := getSignal()
	wk := waker.New(sig)
	for {
		if v, err, ok := u.pollRecv(n, wk); ok {
			qnodePool.Put(n)
			putSignal(sig)
			return v, err
		}
		if err := sig.Wait(ctx); err != nil {
			u.recvq.cancel(&u.mu, n)
			qnodePool.Put(n)
			putSignal(sig)
			var zero T
			return zero, fmt.Errorf("channels: recv: %w", err)
		}
	}
}

// Close closes the queue: sends fail with ErrClosed, and the receiver gets
// what was sent before, then ErrClosed. A waiting receiver is woken.
// Idempotent; true for the call that closed it.
func (u *Unbounded[T]) Close() bool {
	if u.tail.Or(tailClosedBit)&tailClosedBit != 0 {
		return false
	}
	var wl waker.WakeList
	u.mu.Lock()
	u.recvq.wakeAllLocked(&wl)
	u.mu.Unlock()
	wl.WakeAll()
	return true
}

// uIndex maps a position to the number of value slots before it.
func uIndex(pos uint64) uint64 {
	return pos/uLap*uBlockCap + min(pos%uLap, uBlockCap)
}

// Len returns the number of values in the queue (a send in progress counts
// as done). It is a snapshot.
func (u *Unbounded[T]) Len() int {
	for {
		t := u.tail.Load() &^ tailClosedBit
		h := u.head.Load()
		if u.tail.Load()&^tailClosedBit == t {
			return int(uIndex(t) - uIndex(h))
		}
	}
}

// IsClosed reports whether Close was called.
func (u *Unbounded[T]) IsClosed() bool { return u.tail.Load()&tailClosedBit != 0 }

// waiters returns the number of waiting receivers, for tests.
func (u *Unbounded[T]) waiters() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.recvq.len()
}
