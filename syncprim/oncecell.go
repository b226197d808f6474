package syncprim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

var (
	// ErrAlreadySet is returned by OnceCell.Set when the cell holds a value.
	ErrAlreadySet = errors.New("syncprim: once cell already set")

	// ErrInitializing is returned by OnceCell.Set while an initializer runs.
	ErrInitializing = errors.New("syncprim: once cell is being initialized")

	// ErrNilInit is the panic value of GetOrInit and GetOrInitBlocking given
	// a nil function, and of an InitFuture whose init returned a nil future.
	ErrNilInit = errors.New("syncprim: nil initializer")
)

// OnceCell's states.
const (
	cellUninit       uint32 = iota // empty, nobody initializing
	cellInitializing               // one owner holds the right to initialize
	cellInit                       // value set for good
)

// What a waking party handed a OnceCell waiter, in its Waiter's Value.
type onceGrant uint8

const (
	grantNone  onceGrant = iota // not woken
	grantValue                  // the cell is initialized: read the value
	grantRight                  // the right to initialize: call your init
)

// OnceCell holds a value set at most once, initialized lazily by the first
// caller that needs it. The zero OnceCell is empty and ready to use; it must
// not be copied after first use.
//
// # Protocol
//
// An atomic state goes UNINITIALIZED --CAS--> INITIALIZING --set-->
// INITIALIZED (and back from INITIALIZING to UNINITIALIZED when an
// initializer fails and nobody waits). The value is written by the one owner
// of INITIALIZING before the state is stored INITIALIZED, and read only
// after a load sees INITIALIZED, so Get is one atomic load.
//
// Exactly one caller at a time owns the right to initialize: the one whose
// CAS from UNINITIALIZED won, or a waiter the right was passed to. The owner
// calls its own init (only the owner's init is ever called) and polls or runs
// it; everybody else queues in the waiter list (tasks and goroutines in one
// FIFO), under a mutex that also guards every transition out of
// INITIALIZING, so that checking the state and queueing is one critical
// section. On success the owner publishes the value, stores INITIALIZED and
// wakes every waiter with the value (woken outside the lock through a
// waker.WakeList). If the initializer fails (an error, a panic, the owning
// InitFuture cancelled, which cancels its init future, or the owning
// goroutine's ctx ending), the right passes to the first waiter, which calls
// its init, or, if nobody waits, the cell goes back to UNINITIALIZED. A
// waiter that was handed the right and is cancelled before using it passes
// it on in the same way. A panic in init passes the right on and then
// re-panics, so the cell is never stuck in INITIALIZING.
type OnceCell[T any] struct {
	_ noCopy

	// state is the cell's state. CAS from UNINITIALIZED without mu (the
	// list is empty then); every transition out of INITIALIZING is made
	// under mu. The Store of INITIALIZED releases value to the Loads that
	// see it (Go atomics are sequentially consistent).
	state atomic.Uint32

	// value is written once by the owner of INITIALIZING before state
	// becomes INITIALIZED, and read only after that; never changed again.
	value T

	mu      sync.Mutex
	waiters waker.List[onceGrant] // callers waiting for the value or the right; guarded by mu

	// num is the cell's number in task dumps, taken at its first wait by
	// a task (lockid.go's waitNumber).
	num atomic.Uint64
}

// Get returns the value and true if the cell is initialized, or the zero
// value and false. It is one atomic load and allocates nothing.
func (c *OnceCell[T]) Get() (T, bool) {
	if c.state.Load() == cellInit {
		return c.value, true
	}
	var zero T
	return zero, false
}

// IsInitialized reports whether the cell holds its value.
func (c *OnceCell[T]) IsInitialized() bool { return c.state.Load() == cellInit }

// Set stores v if the cell is empty and nobody is initializing it, and
// wakes every waiter with it. It returns ErrAlreadySet if the cell holds a
// value and ErrInitializing while an initializer runs.
func (c *OnceCell[T]) Set(v T) error {
	if !c.state.CompareAndSwap(cellUninit, cellInitializing) {
		if c.state.Load() == cellInit {
			return ErrAlreadySet
		}
		return ErrInitializing
	}
	c.publish(v)
	return nil
}

// publish is the owner's success: store the value, mark the cell
// initialized and wake every waiter with it.
func (c *OnceCell[T]) publish(v T) {
	c.mu.Lock()
	c.value = v
	c.state.Store(cellInit)
	if c.waiters.IsEmpty() {
		c.mu.Unlock()
		return
	}
	c.wakeValueUnlock()
}

// wakeValueUnlock wakes every waiter with the value, outside c.mu, which
// it unlocks. It is apart from publish so that an uncontended publish does
// not zero a WakeList.
func (c *OnceCell[T]) wakeValueUnlock() {
	var wl waker.WakeList
	wakeEveryWaiter(&c.waiters, grantValue, &wl)
	c.mu.Unlock()
	wl.WakeAll()
}

// passOn is the owner's failure: hand the right to initialize to the first
// waiter, or, with nobody waiting, make the cell empty again.
func (c *OnceCell[T]) passOn() {
	c.mu.Lock()
	wk := c.passOnLocked()
	c.mu.Unlock()
	wk.Wake()
}

// passOnLocked is passOn under c.mu; it returns the Waker to wake after
// unlocking (zero if nobody waits).
func (c *OnceCell[T]) passOnLocked() waker.Waker {
	w := c.waiters.PopFront()
	if w == nil {
		c.state.Store(cellUninit)
		return waker.Waker{}
	}
	w.Value = grantRight
	return w.Waker()
}

// enterLocked is a caller's check under c.mu: it returns grantValue if the
// cell is initialized, grantRight if the caller won the right to
// initialize, or grantNone if someone else initializes and the caller must
// queue at once.
func (c *OnceCell[T]) enterLocked() onceGrant {
	for {
		switch c.state.Load() {
		case cellInit:
			return grantValue
		case cellInitializing:
			return grantNone
		}
		if c.state.CompareAndSwap(cellUninit, cellInitializing) {
			return grantRight
		}
	}
}

// leaveLocked removes w if it is queued. If w had been handed the right to
// initialize instead, it passes it on and returns the Waker to wake after
// unlocking. It returns what w had been handed (grantNone if removed).
func (c *OnceCell[T]) leaveLocked(w *waker.Waiter[onceGrant]) (onceGrant, waker.Waker) {
	if c.waiters.Remove(w) {
		return grantNone, waker.Waker{}
	}
	g := w.Value
	w.Value = grantNone
	if g == grantRight {
		return g, c.passOnLocked()
	}
	return g, waker.Waker{}
}

// GetOrInit returns a future that completes with the cell's value: at once
// if it is initialized; by calling init and polling the future it returns if
// this caller gets the right to initialize; or by waiting for whoever
// initializes it. If init's future fails, this future completes with that
// error and the right passes to the next waiter. Cancelling the future while
// it initializes cancels init's future and passes the right on. It panics
// with ErrNilInit if init is nil.
func (c *OnceCell[T]) GetOrInit(init func() future.Future[future.Result[T]]) *InitFuture[T] {
	if init == nil {
		panic(ErrNilInit)
	}
	return &InitFuture[T]{c: c, init: init}
}

// GetOrInitBlocking returns the cell's value, initializing it with init on
// the calling goroutine if this caller gets the right to, or waiting for
// whoever initializes it. If init fails, it returns init's error as is and
// the right passes on. If ctx ends while it waits, it returns an error
// wrapping ctx.Err() (an initialized cell wins over a done ctx). A panic in
// init passes the right on and is re-raised. It panics with ErrNilInit if
// init is nil. In steady state it allocates nothing beyond what init does.
func (c *OnceCell[T]) GetOrInitBlocking(ctx context.Context, init func(ctx context.Context) (T, error)) (T, error) {
	if init == nil {
		panic(ErrNilInit)
	}
	if c.state.Load() == cellInit {
		return c.value, nil
	}
	c.mu.Lock()
	g := c.enterLocked()
	if g == grantNone {
		var err error
		if g, err = c.waitBlocking(ctx); err != nil {
			var zero T
			return zero, err
		}
	} else {
		c.mu.Unlock()
	}
	if g == grantValue {
		return c.value, nil
	}
	return c.runInit(ctx, init)
}

// waitBlocking queues a waiter with c.mu held, unlocks and waits for a
// grant.
func (c *OnceCell[T]) waitBlocking(ctx context.Context) (onceGrant, error) {
	bw := getBlockWaiter[onceGrant](&onceBlockWaiters)
	w := &bw.w
	c.waiters.PushBack(w, waker.New(&bw.sig))
	c.mu.Unlock()
	defer putBlockWaiter(&onceBlockWaiters, bw)
	for {
		err := bw.sig.Wait(ctx)
		c.mu.Lock()
		if err != nil {
			g, wk := c.leaveLocked(w)
			c.mu.Unlock()
			wk.Wake()
			if g == grantValue {
				return g, nil
			}
			return grantNone, fmt.Errorf("syncprim: once cell init: %w", err)
		}
		if !w.Linked() {
			g := w.Value
			c.mu.Unlock()
			return g, nil
		}
		c.mu.Unlock()
	}
}

// runInit runs the owner's init on the calling goroutine and publishes or
// passes on.
func (c *OnceCell[T]) runInit(ctx context.Context, init func(ctx context.Context) (T, error)) (v T, err error) {
	ok := false
	defer func() {
		if !ok { // init panicked: never stay stuck in INITIALIZING
			c.passOn()
		}
	}()
	v, err = init(ctx)
	ok = true
	if err != nil {
		c.passOn()
		var zero T
		return zero, err
	}
	c.publish(v)
	return v, nil
}

// waiterCount reports the number of queued waiters, for tests.
func (c *OnceCell[T]) waiterCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waiters.Len()
}

// init future states; the owner's only.
const (
	initStart   uint8 = iota // not polled yet
	initWaiting              // queued, or unlinked by a granting party
	initOwner                // holds the right; running its init future
	initDone
	initCancelled
)

// InitFuture is OnceCell.GetOrInit's future. Its pointer implements
// future.Future[future.Result[T]] and future.Canceler. It must not be copied
// after its first poll (go vet reports copies).
type InitFuture[T any] struct {
	_ noCopy

	c     *OnceCell[T]                           // set at construction, read-only
	init  func() future.Future[future.Result[T]] // called once if it gets the right; owner only
	initF future.Future[future.Result[T]]        // init's future while it runs; owner only
	w     waker.Waiter[onceGrant]                // in c.waiters while waiting; guarded by c.mu
	st    uint8                                  // init future state; owner only
}

var _ future.Future[future.Result[int]] = (*InitFuture[int])(nil)
var _ future.Canceler = (*InitFuture[int])(nil)

// Poll completes with the value, or with the error of this caller's own
// failed init. Completing consumes a unit of the task's budget; with none
// left, Poll yields instead (see the future package, "The cooperative
// budget"). The owner calls it.
func (f *InitFuture[T]) Poll(cx *future.Context) (future.Result[T], bool) {
	if f.st != initDone && f.st != initCancelled && !cx.Proceed() {
		return future.Result[T]{}, false
	}
	r, ok := f.poll(cx)
	if ok {
		cx.Spend()
	} else if f.st == initWaiting { // the owner waits in its init, which records its own wait
		cx.Waiting(waitOnceInit, waitNumber(&f.c.num)) // for a task dump: which OnceCell
	}
	return r, ok
}

// waitOnceInit is what a task waiting in OnceCell.Init waits on, with the
// cell's number, for a task dump (future.Context.Waiting): "OnceCell.Init 7".
var waitOnceInit = future.NewWaitKind("OnceCell.Init", future.WaitNumber)

// poll is Poll past the budget check.
func (f *InitFuture[T]) poll(cx *future.Context) (future.Result[T], bool) {
	switch f.st {
	case initDone:
		panic(future.ErrPolledAfterCompletion)
	case initCancelled:
		panic(future.ErrPolledAfterCancel)
	case initStart:
		if f.c.state.Load() == cellInit {
			return f.done(), true
		}
		if g, ok := f.enter(cx); ok {
			return f.granted(cx, g)
		}
		return future.Result[T]{}, false
	case initWaiting:
		if g, ok := f.check(cx); ok {
			return f.granted(cx, g)
		}
		return future.Result[T]{}, false
	}
	return f.pollInit(cx)
}

// done completes with the cell's value.
func (f *InitFuture[T]) done() future.Result[T] {
	f.st, f.init = initDone, nil
	return future.Ok(f.c.value)
}

// enter is the first poll's slow path: win the right, see the value, or
// queue (returning false).
func (f *InitFuture[T]) enter(cx *future.Context) (onceGrant, bool) {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.enterLocked()
	if g == grantNone {
		c.waiters.PushBack(&f.w, cx.Waker())
		f.st = initWaiting
		return g, false
	}
	return g, true
}

// check is a queued future's poll: still queued (false), or what it was
// handed.
func (f *InitFuture[T]) check(cx *future.Context) (onceGrant, bool) {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.w.Linked() {
		if !f.w.Waker().WillWake(cx.Waker()) {
			f.w.SetWaker(cx.Waker())
		}
		return grantNone, false
	}
	g := f.w.Value
	f.w.Value = grantNone
	return g, true
}

// granted acts on what the future got: the value, or the right.
func (f *InitFuture[T]) granted(cx *future.Context, g onceGrant) (future.Result[T], bool) {
	if g == grantValue {
		return f.done(), true
	}
	f.st = initOwner
	return f.pollInit(cx)
}

// pollInit calls init once and polls its future; on success it publishes,
// on failure or panic it passes the right on.
func (f *InitFuture[T]) pollInit(cx *future.Context) (r future.Result[T], ready bool) {
	ok := false
	defer func() {
		if !ok { // init or its future panicked
			f.st, f.init, f.initF = initDone, nil, nil
			f.c.passOn()
		}
	}()
	if f.initF == nil {
		f.initF = f.init()
		f.init = nil
		if f.initF == nil {
			panic(ErrNilInit)
		}
	}
	r, ready = f.initF.Poll(cx)
	ok = true
	if !ready {
		return r, false
	}
	f.st, f.initF = initDone, nil
	if r.Err != nil {
		f.c.passOn()
		return future.Fail[T](r.Err), true
	}
	f.c.publish(r.Value)
	return r, true
}

// Cancel leaves the waiter list; if the future owns the right to initialize
// (it was handed it, or its init is running), it cancels init's future and
// passes the right on. It is idempotent. The owner calls it.
func (f *InitFuture[T]) Cancel() {
	switch f.st {
	case initWaiting:
		c := f.c
		c.mu.Lock()
		_, wk := c.leaveLocked(&f.w)
		c.mu.Unlock()
		wk.Wake()
	case initOwner:
		if f.initF != nil {
			future.Cancel(f.initF)
		}
		f.c.passOn()
	case initDone, initCancelled:
		return
	}
	f.st, f.init, f.initF = initCancelled, nil, nil
}
