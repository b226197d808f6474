package syncprim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

var (
	// ErrNegativePermits is the panic value of NewSemaphore and Release given
	// a negative number of permits.
	ErrNegativePermits = errors.New("syncprim: negative permits")

	// ErrInvalidPermits is the error of an Acquire or AcquireBlocking of a
	// negative number of permits, or of more than MaxPermits.
	ErrInvalidPermits = errors.New("syncprim: invalid number of permits")

	// ErrTooManyPermits is the panic value of NewSemaphore and Release when
	// the semaphore would hold more than MaxPermits permits.
	ErrTooManyPermits = errors.New("syncprim: too many permits")
)

// MaxPermits is the largest number of permits a Semaphore holds, and the
// largest single Acquire: 2^60 on 64-bit platforms, math.MaxInt on 32-bit
// ones.
const MaxPermits = min(1<<60, math.MaxInt)

// The state word of a semCore (see "Semaphore" in the package doc):
//
//	state = (available - bias) << flagBits | closedBit | waitersBit
//
// bias is the wrapper type's (0 for Semaphore, MaxReaders for RwLock), so
// that the zero state word is a ready RwLock.
const (
	waitersBit int64 = 1 << 0 // the waiter list is not empty; free is 0
	closedBit  int64 = 1 << 1 // Close was called
	flagBits         = 2
)

// grant is the Value of a semCore waiter: how many permits it needs and how
// many have been handed to it so far (only the head of the list accumulates).
// Unlinked with got == need: acquired; unlinked with got < need: closed.
type grant struct {
	// need and got are written under the semaphore's lock (got also by
	// the waiter after it was unlinked, its own from then on).
	need, got int64
	// taken is set, after got, by the party that unlinks the waiter to
	// wake it (a release that completed its grant, Close), and cleared by
	// the waiter under the lock before it is pushed: the waiter loads it
	// without the lock, so that a woken waiter finishes without taking the
	// lock again (the Store is the partner of that Load, and orders got
	// before it).
	taken atomic.Bool
}

// result is the outcome of a waiter that was taken off the list: nil when
// it was granted what it needed, ErrClosed when Close took it. The waiter
// calls it once taken is set, or under the lock once it is unlinked.
func (g *grant) result() error {
	if g.got == g.need {
		return nil
	}
	return ErrClosed
}

// wakeBatchCap is how many Wakers a wakeBatch holds.
const wakeBatchCap = 8

// wakeBatch is the semaphore's small waker.WakeList: it collects, under the
// lock, the Wakers of the waiters a release or Close took off the list, to
// be called after unlocking. A release of a lock wakes one waiter or a few,
// and zeroing a full WakeList at every contended release cost more than the
// rest of the batch. When it is full, push wakes at once, under the lock
// (Wake never blocks). The zero wakeBatch is empty; declare it as a local
// variable of the goroutine that uses it.
type wakeBatch struct {
	n      int
	wakers [wakeBatchCap]waker.Waker
}

// push adds wk to the batch, or wakes it at once when the batch is full.
func (b *wakeBatch) push(wk waker.Waker) {
	if b.n == len(b.wakers) {
		wk.Wake()
		return
	}
	b.wakers[b.n] = wk
	b.n++
}

// wakeAll calls the batch's Wakers in push order and empties it. Call it
// after releasing the lock under which the batch was filled.
func (b *wakeBatch) wakeAll() {
	n := b.n
	b.n = 0 // first: a Wake that panics leaves the batch empty
	for i := range n {
		wk := b.wakers[i]
		b.wakers[i] = waker.Waker{}
		wk.Wake()
	}
}

// semCore is the counting semaphore that Semaphore and RwLock share.
// Its zero value holds bias permits. Every method takes the wrapper's bias
// (available = stored + bias) and max (the largest stored value a release
// may reach; 0 for RwLock, so that an extra release is caught).
type semCore struct {
	// state is the word described above. Fast paths (tryAcquire, release
	// with no waiters) CAS it without the lock. While waitersBit is set it
	// is written only under mu, by Store, because every lock-free writer
	// backs off on seeing the bit; the bit itself is set and cleared under
	// mu only. Loads are acquire, CAS and Store are release: a successful
	// CAS of the acquirer pairs with the release that made the permits free.
	state atomic.Int64
	// mu guards waiters, every Waiter linked in it (and its Value), and the
	// writes of state made while waitersBit is set.
	mu sync.Mutex
	// waiters is the FIFO of acquirers, tasks and goroutines together. mu.
	waiters waker.List[grant]
}

// tryAcquire takes n permits if they are free and nobody is queued and the
// semaphore is open: one CAS, no lock.
// Any goroutine may call it.
func (c *semCore) tryAcquire(n, bias int64) bool {
	for {
		s := c.state.Load()
		if s&(waitersBit|closedBit) != 0 || s>>flagBits+bias < n {
			return false
		}
		if c.state.CompareAndSwap(s, s-n<<flagBits) {
			return true
		}
	}
}

// overflowErr is the panic value of a release past max.
func overflowErr(max int64) error {
	if max == 0 {
		return ErrNotLocked
	}
	return ErrTooManyPermits
}

// release returns n >= 0 permits: one CAS when nobody is queued, else the
// lock and a direct hand-off to the queue (releaseSlow).
// Any goroutine may call it.
func (c *semCore) release(n, max int64) {
	for {
		s := c.state.Load()
		if s&waitersBit != 0 {
			c.releaseSlow(n, max)
			return
		}
		if s>>flagBits > max-n {
			panic(overflowErr(max))
		}
		if c.state.CompareAndSwap(s, s+n<<flagBits) {
			return
		}
	}
}

// releaseSlow releases n permits under the lock and wakes, after unlocking,
// the waiters that were granted their permits.
func (c *semCore) releaseSlow(n, max int64) {
	var wl wakeBatch
	c.mu.Lock()
	err := c.releaseLocked(n, max, &wl)
	c.mu.Unlock()
	wl.wakeAll()
	if err != nil {
		panic(err)
	}
}

// releaseLocked releases n permits: hands them to the queue if there is one,
// else adds them to the free count. It returns the panic value of an
// over-release instead of panicking, so that the caller unlocks first.
// c.mu must be held.
func (c *semCore) releaseLocked(n, max int64, wl *wakeBatch) error {
	for {
		s := c.state.Load()
		if s&waitersBit != 0 {
			return c.handOffLocked(n, max, wl)
		}
		// Nobody is queued: lock-free writers may race, so CAS.
		if s>>flagBits > max-n {
			return overflowErr(max)
		}
		if c.state.CompareAndSwap(s, s+n<<flagBits) {
			return nil
		}
	}
}

// handOffLocked gives n permits to the waiters in FIFO order: the head
// accumulates them until it has what it needs, then leaves the list and its
// Waker goes into wl. What is left over becomes free, and waitersBit is
// cleared if the list is now empty. waitersBit must be set, so free is 0 and
// state is stable under the lock.
// c.mu must be held.
func (c *semCore) handOffLocked(n, max int64, wl *wakeBatch) error {
	s := c.state.Load()
	// Free is 0 (stored -bias), so the limit on available permits is
	// max+bias = max-stored; the head's accumulated permits count toward it.
	// More than that is an RwLock unlocked too often: nothing changes.
	if h := c.waiters.Front(); h != nil && h.Value.got > max-s>>flagBits-n {
		return overflowErr(max)
	}
	for n > 0 {
		w := c.waiters.Front()
		if w == nil {
			break
		}
		take := min(n, w.Value.need-w.Value.got)
		w.Value.got += take
		n -= take
		if w.Value.got < w.Value.need {
			break // n is 0
		}
		c.waiters.PopFront()
		w.Value.taken.Store(true) // after got; pairs with the waiter's Load
		wl.push(w.Waker())
	}
	s += n << flagBits
	if c.waiters.IsEmpty() {
		s &^= waitersBit
	}
	c.state.Store(s) // stable: lock-free writers back off while waitersBit is set
	return nil
}

// acquireLocked is the slow path of an acquire, run under the lock so that
// no release can slip permits past the queue: it takes n permits if they
// are free and nobody is queued; otherwise it takes whatever is free as a
// partial grant, sets waitersBit and queues w with wk. It reports whether
// the permits were acquired, or ErrClosed.
// c.mu must be held.
func (c *semCore) acquireLocked(w *waker.Waiter[grant], n, bias int64, wk waker.Waker) (bool, error) {
	for {
		s := c.state.Load()
		switch {
		case s&closedBit != 0:
			return false, ErrClosed
		case s&waitersBit != 0: // free is 0 and state is ours while we hold mu
			w.Value.need, w.Value.got = n, 0
			w.Value.taken.Store(false)
			c.waiters.PushBack(w, wk)
			return false, nil
		}
		free := s>>flagBits + bias
		if free >= n {
			if c.state.CompareAndSwap(s, s-n<<flagBits) {
				return true, nil
			}
			continue
		}
		// Take what is free and announce the queue in one CAS: a releaser
		// whose CAS came first made us see its permits; a later one sees
		// waitersBit and takes the lock.
		if c.state.CompareAndSwap(s, (-bias)<<flagBits|waitersBit) {
			w.Value.need, w.Value.got = n, free
			w.Value.taken.Store(false)
			c.waiters.PushBack(w, wk)
			return false, nil
		}
	}
}

// leaveLocked takes w, which gave up, out of the semaphore: still queued,
// it leaves and the permits it had accumulated go to the next waiters;
// already granted, its permits are released; closed, nothing. The
// over-release check cannot fail for permits that were taken, so its result
// is dropped.
// c.mu must be held.
func (c *semCore) leaveLocked(w *waker.Waiter[grant], max int64, wl *wakeBatch) {
	if c.waiters.Remove(w) {
		_ = c.handOffLocked(w.Value.got, max, wl) // waitersBit is still set
		w.Value.got = 0
		return
	}
	if w.Value.got == w.Value.need {
		_ = c.releaseLocked(w.Value.need, max, wl)
		w.Value.got = 0
	}
}

// close sets closedBit, fails every queued waiter (their accumulated
// permits become free) and reports whether this call closed it.
// Any goroutine may call it.
func (c *semCore) close() bool {
	var wl wakeBatch
	c.mu.Lock()
	for {
		s := c.state.Load()
		if s&closedBit != 0 {
			c.mu.Unlock()
			return false
		}
		if s&waitersBit == 0 {
			if !c.state.CompareAndSwap(s, s|closedBit) {
				continue
			}
			break
		}
		for w := c.waiters.PopFront(); w != nil; w = c.waiters.PopFront() {
			s += w.Value.got << flagBits
			w.Value.got = 0
			w.Value.taken.Store(true) // after got; pairs with the waiter's Load
			wl.push(w.Waker())
		}
		c.state.Store(s&^waitersBit | closedBit)
		break
	}
	c.mu.Unlock()
	wl.wakeAll()
	return true
}

// available returns the free permits (0 while anyone is queued).
func (c *semCore) available(bias int64) int64 { return c.state.Load()>>flagBits + bias }

// waiterCount returns the length of the queue, for tests.
func (c *semCore) waiterCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waiters.Len()
}

// waiterPool recycles the Waiter of the blocking tier, which escapes to the
// heap because the list points to it. A Waiter is put back only unlinked.
var waiterPool = sync.Pool{New: func() any { return new(waker.Waiter[grant]) }}

// acquireBlocking is the goroutine tier (see "The waiting protocol" in
// package waker). A wake that won the race against ctx is kept: the call
// succeeds, as a free resource wins over a done ctx.
// Any goroutine may call it.
func (c *semCore) acquireBlocking(ctx context.Context, n, bias, max int64) error {
	if c.tryAcquire(n, bias) {
		return nil
	}
	w := waiterPool.Get().(*waker.Waiter[grant])
	sig := getSignal()
	c.mu.Lock()
	ok, err := c.acquireLocked(w, n, bias, waker.New(sig))
	c.mu.Unlock()
	if ok || err != nil {
		putSignal(sig)
		waiterPool.Put(w)
		return err
	}
	err = c.waitBlocking(ctx, w, sig, max)
	putSignal(sig)
	waiterPool.Put(w)
	return err
}

// waitBlocking waits on sig until w is unlinked (woken) or ctx is done.
func (c *semCore) waitBlocking(ctx context.Context, w *waker.Waiter[grant], sig *waker.Signal, max int64) error {
	for {
		werr := sig.Wait(ctx)
		if w.Value.taken.Load() { // pairs with the waking party's Store
			return w.Value.result()
		}
		c.mu.Lock()
		if !w.Linked() {
			c.mu.Unlock()
			return w.Value.result()
		}
		if werr != nil {
			var wl wakeBatch
			c.leaveLocked(w, max, &wl)
			c.mu.Unlock()
			wl.wakeAll()
			return fmt.Errorf("syncprim: acquire: %w", werr)
		}
		c.mu.Unlock() // spurious wakeup (a late wake of a recycled Signal)
	}
}

// The wrapper types of a semCore, for an acquireOp.
const (
	kindSemaphore uint8 = iota // bias 0, max MaxPermits
	kindRwLock                 // bias MaxReaders, max 0
)

// kindBias returns the bias of a kind.
func kindBias(k uint8) int64 {
	switch k {
	case kindRwLock:
		return MaxReaders
	}
	return 0
}

// kindMax returns the largest stored value of a kind.
func kindMax(k uint8) int64 {
	if k == kindSemaphore {
		return MaxPermits
	}
	return 0
}

// The phases of an acquireOp. Written and read by the future's owner only.
const (
	opNew       uint8 = iota // not polled yet
	opQueued                 // its waiter was pushed
	opDone                   // returned its result
	opCancelled              // cancelled
)

// acquireOp is the task-tier acquire that every future of this file
// embeds: a Waiter inside the future, so waiting allocates nothing.
type acquireOp struct {
	// core is the semaphore, n the permits wanted (out of range: the first
	// poll fails with ErrInvalidPermits), kind the wrapper type, which gives
	// bias and max. Set at construction, read-only afterwards.
	core *semCore
	n    int64
	kind uint8
	// w is the waiter; its fields are guarded by core.mu once pushed.
	w waker.Waiter[grant]
	// phase is one of opNew.., the owner's only.
	phase uint8
}

// poll advances the acquire: (nil or ErrClosed or err, true) when done.
// Completing consumes a unit of the task's budget; with none left, poll
// yields instead (see the future package, "The cooperative budget"). The
// future's owner calls it.
func (op *acquireOp) poll(cx *future.Context) (error, bool) {
	switch op.phase {
	case opDone:
		panic(future.ErrPolledAfterCompletion)
	case opCancelled:
		panic(future.ErrPolledAfterCancel)
	}
	if !cx.Proceed() {
		return nil, false
	}
	err, ok := op.advance(cx)
	if ok {
		cx.Spend()
	}
	return err, ok
}

// advance is poll past the phase and budget checks.
func (op *acquireOp) advance(cx *future.Context) (error, bool) {
	if op.phase == opQueued {
		return op.pollQueued(cx)
	}
	if op.n < 0 || op.n > MaxPermits {
		op.phase = opDone
		return ErrInvalidPermits, true
	}
	c := op.core
	if op.n == 0 { // nothing to wait for, even behind a queue
		op.phase = opDone
		if c.state.Load()&closedBit != 0 {
			return ErrClosed, true
		}
		return nil, true
	}
	if c.tryAcquire(op.n, kindBias(op.kind)) {
		op.phase = opDone
		return nil, true
	}
	c.mu.Lock()
	ok, err := c.acquireLocked(&op.w, op.n, kindBias(op.kind), cx.Waker())
	c.mu.Unlock()
	if ok || err != nil {
		op.phase = opDone
		return err, true
	}
	op.phase = opQueued
	return nil, false
}

// pollQueued is a poll after the waiter was pushed: "Unlinked means woken".
func (op *acquireOp) pollQueued(cx *future.Context) (error, bool) {
	if !op.w.Value.taken.Load() { // pairs with the waking party's Store
		c := op.core
		c.mu.Lock()
		if op.w.Linked() {
			if wk := cx.Waker(); !op.w.Waker().WillWake(wk) {
				op.w.SetWaker(wk)
			}
			c.mu.Unlock()
			return nil, false
		}
		c.mu.Unlock()
	}
	op.phase = opDone
	return op.w.Value.result(), true
}

// cancel leaves the queue at once and passes on what the future was handed
// but had not returned. Idempotent; a no-op after completion.
// The future's owner calls it.
func (op *acquireOp) cancel() {
	switch op.phase {
	case opNew:
		op.phase = opCancelled
		return
	case opQueued:
	default:
		return
	}
	op.phase = opCancelled
	var wl wakeBatch
	c := op.core
	c.mu.Lock()
	c.leaveLocked(&op.w, kindMax(op.kind), &wl)
	c.mu.Unlock()
	wl.wakeAll()
}

// Semaphore is a counting semaphore, FIFO-fair with direct hand-off: see
// "Semaphore" in the package doc. The zero Semaphore has no permits and is
// ready to use. A Semaphore must not be copied after first use.
type Semaphore struct {
	_ noCopy
	// c is the semaphore with bias 0.
	c semCore
	// num is the semaphore's number in task dumps, taken at its first
	// wait by a task (lockid.go's waitNumber).
	num atomic.Uint64
}

// NewSemaphore returns a Semaphore holding permits permits. It panics with
// ErrNegativePermits if permits < 0 and ErrTooManyPermits above MaxPermits.
func NewSemaphore(permits int) *Semaphore {
	if permits < 0 {
		panic(ErrNegativePermits)
	}
	if int64(permits) > MaxPermits {
		panic(ErrTooManyPermits)
	}
	s := &Semaphore{}
	s.c.state.Store(int64(permits) << flagBits)
	return s
}

// TryAcquire takes n permits without waiting and reports whether it did. It
// fails if n < 0, the semaphore is closed, fewer than n are free, or anyone
// is queued (no barging past waiters). TryAcquire(0) succeeds when open and
// nobody is queued. One CAS, no lock, no allocation.
func (s *Semaphore) TryAcquire(n int) bool {
	if n < 0 {
		return false
	}
	return s.c.tryAcquire(int64(n), 0)
}

// Acquire returns a future of n permits. Its result is nil (the permits are
// the caller's, to Release), ErrClosed, or ErrInvalidPermits (n < 0 or n >
// MaxPermits). Acquire(0) is ready at once (nil, or ErrClosed if closed).
// Cancelling it leaves the queue at once and releases what it was handed.
func (s *Semaphore) Acquire(n int) *AcquireFuture {
	return &AcquireFuture{s: s, op: acquireOp{core: &s.c, n: int64(n), kind: kindSemaphore}}
}

// AcquireBlocking takes n permits, blocking the calling goroutine until
// they are handed to it, the semaphore is closed (ErrClosed) or ctx is done
// (an error wrapping ctx.Err(); the call then leaves no trace). Free permits
// win over a ctx that is already done.
func (s *Semaphore) AcquireBlocking(ctx context.Context, n int) error {
	if n < 0 || int64(n) > MaxPermits {
		return ErrInvalidPermits
	}
	if n == 0 {
		if s.IsClosed() {
			return ErrClosed
		}
		return nil
	}
	return s.c.acquireBlocking(ctx, int64(n), 0, MaxPermits)
}

// Release returns n permits, handing them straight to queued waiters in
// FIFO order. It also adds permits the semaphore never had (a zero
// Semaphore gets its first permits this way), so it cannot catch a double
// release: hold permits as a Permit (AcquirePermit and its siblings) for
// that. It panics with ErrNegativePermits if n < 0 and with
// ErrTooManyPermits if the semaphore would exceed MaxPermits. Release works
// after Close.
func (s *Semaphore) Release(n int) {
	if n < 0 {
		panic(ErrNegativePermits)
	}
	if int64(n) > MaxPermits {
		panic(ErrTooManyPermits)
	}
	s.c.release(int64(n), MaxPermits)
}

// Available returns the number of free permits: 0 while anyone is queued
// (permits handed to a queued waiter are its own).
func (s *Semaphore) Available() int { return int(s.c.available(0)) }

// Close fails every queued and later Acquire with ErrClosed; TryAcquire
// fails from then on, Release keeps working. Idempotent.
func (s *Semaphore) Close() { s.c.close() }

// IsClosed reports whether Close was called.
func (s *Semaphore) IsClosed() bool { return s.c.state.Load()&closedBit != 0 }

// waiters returns the number of queued acquirers, for tests.
func (s *Semaphore) waiters() int { return s.c.waiterCount() }

// AcquireFuture is the future of Semaphore.Acquire. Its pointer implements
// future.Future[error] and future.Canceler. Keep it in the task's state and
// do not copy it after the first poll.
type AcquireFuture struct {
	_ noCopy
	// s is the semaphore, for a task dump. Read-only.
	s  *Semaphore
	op acquireOp
}

// Poll returns (nil, true) once the permits are acquired, (ErrClosed, true)
// or (ErrInvalidPermits, true), or (nil, false) while queued.
func (f *AcquireFuture) Poll(cx *future.Context) (error, bool) {
	err, ok := f.op.poll(cx)
	if !ok {
		cx.Waiting(waitAcquire, f.s.waitObject(f.op.n)) // for a task dump: which semaphore, how many permits
	}
	return err, ok
}

// waitAcquire is what a task waiting in Semaphore.Acquire (or
// AcquirePermit) waits on, with the semaphore's number and the permits
// asked for, for a task dump (future.Context.Waiting):
// "Semaphore.Acquire 5 (2 permits)".
var waitAcquire = future.NewCountedWaitKind("Semaphore.Acquire", "permit", "permits")

// Cancel leaves the queue; permits handed to the future go to the next
// waiters. Idempotent, allowed before the first poll and after completion.
func (f *AcquireFuture) Cancel() { f.op.cancel() }

var (
	_ future.Future[error] = (*AcquireFuture)(nil)
	_ future.Canceler      = (*AcquireFuture)(nil)
)
