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

// ErrNotLocked is the panic value of unlocking the zero MutexGuard,
// ReadGuard or WriteGuard, which holds nothing. A guard unlocked twice
// panics with ErrGuardReleased instead.
var ErrNotLocked = errors.New("syncprim: unlock of unlocked lock")

// The state word of a Mutex (see "Mutex" in the package doc):
//
//	state = generation << mGenShift | handoff | woken | waiters | locked
//
// The generation counts the unlocks (it wraps after 2^60 of them): a guard
// carries the generation of its acquisition, and Unlock's CAS expects it,
// so that a guard already unlocked, or a copy of it, cannot unlock a later
// holder's lock. Nothing but an unlock moves it, so it is stable while the
// lock is held.
const (
	// mLocked: the mutex is held. Set by an acquirer's CAS (or kept set by
	// a hand-off), cleared by an unlock's CAS.
	mLocked uint64 = 1 << 0
	// mWaiters: the waiter list is not empty. Set and cleared under mu.
	mWaiters uint64 = 1 << 1
	// mWoken: a waiter was taken off the list and woken to try for the lock,
	// and has neither tried nor given up yet. While it is set, unlocks wake
	// nobody else. Set under mu by the unlock that wakes; cleared by the
	// woken waiter (its acquiring CAS, or under mu when it queues again or
	// gives up).
	mWoken uint64 = 1 << 2
	// mHandoff: the waiter at the front of the list was woken and found the
	// lock taken; the next unlock hands the lock straight to it (the lock
	// stays locked, so nobody can barge in between). Set and cleared under
	// mu; never set together with mWoken.
	mHandoff uint64 = 1 << 3
	// mGenShift places the generation above the flags; mGenOne is one
	// unlock.
	mGenShift        = 4
	mGenOne   uint64 = 1 << mGenShift
)

// The states of a Mutex waiter (mutexWait.state): what the waking party
// left for it.
const (
	mwQueued  uint32 = iota // in the list (or not pushed yet)
	mwWoken                 // taken off the list to try again (mWoken is set for it)
	mwGranted               // taken off the list and handed the lock
)

// mutexWait is the Value of a Mutex waiter.
type mutexWait struct {
	// state is one of mwQueued.. Stored under mu, by the waiter before it
	// pushes itself (mwQueued) and by the waking party before it unlinks it
	// and, after unlocking mu, calls its Waker (mwWoken, mwGranted); loaded
	// by the waiter without the lock (its wake is the Store's partner), or
	// under mu.
	state atomic.Uint32
}

// Mutex is an async mutual-exclusion lock. Its waiters queue in one FIFO,
// tasks (Lock's future) and goroutines (LockBlocking) together; an unlock
// wakes the first of them, a running locker may take the lock before that
// waiter gets to run, and a waiter that loses that race is handed the lock
// at the next unlock, so that no waiter starves (see "Mutex" in the package
// doc). The zero Mutex is unlocked and ready to use. A Mutex must not be
// copied after first use.
type Mutex struct {
	_ noCopy
	// state is the word described above. Lock-free CAS by acquirers and
	// unlockers; while mWaiters or mHandoff is set, an unlock takes mu and
	// CASes under it. Every CAS is both acquire and release: an acquirer's
	// CAS pairs with the unlock that freed the lock; a hand-off's CAS comes
	// before the waiter's mwGranted Store, which the waiter loads.
	state atomic.Uint64
	// mu guards list, every Waiter linked in it, the setting of mWaiters,
	// mWoken and mHandoff, and the waiters' state Stores.
	mu sync.Mutex
	// list is the FIFO of waiters. mu.
	list waker.List[mutexWait]
	// ident is the mutex's number and holder, for task dumps (lockid.go).
	ident lockIdentity
}

// MutexGuard is proof of holding a Mutex; Unlock releases it. A guard is
// a small value that may be copied, but releases its lock once: a second
// Unlock, through the guard or any copy of it, panics with
// ErrGuardReleased and leaves the mutex alone. The zero MutexGuard holds
// nothing.
type MutexGuard struct {
	// m is the locked mutex, nil for the zero guard. Read-only.
	m *Mutex
	// seq is the generation of the acquisition (see the state word).
	// Read-only.
	seq uint64
}

// tryLock takes the lock if it is free, whoever is queued (a barging
// acquire), and returns the generation of the acquisition.
// Any goroutine may call it.
func (m *Mutex) tryLock() (uint64, bool) {
	for {
		s := m.state.Load()
		if s&mLocked != 0 {
			return 0, false
		}
		if m.state.CompareAndSwap(s, s|mLocked) { // pairs with the unlock that freed it
			return s >> mGenShift, true
		}
	}
}

// TryLock locks m if it is unlocked, without waiting: a Load and a CAS, no
// allocation. It may take the lock while waiters are queued, in the window
// between an unlock and the first waiter's retry (see "Mutex" in the
// package doc); it fails while the lock is held or being handed to a
// waiter.
func (m *Mutex) TryLock() (MutexGuard, bool) {
	if gen, ok := m.tryLock(); ok {
		m.ident.note(0)
		return MutexGuard{m: m, seq: gen}, true
	}
	return MutexGuard{}, false
}

// Lock returns a future that completes with a guard once m is locked.
// Cancelling it leaves the queue at once, and if the lock had already been
// handed to it, passes the lock on.
func (m *Mutex) Lock() *LockFuture {
	return &LockFuture{m: m}
}

// mutexWaiters recycles the Waiter of the blocking tier, which escapes to
// the heap because the list points to it. Put back only unlinked.
var mutexWaiters = sync.Pool{New: func() any { return new(waker.Waiter[mutexWait]) }}

// LockBlocking locks m, blocking the calling goroutine until it holds the
// lock or ctx is done (an error wrapping ctx.Err(); the call leaves no trace).
// A free lock, or one handed to the goroutine before it gave up, wins over a
// done ctx.
func (m *Mutex) LockBlocking(ctx context.Context) (MutexGuard, error) {
	if gen, ok := m.tryLock(); ok {
		m.ident.note(0)
		return MutexGuard{m: m, seq: gen}, nil
	}
	w := mutexWaiters.Get().(*waker.Waiter[mutexWait])
	sig := getSignal()
	gen, err := m.lockBlockingSlow(ctx, w, sig)
	putSignal(sig)
	mutexWaiters.Put(w)
	if err != nil {
		return MutexGuard{}, err
	}
	m.ident.note(0)
	return MutexGuard{m: m, seq: gen}, nil
}

// lockBlockingSlow queues w and waits on sig until w is handed the lock or
// wins it after a wake, or ctx is done. On return w is unlinked.
func (m *Mutex) lockBlockingSlow(ctx context.Context, w *waker.Waiter[mutexWait], sig *waker.Signal) (uint64, error) {
	wk := waker.New(sig)
	m.mu.Lock()
	gen, ok := m.queueLocked(w, wk, false)
	m.mu.Unlock()
	if ok {
		return gen, nil
	}
	return m.waitBlocking(ctx, w, sig, wk)
}

// waitBlocking is LockBlocking's wait, once w is queued with wk, which
// wakes sig: until w is handed the lock or wins it after a wake, or ctx is
// done. On return w is unlinked.
func (m *Mutex) waitBlocking(ctx context.Context, w *waker.Waiter[mutexWait], sig *waker.Signal, wk waker.Waker) (uint64, error) {
	var werr error
	var gen uint64
	ok := false
	wait := true
	for !ok {
		if wait {
			werr = sig.Wait(ctx)
		}
		wait = true
		switch w.Value.state.Load() { // after the wake; pairs with the waking party's Store
		case mwGranted:
			return m.state.Load() >> mGenShift, nil // stable: we hold the lock
		case mwWoken:
			if gen, ok = m.retryWoken(); ok {
				return gen, nil
			}
			m.mu.Lock()
			if werr != nil {
				if gen, ok = m.retryWoken(); ok { // a free lock wins over a done ctx
					m.mu.Unlock()
					return gen, nil
				}
				wake := m.leaveLocked(w)
				m.mu.Unlock()
				wake.Wake()
				return 0, fmt.Errorf("syncprim: lock: %w", werr)
			}
			gen, ok = m.queueLocked(w, wk, true)
			m.mu.Unlock()
			continue
		}
		// Queued, as far as the lock-free load saw: a spurious wakeup (a late
		// wake of a recycled Signal), a done ctx, or a wake racing with us.
		m.mu.Lock()
		if w.Value.state.Load() != mwQueued {
			// Woken meanwhile, its wake perhaps merged into the one
			// just consumed: back to the switch without waiting.
			m.mu.Unlock()
			wait = false
			continue
		}
		if werr != nil {
			wake := m.leaveLocked(w)
			m.mu.Unlock()
			wake.Wake()
			return 0, fmt.Errorf("syncprim: lock: %w", werr)
		}
		m.mu.Unlock()
	}
	return gen, nil
}

// queueLocked is the slow path of an acquire, run under mu so that no
// unlock can miss the waiter: it takes the lock if it is free; otherwise it
// sets mWaiters and queues w with wk, at the back, or, for a woken waiter
// that found the lock taken (woken), at the front with mHandoff set, in the
// same CAS that clears mWoken. It reports the generation and true when it
// took the lock.
// m.mu must be held.
func (m *Mutex) queueLocked(w *waker.Waiter[mutexWait], wk waker.Waker, woken bool) (uint64, bool) {
	for {
		s := m.state.Load()
		if s&mLocked == 0 {
			next := s | mLocked
			if woken {
				next &^= mWoken
			}
			if m.state.CompareAndSwap(s, next) { // pairs with the unlock that freed it
				return s >> mGenShift, true
			}
			continue
		}
		next := s | mWaiters
		if woken {
			next = next&^mWoken | mHandoff
		}
		// The lock is held: its unlock, whose CAS must come after this one,
		// sees mWaiters (or mHandoff) and takes mu, so it finds w queued.
		if m.state.CompareAndSwap(s, next) {
			w.Value.state.Store(mwQueued)
			if woken {
				m.list.PushFront(w, wk)
			} else {
				m.list.PushBack(w, wk)
			}
			return 0, false
		}
	}
}

// retryWoken is a woken waiter's lock-free try: it takes the lock if it is
// free, clearing mWoken in the same CAS. On false the caller takes mu and
// queues again (queueLocked with woken) or gives up (leaveLocked).
// The woken waiter calls it.
func (m *Mutex) retryWoken() (uint64, bool) {
	for {
		s := m.state.Load()
		if s&mLocked != 0 {
			return 0, false
		}
		if m.state.CompareAndSwap(s, s&^mWoken|mLocked) { // pairs with the unlock that freed it
			return s >> mGenShift, true
		}
	}
}

// Unlock unlocks the mutex: with waiters queued, it wakes the first of them,
// or hands it the lock if it already lost a race for it. It panics with
// ErrNotLocked for the zero guard, and with ErrGuardReleased if this
// acquisition was already unlocked (through g or a copy of g): the mutex,
// perhaps locked again by somebody else since, is left alone.
func (g MutexGuard) Unlock() {
	m := g.m
	if m == nil {
		unlockMisuse(nil)
	}
	for {
		s := m.state.Load()
		if s>>mGenShift != g.seq || s&mLocked == 0 {
			unlockMisuse(m) // a later generation: this acquisition was unlocked
		}
		if s&mHandoff != 0 || s&(mWaiters|mWoken) == mWaiters {
			m.unlockSlow(g.seq)
			return
		}
		// Nobody queued, or a woken waiter is on its way: just free it.
		if m.state.CompareAndSwap(s, (s+mGenOne)&^mLocked) { // pairs with the next acquirer's CAS
			return
		}
	}
}

// unlockSlow is Unlock with a waiter to wake or to hand the lock to.
func (m *Mutex) unlockSlow(gen uint64) {
	m.mu.Lock()
	wake, ok := m.unlockLocked(gen)
	m.mu.Unlock()
	if !ok {
		unlockMisuse(m)
	}
	wake.Wake()
}

// unlockLocked unlocks the acquisition of generation gen and returns the
// Waker to call once mu is released: the front waiter's when it is handed
// the lock (mHandoff) or woken to try for it (nobody woken yet), else the
// zero Waker. It reports false, changing nothing, if gen is not the current
// holder's.
// m.mu must be held.
func (m *Mutex) unlockLocked(gen uint64) (waker.Waker, bool) {
	for {
		s := m.state.Load()
		if s>>mGenShift != gen || s&mLocked == 0 {
			return waker.Waker{}, false
		}
		next := s + mGenOne
		var w *waker.Waiter[mutexWait]
		var ws uint32
		switch {
		case s&mHandoff != 0: // the front waiter lost a race: it gets the lock
			w, ws = m.list.Front(), mwGranted
			next &^= mHandoff
		case s&(mWaiters|mWoken) == mWaiters: // wake the front waiter to try
			w, ws = m.list.Front(), mwWoken
			next = next&^mLocked | mWoken
		default: // a woken waiter is on its way, or the list emptied meanwhile
			next &^= mLocked
		}
		if w != nil && m.list.Len() == 1 {
			next &^= mWaiters
		}
		if !m.state.CompareAndSwap(s, next) { // only the lock-free flags can have moved: retry
			continue
		}
		if w == nil {
			return waker.Waker{}, true
		}
		m.list.PopFront()
		w.Value.state.Store(ws) // after the CAS: a granted waiter loads its generation
		return w.Waker(), true
	}
}

// leaveLocked takes w, whose owner gives up (Cancel, a done ctx), out of the
// mutex, and returns the Waker to call once mu is released. Queued, it
// leaves the list (clearing mHandoff if the lock was to be handed to it).
// Woken, it passes the wake on: to the new front waiter if the lock is
// free, else to the holder's unlock. Granted, it unlocks.
// m.mu must be held.
func (m *Mutex) leaveLocked(w *waker.Waiter[mutexWait]) waker.Waker {
	switch w.Value.state.Load() {
	case mwGranted:
		wake, _ := m.unlockLocked(m.state.Load() >> mGenShift) // ours: nobody else can unlock it
		return wake
	case mwWoken:
		for {
			s := m.state.Load()
			if s&mLocked != 0 || s&mWaiters == 0 {
				if m.state.CompareAndSwap(s, s&^mWoken) {
					return waker.Waker{}
				}
				continue
			}
			next := s // free with waiters: mWoken stays set, for the front waiter
			if m.list.Len() == 1 {
				next &^= mWaiters
			}
			if m.state.CompareAndSwap(s, next) {
				n := m.list.PopFront()
				n.Value.state.Store(mwWoken)
				return n.Waker()
			}
		}
	}
	if !w.Linked() {
		return waker.Waker{}
	}
	front := m.list.Front() == w
	m.list.Remove(w)
	for {
		s := m.state.Load()
		next := s
		if front {
			next &^= mHandoff // mHandoff was about w, the front waiter
		}
		if m.list.IsEmpty() {
			next &^= mWaiters
		}
		if next == s || m.state.CompareAndSwap(s, next) {
			return waker.Waker{}
		}
	}
}

// unlockMisuse panics for the Unlock of a guard that holds nothing: the
// zero guard (m nil), or one already unlocked. Kept out of line: it is
// cold.
//
//go:noinline
func unlockMisuse(m *Mutex) {
	if m == nil {
		panic(ErrNotLocked)
	}
	panic(ErrGuardReleased)
}

// waiters returns the number of queued lockers, for tests.
func (m *Mutex) waiters() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.list.Len()
}

// LockFuture is the future of Mutex.Lock. Its pointer implements
// future.Future[MutexGuard] and future.Canceler. Keep it in the task's
// state and do not copy it after the first poll.
type LockFuture struct {
	_ noCopy
	// m is the mutex. Read-only.
	m *Mutex
	// w is the waiter, inside the future so that waiting allocates nothing;
	// its fields are guarded by m.mu once pushed.
	w waker.Waiter[mutexWait]
	// phase is one of opNew.., the owner's only.
	phase uint8
}

// Poll returns the guard and true once the mutex is locked. Taking the lock
// consumes a unit of the task's budget; with none left, Poll yields instead
// of locking, so that tasks contending the mutex on one worker take turns
// (see the future package, "The cooperative budget").
func (f *LockFuture) Poll(cx *future.Context) (MutexGuard, bool) {
	if f.phase == opNew {
		if !cx.Proceed() {
			return MutexGuard{}, false
		}
		if gen, ok := f.m.tryLock(); ok {
			f.phase = opDone
			cx.Spend()
			f.m.ident.note(cx.TaskID())
			return MutexGuard{m: f.m, seq: gen}, true
		}
	}
	g, ok := f.pollSlow(cx)
	if !ok {
		cx.Waiting(waitMutexLock, f.m.waitNumber()) // for a task dump
		return g, false
	}
	f.m.ident.note(cx.TaskID())
	return g, true
}

// waitMutexLock is what a task waiting in Mutex.Lock waits on, for a task
// dump (future.Context.Waiting).
var waitMutexLock = future.NewWaitKind("Mutex.Lock", future.WaitLock)

// pollSlow is Poll past the first poll's try.
func (f *LockFuture) pollSlow(cx *future.Context) (MutexGuard, bool) {
	switch f.phase {
	case opDone:
		panic(future.ErrPolledAfterCompletion)
	case opCancelled:
		panic(future.ErrPolledAfterCancel)
	}
	if !cx.Proceed() {
		return MutexGuard{}, false
	}
	m := f.m
	var gen uint64
	var ok bool
	if f.phase == opNew {
		m.mu.Lock()
		gen, ok = m.queueLocked(&f.w, cx.Waker(), false)
		m.mu.Unlock()
		if !ok {
			f.phase = opQueued
		}
	} else {
		gen, ok = f.pollQueued(cx)
	}
	if !ok {
		return MutexGuard{}, false
	}
	f.phase = opDone
	cx.Spend()
	return MutexGuard{m: m, seq: gen}, true
}

// pollQueued is a poll after the waiter was pushed: handed the lock, woken
// to try for it, or still queued.
func (f *LockFuture) pollQueued(cx *future.Context) (uint64, bool) {
	m := f.m
	for {
		switch f.w.Value.state.Load() { // pairs with the waking party's Store
		case mwGranted:
			return m.state.Load() >> mGenShift, true // stable: we hold the lock
		case mwWoken:
			if gen, ok := m.retryWoken(); ok {
				return gen, true
			}
			m.mu.Lock()
			gen, ok := m.queueLocked(&f.w, cx.Waker(), true)
			m.mu.Unlock()
			return gen, ok
		}
		m.mu.Lock()
		if f.w.Value.state.Load() == mwQueued {
			if wk := cx.Waker(); !f.w.Waker().WillWake(wk) {
				f.w.SetWaker(wk)
			}
			m.mu.Unlock()
			return 0, false
		}
		m.mu.Unlock() // woken meanwhile: look again
	}
}

// Cancel leaves the queue; a lock handed to the future passes on, as does
// a wake to try for it. Idempotent, allowed before the first poll and after
// completion.
func (f *LockFuture) Cancel() {
	switch f.phase {
	case opNew:
		f.phase = opCancelled
		return
	case opQueued:
	default:
		return
	}
	f.phase = opCancelled
	m := f.m
	m.mu.Lock()
	wake := m.leaveLocked(&f.w)
	m.mu.Unlock()
	wake.Wake()
}

var (
	_ future.Future[MutexGuard] = (*LockFuture)(nil)
	_ future.Canceler           = (*LockFuture)(nil)
)
