package channels

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// tailClosedBit is the bit of a tail index that Close sets: a sender's CAS
// on the tail fails once it is set, so no send claims a position after the
// close (crossbeam's mark bit). Positions never reach 2^63.
const tailClosedBit = uint64(1) << 63

// ringPad keeps the hot indices of a channel on cache lines of their own, so
// that senders (tail) and receivers (head) do not invalidate each other's
// line on every operation. 64 bytes is the line of amd64 and most arm64.
type ringPad [64]byte

// qBackoff waits for an operation that another goroutine has half done (a
// slot claimed but not yet written or read): it spins a little, then yields
// the processor so that a preempted owner can finish. *spins is the caller's
// counter, starting at zero.
func qBackoff(spins *int) {
	*spins++
	if *spins <= 8 {
		for i := 0; i < 1<<*spins; i++ {
			_ = i // a short busy wait; the loop itself is the delay
		}
		return
	}
	runtime.Gosched()
}

// tryMode says how trySend and tryRecv treat interference from other
// operations.
type tryMode uint8

const (
	// tryPatient (TrySend, TryRecv) waits for an operation in progress, so
	// that ErrFull and ErrEmpty are linearizable.
	tryPatient tryMode = iota
	// tryImpatient (the waiting tiers) reports full or empty after
	// impatientSpins backoffs for an operation in progress.
	tryImpatient
	// tryYield is tryImpatient that also gives up at its first lost CAS
	// with errContended, having changed nothing: the first poll of a
	// task's future, which then yields (see yieldOnContention).
	tryYield
)

// errContended is trySend's and tryRecv's report, in tryYield mode, of a
// lost CAS. It never leaves the package. It has a type of its own so that
// comparing another error with it is a comparison of type words, with no
// call to the runtime's interface equality (ErrFull and ErrEmpty share
// their type with most errors, and a comparison with them calls it).
var errContended error = contendedError{}

// contendedError is errContended's type.
type contendedError struct{}

func (contendedError) Error() string { return "channels: contended" }

// firstTryMode is the tryMode of a poll of a waiting operation: tryYield
// for a task's operation that was not woken from the waiter list (woken)
// and has not yielded for contention yet (see yieldOnContention), else
// tryImpatient.
func firstTryMode(cx *future.Context, n *qnode, woken bool) tryMode {
	if cx != nil && !woken && !n.contended {
		return tryYield
	}
	return tryImpatient
}

// yieldOnContention is a waiting operation's answer to errContended, the
// lost CAS of a tryYield poll: it yields the polling task and reports true,
// or reports false when the poll has no executor's budget (which
// reschedules a task that yields); the caller then retries at once. A poll
// tries in tryYield mode when it is a task's (cx not nil), was not woken
// from the waiter list (a woken waiter must act on its wake or register
// again in the same poll: were it to yield and then be cancelled, the wake
// would not be passed on) and has not yielded for contention before
// (n.contended: at most one such yield per operation, so that an operation
// that keeps losing still completes).
//
// Why yield: a lost CAS means that another worker has just operated on the
// same end of the ring. Retrying at once, the two cores pull the index's
// and the slots' cache lines back and forth at every operation (a miss on
// each load, CAS and store). Yielding, the worker runs another of its
// tasks, often one at the other end of the ring, which proceeds in parallel
// on other lines while the other worker keeps the index. With tasks on two
// workers, BenchmarkChannelMPMC went from 73 and 108 ns per message
// (medians of two series of ten alternating rounds of 1 s on two vCPUs;
// rounds from 64 to 166) to 30 and 27 (rounds from 19 to 35), where Go's
// buffered chan took 55 and tasks on one worker 25. Backing off after a
// lost CAS (100 to 400 ns of busy wait) instead, or as well, won less and
// not reliably.
func yieldOnContention(cx *future.Context, n *qnode) bool {
	if cx.Budget() == nil {
		return false
	}
	n.contended = true
	cx.Yield()
	return true
}

// qnode is the waiting state of one send or receive that may wait: a task's
// future embeds it, a blocking call takes one from qnodePool. It holds no
// value: values live in the ring, and a waiter is only ever told "look
// again".
type qnode struct {
	// w is linked into a qwaiters list while the operation waits. Its links
	// and Waker are guarded by the channel's mu.
	w waker.Waiter[struct{}]
	// registered is true from the push of w until its owner has seen it
	// unlinked (woken) or removed it. Owner only (the goroutine polling or
	// cancelling the operation).
	registered bool
	// contended is set when a poll of the operation yielded its task after
	// a lost CAS (see yieldOnContention): it yields so at most once. Owner
	// only; a blocking call never sets it.
	contended bool
}

// qnodePool recycles the qnodes of the blocking tier, so that a blocking
// wait allocates nothing in steady state (a Waiter pushed into a list
// escapes to the heap). A node is put back only unlinked and unregistered.
var qnodePool = sync.Pool{New: func() any { return new(qnode) }}

// qwaiters is the waiter list of one side of a channel (senders waiting for
// room, receivers waiting for a value) with the count that makes the
// lock-free data path safe to combine with it.
//
// The no-lost-wakeup argument is Dekker's, with Go's sequentially
// consistent atomics: a waiter increments n (under the channel's mu), THEN
// rechecks the ring, and pushes itself only if the recheck fails; the other
// side completes its ring operation (an atomic store), THEN loads n and, if
// it is not zero, takes mu and wakes the first waiter. Either the waiter's
// recheck sees the completed operation, or the other side's load sees the
// waiter's increment and, having taken mu after the waiter released it,
// finds it in the list.
type qwaiters struct {
	// n counts the waiters in l plus a registrant between its increment
	// and its push or give-up. Written under the channel's mu; loaded
	// without it by the other side after its ring operation (the Dekker
	// pair of the ring's sequence stores).
	n atomic.Int64
	// l is the FIFO of waiting operations, tasks and goroutines alike.
	// Guarded by the channel's mu.
	l waker.List[struct{}]
}

// stillWaiting is the start of a poll of a waiting operation: it reports
// true (not ready) if n is still linked, updating its Waker, and otherwise
// marks n as no longer registered (it was woken: "unlinked means woken"), so
// that the caller tries its operation again.
func (q *qwaiters) stillWaiting(mu *sync.Mutex, n *qnode, wk waker.Waker) bool {
	if !n.registered {
		return false
	}
	mu.Lock()
	if n.w.Linked() {
		if !n.w.Waker().WillWake(wk) {
			n.w.SetWaker(wk)
		}
		mu.Unlock()
		return true
	}
	mu.Unlock()
	n.registered = false
	return false
}

// register is the slow path of a waiting operation: under mu it counts
// itself in, rechecks with recheck (which reports true when the operation
// completed or failed for good), and pushes n with wk if it did not. It
// reports whether recheck succeeded.
func (q *qwaiters) register(mu *sync.Mutex, n *qnode, wk waker.Waker, recheck func() bool) bool {
	mu.Lock()
	q.n.Add(1)
	if recheck() {
		q.n.Add(-1)
		mu.Unlock()
		return true
	}
	q.l.PushBack(&n.w, wk)
	mu.Unlock()
	n.registered = true
	return false
}

// cancel deregisters n. If a waking party took n first (it was woken but
// will not act on it), the wake passes to the next waiter, so that a value
// or a free slot never sits unseen while someone sleeps.
func (q *qwaiters) cancel(mu *sync.Mutex, n *qnode) {
	if !n.registered {
		return
	}
	n.registered = false
	mu.Lock()
	if q.l.Remove(&n.w) {
		q.n.Add(-1)
		mu.Unlock()
		return
	}
	wk, ok := q.popLocked()
	mu.Unlock()
	if ok {
		wk.Wake()
	}
}

// popLocked unlinks the first waiter and returns its Waker. mu is held.
func (q *qwaiters) popLocked() (waker.Waker, bool) {
	w := q.l.PopFront()
	if w == nil {
		return waker.Waker{}, false
	}
	q.n.Add(-1)
	return w.Waker(), true
}

// wakeOne is the other side's half of the Dekker pair: called after a
// completed ring operation, it wakes the first waiter if n says there may be
// one. cx is the poll making the call, or nil outside one.
func (q *qwaiters) wakeOne(mu *sync.Mutex, cx *future.Context) {
	if q.n.Load() != 0 {
		q.wakeFirst(mu, cx)
	}
}

// wakeFirst is wakeOne's slow path: it takes mu and wakes the first waiter.
func (q *qwaiters) wakeFirst(mu *sync.Mutex, cx *future.Context) {
	mu.Lock()
	wk, ok := q.popLocked()
	mu.Unlock()
	if !ok {
		return
	}
	if cx != nil {
		cx.Wake(wk)
	} else {
		wk.Wake()
	}
}

// wakeAllLocked unlinks every waiter into wl, waking full batches at once
// (under mu: the rare overflow beyond waker.WakeListCap). mu is held; the
// caller wakes wl after unlocking.
func (q *qwaiters) wakeAllLocked(wl *waker.WakeList) {
	for {
		k := q.l.PopInto(wl)
		q.n.Add(int64(-k))
		if q.l.IsEmpty() {
			return
		}
		wl.WakeAll()
	}
}

// len returns the number of linked waiters. mu is held.
func (q *qwaiters) len() int { return q.l.Len() }

// mpPhase is the lifecycle of a future of this file: pending, then done or
// cancelled. Owner only.
type mpPhase uint8

const (
	mpPending   mpPhase = iota // may be polled and cancelled
	mpDone                     // returned its value
	mpCancelled                // cancelled
)

// check panics with future's sentinel for a future that may not be polled.
func (p mpPhase) check() {
	switch p {
	case mpDone:
		panic(future.ErrPolledAfterCompletion)
	case mpCancelled:
		panic(future.ErrPolledAfterCancel)
	}
}

// ringSlot is one cell of a Bounded ring (Vyukov). seq says whose turn it
// is: seq == 2*pos means the slot is free for the send at position pos, seq
// == 2*pos+1 that it holds the value sent at pos, for the receive at pos.
// (Vyukov's pos and pos+1 collide for capacity 1: the value sent at pos
// would read as "free" to the send at pos+1; doubling keeps them apart.)
type ringSlot[T any] struct {
	// seq is stored by the sender after writing val and by the receiver
	// after reading it; each loads it before touching val (the release /
	// acquire pair that orders val).
	seq atomic.Uint64
	// val is written by the sender that claimed the slot and read (then
	// cleared) by the receiver that claimed it; seq orders the two.
	val T
}

// Bounded is a bounded multi-producer multi-consumer channel: a lock-free
// Vyukov ring of a fixed capacity, with a separate mutex for the lists of
// senders waiting for room and receivers waiting for a value. See the
// package documentation, "Bounded".
//
// All methods are safe for concurrent use. A Bounded must not be copied.
type Bounded[T any] struct {
	_ noCopy
	_ ringPad
	// head is the next position to receive from. Receivers CAS it; senders
	// load it to tell a full ring from a receive in progress.
	head atomic.Uint64
	_    ringPad
	// tail is the next position to send to, with tailClosedBit once closed.
	// Senders CAS it; Close sets the bit (Or); receivers load it to tell an
	// empty ring from a send in progress and to see the close.
	tail atomic.Uint64
	_    ringPad

	buf      []ringSlot[T] // the ring; immutable after NewBounded
	capacity uint64        // len(buf); immutable
	mask     uint64        // capacity-1 when capacity is a power of two, else 0; immutable
	num      uint64        // the channel's number, which task dumps show with its waits; immutable
	_        ringPad       // keeps the immutable fields off the line the waiter counts dirty

	// mu guards the two waiter lists and every qnode linked in them. It
	// is never taken on the data path unless a waiter count is non-zero.
	mu    sync.Mutex
	recvq qwaiters // receivers waiting for a value
	sendq qwaiters // senders waiting for room
}

// channelNumbers numbers the channels, for task dumps: a Bounded at its
// creation, the other kinds at their first wait (number).
var channelNumbers atomic.Uint64

// number returns the channel number in *n, taking the next one at the
// first call. Any goroutine may call it.
func number(n *atomic.Uint64) uint64 {
	if v := n.Load(); v != 0 {
		return v
	}
	v := channelNumbers.Add(1)
	if n.CompareAndSwap(0, v) {
		return v
	}
	return n.Load()
}

// NewBounded returns an empty channel holding up to capacity values. It
// panics with ErrCapacity if capacity < 1.
func NewBounded[T any](capacity int) *Bounded[T] {
	if capacity < 1 {
		panic(ErrCapacity)
	}
	c := &Bounded[T]{buf: make([]ringSlot[T], capacity), capacity: uint64(capacity), num: channelNumbers.Add(1)}
	if capacity&(capacity-1) == 0 {
		c.mask = uint64(capacity - 1)
	}
	for i := range c.buf {
		c.buf[i].seq.Store(2 * uint64(i))
	}
	return c
}

// slot returns the cell of position pos (closed bit cleared by the caller).
func (c *Bounded[T]) slot(pos uint64) *ringSlot[T] {
	if c.mask != 0 || c.capacity == 1 {
		return &c.buf[pos&c.mask]
	}
	return &c.buf[pos%c.capacity]
}

// impatientSpins is how many times a waiting operation (a future, a
// blocking call) backs off for an operation in progress before it treats
// the ring as full or empty and registers as a waiter. That is safe: the
// operation in progress loads the waiter count after it completes, which is
// after the registrant's increment (Dekker, see qwaiters), so it wakes the
// registrant. Only TrySend and TryRecv, whose ErrFull and ErrEmpty must be
// linearizable, wait for it to finish (patient).
const impatientSpins = 4

// trySend places v, or reports ErrFull or ErrClosed, or errContended in
// tryYield mode. Failures are linearizable: "full" is reported only when
// head+capacity == tail was observed, and a receive that claimed a slot but
// has not yet freed it is waited for rather than reported as full, unless
// the mode is not tryPatient (see impatientSpins).
func (c *Bounded[T]) trySend(v T, mode tryMode) error {
	spins := 0
	t := c.tail.Load()
	for {
		if t&tailClosedBit != 0 {
			return ErrClosed
		}
		s := c.slot(t)
		seq := s.seq.Load()
		switch {
		case seq == 2*t:
			if c.tail.CompareAndSwap(t, t+1) {
				s.val = v
				s.seq.Store(2*t + 1)
				return nil
			}
			if mode == tryYield {
				return errContended // nothing claimed; see yieldOnContention
			}
			t = c.tail.Load()
		case seq < 2*t: // the slot still holds the value of the previous lap
			h := c.head.Load()
			if h+c.capacity == t {
				return ErrFull // full when tail was loaded; see doc "Linearizable failures"
			}
			nt := c.tail.Load()
			if nt == t { // a receive claimed the slot and is reading it
				if mode != tryPatient && spins >= impatientSpins {
					return ErrFull // see impatientSpins
				}
				qBackoff(&spins)
			}
			t = nt
		default: // another sender claimed t
			t = c.tail.Load()
		}
	}
}

// tryRecv takes the oldest value, or reports ErrEmpty, or ErrClosed once
// closed and drained, or errContended in tryYield mode. A send that claimed
// a slot but has not yet written it is waited for rather than reported as
// empty, unless the mode is not tryPatient.
func (c *Bounded[T]) tryRecv(mode tryMode) (T, error) {
	spins := 0
	h := c.head.Load()
	for {
		s := c.slot(h)
		seq := s.seq.Load()
		switch {
		case seq == 2*h+1:
			if c.head.CompareAndSwap(h, h+1) {
				v := s.val
				var zero T
				s.val = zero
				s.seq.Store(2 * (h + c.capacity))
				return v, nil
			}
			if mode == tryYield {
				var zero T
				return zero, errContended // nothing taken; see yieldOnContention
			}
			h = c.head.Load()
		case seq < 2*h+1: // not written for this lap yet
			t := c.tail.Load()
			if t&^tailClosedBit == h {
				var zero T
				if t&tailClosedBit != 0 {
					return zero, ErrClosed
				}
				return zero, ErrEmpty
			}
			nh := c.head.Load()
			if nh == h { // a send claimed h and is writing it
				if mode != tryPatient && spins >= impatientSpins {
					var zero T
					return zero, ErrEmpty // see impatientSpins
				}
				qBackoff(&spins)
			}
			h = nh
		default: // another receiver took h
			h = c.head.Load()
		}
	}
}

// TrySend sends v if there is room, without waiting. It returns nil, or
// ErrFull (nothing was sent), or ErrClosed. It never allocates.
func (c *Bounded[T]) TrySend(v T) error {
	err := c.trySend(v, tryPatient)
	if err == nil {
		c.recvq.wakeOne(&c.mu, nil)
	}
	return err
}

// TryRecv receives a value if one is there, without waiting. It returns
// ErrEmpty when there is none, and ErrClosed only once the channel is closed
// and everything sent before the close was received. It never allocates.
func (c *Bounded[T]) TryRecv() (T, error) {
	v, err := c.tryRecv(tryPatient)
	if err == nil {
		c.sendq.wakeOne(&c.mu, nil)
	}
	return v, err
}

// pollSend is one poll of a waiting send of v: ready with nil or ErrClosed,
// or registered in sendq with wk, or (a task's poll, see yieldOnContention)
// not ready having yielded the task after a lost CAS.
func (c *Bounded[T]) pollSend(n *qnode, v T, cx *future.Context, wk waker.Waker) (error, bool) {
	woken := n.registered // and no longer waiting, unless stillWaiting says so
	if woken && c.sendq.stillWaiting(&c.mu, n, wk) {
		return nil, false
	}
	err := c.trySend(v, firstTryMode(cx, n, woken))
	if err == nil {
		c.recvq.wakeOne(&c.mu, cx)
		return nil, true
	}
	return c.pollSendSlow(n, v, cx, wk, err)
}

// pollSendSlow is pollSend after a first try that did not place v (err):
// the yield after a lost CAS, or the registration in sendq. Apart, so that
// the fast path keeps its values in registers.
func (c *Bounded[T]) pollSendSlow(n *qnode, v T, cx *future.Context, wk waker.Waker, err error) (error, bool) {
	if err == errContended {
		if yieldOnContention(cx, n) {
			return nil, false
		}
		err = c.trySend(v, tryImpatient)
	}
	if err == ErrFull && !c.sendq.register(&c.mu, n, wk, func() bool {
		err = c.trySend(v, tryImpatient)
		return err != ErrFull
	}) {
		return nil, false
	}
	if err == nil {
		c.recvq.wakeOne(&c.mu, cx)
	}
	return err, true
}

// pollRecv is one poll of a waiting receive: ready with a value, or with
// ErrClosed, or registered in recvq with wk, or (a task's poll, see
// yieldOnContention) not ready having yielded the task after a lost CAS.
func (c *Bounded[T]) pollRecv(n *qnode, cx *future.Context, wk waker.Waker) (T, error, bool) {
	woken := n.registered // and no longer waiting, unless stillWaiting says so
	if woken && c.recvq.stillWaiting(&c.mu, n, wk) {
		var zero T
		return zero, nil, false
	}
	v, err := c.tryRecv(firstTryMode(cx, n, woken))
	if err == nil {
		c.sendq.wakeOne(&c.mu, cx)
		return v, nil, true
	}
	return c.pollRecvSlow(n, cx, wk, err)
}

// pollRecvSlow is pollRecv after a first try that took nothing (err): the
// yield after a lost CAS, or the registration in recvq. Apart, so that the
// fast path keeps its values in registers.
func (c *Bounded[T]) pollRecvSlow(n *qnode, cx *future.Context, wk waker.Waker, err error) (T, error, bool) {
	var v T
	if err == errContended {
		if yieldOnContention(cx, n) {
			return v, nil, false
		}
		v, err = c.tryRecv(tryImpatient)
	}
	if err == ErrEmpty && !c.recvq.register(&c.mu, n, wk, func() bool {
		v, err = c.tryRecv(tryImpatient)
		return err != ErrEmpty
	}) {
		return v, nil, false
	}
	if err == nil {
		c.sendq.wakeOne(&c.mu, cx)
	}
	return v, err, true
}

// SendFuture is the future of Bounded.Send. Its pointer implements
// future.Future[error] and future.Canceler. It completes with nil once the
// value is in the channel, or with a *SendError[T] holding the value (Err
// ErrClosed) if the channel was closed first. The value is placed only in
// the poll that returns ready, so a cancelled SendFuture never sent it.
type SendFuture[T any] struct {
	_  noCopy
	c  *Bounded[T] // immutable
	v  T           // the value to send; owner only
	n  qnode       // the waiting state; see qnode
	ph mpPhase     // owner only
}

// Send returns a future that sends v, waiting for room.
func (c *Bounded[T]) Send(v T) *SendFuture[T] {
	return &SendFuture[T]{c: c, v: v}
}

// Poll tries to send; see SendFuture. The owner calls it.
// Completing consumes a unit of the task's budget; with none left, Poll
// yields instead (see the package doc, "Tiers").
func (f *SendFuture[T]) Poll(cx *future.Context) (error, bool) {
	f.ph.check()
	if !cx.Proceed() {
		return nil, false
	}
	err, ok := f.c.pollSend(&f.n, f.v, cx, cx.Waker())
	if !ok {
		cx.Waiting(waitBoundedSend, f.c.num) // for a task dump: which channel
		return nil, false
	}
	cx.Spend()
	f.ph = mpDone
	var zero T
	v := f.v
	f.v = zero
	if err != nil {
		return &SendError[T]{Value: v, Err: err}, true
	}
	return nil, true
}

// Cancel abandons the send: the value was not sent. It leaves the waiter
// list at once and passes on a wake it had been given. Idempotent. The
// owner calls it.
func (f *SendFuture[T]) Cancel() {
	if f.ph != mpPending {
		return
	}
	f.ph = mpCancelled
	f.c.sendq.cancel(&f.c.mu, &f.n)
}

// RecvFuture is the future of Bounded.Recv. Its pointer implements
// future.Future[future.Result[T]] and future.Canceler. It completes with a
// value, or with Err ErrClosed once the channel is closed and drained. A
// value leaves the ring only in the poll that returns it, so a cancelled
// RecvFuture (a lost select) never took one.
type RecvFuture[T any] struct {
	_  noCopy
	c  *Bounded[T] // immutable
	n  qnode       // the waiting state; see qnode
	ph mpPhase     // owner only
}

// Recv returns a future that receives a value, waiting for one.
func (c *Bounded[T]) Recv() *RecvFuture[T] {
	return &RecvFuture[T]{c: c}
}

// Poll tries to receive; see RecvFuture. The owner calls it.
// Completing consumes a unit of the task's budget; with none left, Poll
// yields instead (see the package doc, "Tiers").
func (f *RecvFuture[T]) Poll(cx *future.Context) (future.Result[T], bool) {
	f.ph.check()
	if !cx.Proceed() {
		return future.Result[T]{}, false
	}
	v, err, ok := f.c.pollRecv(&f.n, cx, cx.Waker())
	if !ok {
		cx.Waiting(waitBoundedRecv, f.c.num) // for a task dump: which channel
		return future.Result[T]{}, false
	}
	cx.Spend()
	f.ph = mpDone
	return future.Result[T]{Value: v, Err: err}, true
}

// Cancel abandons the receive: nothing was received. It leaves the waiter
// list at once and passes on a wake it had been given. Idempotent. The
// owner calls it.
func (f *RecvFuture[T]) Cancel() {
	if f.ph != mpPending {
		return
	}
	f.ph = mpCancelled
	f.c.recvq.cancel(&f.c.mu, &f.n)
}

// What the tasks waiting in a channel's futures wait on, for a task dump
// (future.Context.Waiting).
var (
	waitBoundedSend   = future.NewWaitKind("Bounded.Send", future.WaitNumber)
	waitBoundedRecv   = future.NewWaitKind("Bounded.Recv", future.WaitNumber)
	waitUnboundedRecv = future.NewWaitKind("Unbounded.Recv", future.WaitNumber)
	waitOneshotRecv   = future.NewWaitKind("Oneshot.Recv", future.WaitNumber)
	waitBroadcastRecv = future.NewWaitKind("Broadcast.Recv", future.WaitNumber)
	waitWatchChanged  = future.NewWaitKind("Watch.Changed", future.WaitNumber)
)

// blockingYields is how many times a blocking call yields the processor
// and retries before it parks: parking and waking a goroutine through a
// Signal costs several times a yield, and the other party is often about to
// act (a ping-pong, a consumer that keeps up).
const blockingYields = 2

// SendBlocking sends v, blocking the calling goroutine while the channel is
// full. It returns nil, or a *SendError[T] holding v whose Err is ErrClosed
// or ctx.Err(). Room available wins over a ctx already done.
func (c *Bounded[T]) SendBlocking(ctx context.Context, v T) error {
	err := c.trySend(v, tryImpatient)
	for i := 0; i < blockingYields && err == ErrFull; i++ {
		runtime.Gosched()
		err = c.trySend(v, tryImpatient)
	}
	if err == nil {
		c.recvq.wakeOne(&c.mu, nil)
		return nil
	}
	if err == ErrFull {
		err = c.sendSlow(ctx, v)
		if err == nil {
			return nil
		}
	}
	return &SendError[T]{Value: v, Err: err}
}

// sendSlow is SendBlocking's waiting path; it returns nil, ErrClosed or the
// context's error.
func (c *Bounded[T]) sendSlow(ctx context.Context, v T) error {
	n := qnodePool.Get().(*qnode)
	sig := getSignal()
	wk := waker.New(sig)
	for {
		if err, ok := c.pollSend(n, v, nil, wk); ok {
			qnodePool.Put(n)
			putSignal(sig)
			return err
		}
		if err := sig.Wait(ctx); err != nil {
			c.sendq.cancel(&c.mu, n)
			qnodePool.Put(n)
			putSignal(sig)
			return err
		}
	}
}

// RecvBlocking receives a value, blocking the calling goroutine while the
// channel is empty. It returns ErrClosed once the channel is closed and
// drained, or an error wrapping ctx.Err() if ctx is done first. A value
// available wins over a ctx already done.
func (c *Bounded[T]) RecvBlocking(ctx context.Context) (T, error) {
	v, err := c.tryRecv(tryImpatient)
	for i := 0; i < blockingYields && err == ErrEmpty; i++ {
		runtime.Gosched()
		v, err = c.tryRecv(tryImpatient)
	}
	if err == nil {
		c.sendq.wakeOne(&c.mu, nil)
		return v, nil
	}
	if err != ErrEmpty {
		return v, err
	}
	n := qnodePool.Get().(*qnode)
	sig := getSignal()
	wk := waker.New(sig)
	for {
		if v, err, ok := c.pollRecv(n, nil, wk); ok {
			qnodePool.Put(n)
			putSignal(sig)
			return v, err
		}
		if err := sig.Wait(ctx); err != nil {
			c.recvq.cancel(&c.mu, n)
			qnodePool.Put(n)
			putSignal(sig)
			var zero T
			return zero, fmt.Errorf("channels: recv: %w", err)
		}
	}
}

// Close closes the channel: sends fail with ErrClosed from now on, and
// receives get what was sent before, then ErrClosed. Every waiting sender
// and receiver is woken (a waiting sender's future then fails with its value
// in a *SendError[T]). Close is idempotent and reports true for the call
// that closed the channel.
func (c *Bounded[T]) Close() bool {
	if c.tail.Or(tailClosedBit)&tailClosedBit != 0 {
		return false
	}
	var wl waker.WakeList
	c.mu.Lock()
	c.recvq.wakeAllLocked(&wl)
	if !wl.CanPush() {
		wl.WakeAll()
	}
	c.sendq.wakeAllLocked(&wl)
	c.mu.Unlock()
	wl.WakeAll()
	return true
}

// Len returns the number of values in the channel (a send or receive in
// progress counts as done). It is a snapshot.
func (c *Bounded[T]) Len() int {
	for {
		t := c.tail.Load() &^ tailClosedBit
		h := c.head.Load()
		if c.tail.Load()&^tailClosedBit == t {
			return int(t - h)
		}
	}
}

// Cap returns the capacity given to NewBounded.
func (c *Bounded[T]) Cap() int { return int(c.capacity) }

// IsClosed reports whether Close was called.
func (c *Bounded[T]) IsClosed() bool { return c.tail.Load()&tailClosedBit != 0 }

// waiters returns the number of waiting senders and receivers, for tests.
func (c *Bounded[T]) waiters() (senders, receivers int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sendq.len(), c.recvq.len()
}
