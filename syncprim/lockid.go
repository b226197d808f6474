package syncprim

import (
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/blitz-go/blitz/future"
)

// Lock identity, for task dumps. A task dump shows what a task waits on;
// for a lock it also shows which lock ("Mutex.Lock 3") and which task holds
// it, so that a dump of two tasks locking two mutexes in opposite orders
// proves the deadlock, as Go's goroutine dump does with addresses. A lock
// takes its number at its first wait by a task (nothing before: most locks
// are never contended), and registers in locks, by number, a reader of its
// holder that holds the lock only weakly; the entry leaves with the lock
// (runtime.AddCleanup). Each acquisition records its holder's task id, or
// 0 for a goroutine, with an atomic store only when it differs from the
// last holder's: a task locking the same lock again and again pays a load.
//
// The primitives without a holder (Notify, Semaphore, Barrier, OnceCell)
// only take a number the same way, at their first wait by a task, from the
// same counter (waitNumber): so no two primitives of the package share a
// number. They keep it in a field and register nothing, so nothing refers to
// them but their users. A Semaphore's wait also shows the permits it asks
// for ("Semaphore.Acquire 5 (2 permits)", a future.WaitCounted object).

// lockIdentity is a lock's number and last holder.
type lockIdentity struct {
	// id is the lock's number, 0 until a task first waits for it: set once,
	// by the CAS of number.
	id atomic.Uint64
	// holder is the task id of the lock's last acquirer (0: a goroutine,
	// or none): stored by the acquirer (note) when it differs, loaded by
	// the lock's holder reader. It lags an acquisition by an instant.
	holder atomic.Uint64
}

var (
	// lockNumbers numbers the locks (lockIdentity.id).
	lockNumbers atomic.Uint64
	// locks maps a lock's number to its holder reader (func() uint64),
	// which refers to the lock weakly.
	locks sync.Map
)

// note records that the task id (0 for a goroutine) acquired the lock.
// Called by the acquirer, which holds the lock.
func (l *lockIdentity) note(id uint64) {
	if l.holder.Load() != id {
		l.holder.Store(id)
	}
}

// number returns the lock's number, taking one at the first call, when it
// registers the reader made by reader. Any goroutine may call it.
func (l *lockIdentity) number(register func(id uint64)) uint64 {
	if id := l.id.Load(); id != 0 {
		return id
	}
	id := lockNumbers.Add(1)
	if l.id.CompareAndSwap(0, id) {
		register(id)
		return id
	}
	return l.id.Load()
}

// registerLock registers lock p, numbered id, with holder the reader of its
// holder's task id; the entry leaves when p is collected.
func registerLock[T any](p *T, id uint64, holder func(*T) uint64) {
	wp := weak.Make(p)
	locks.Store(id, func() uint64 {
		if p := wp.Value(); p != nil {
			return holder(p)
		}
		return 0
	})
	runtime.AddCleanup(p, func(id uint64) { locks.Delete(id) }, id)
}

// lockHolderOf is the holder function of the lock wait kinds
// (future.WaitKind.SetHolder): the task holding lock number id, 0 if none.
func lockHolderOf(id uint64) uint64 {
	if r, ok := locks.Load(id); ok {
		return r.(func() uint64)()
	}
	return 0
}

// holderTask returns the task holding m, 0 if m is unlocked or held by a
// goroutine.
func (m *Mutex) holderTask() uint64 {
	if m.state.Load()&mLocked == 0 {
		return 0
	}
	return m.ident.holder.Load()
}

// waitNumber returns m's number for a wait, registering m at the first.
func (m *Mutex) waitNumber() uint64 {
	return m.ident.number(func(id uint64) { registerLock(m, id, (*Mutex).holderTask) })
}

// writerTask returns the task holding l for writing, 0 if none or a
// goroutine (a writer's release clears the record).
func (l *RwLock) writerTask() uint64 { return l.ident.holder.Load() }

// waitNumber returns l's number for a wait, registering l at the first.
func (l *RwLock) waitNumber() uint64 {
	return l.ident.number(func(id uint64) { registerLock(l, id, (*RwLock).writerTask) })
}

func init() {
	waitMutexLock.SetHolder(lockHolderOf)
	waitRLock.SetHolder(lockHolderOf)
	waitWLock.SetHolder(lockHolderOf)
}

// waitNumber returns the number in *n of a primitive without a holder (a
// Notify, a Semaphore, a Barrier, a OnceCell), taking the next lock number
// at the first call. Any goroutine may call it.
func waitNumber(n *atomic.Uint64) uint64 {
	if v := n.Load(); v != 0 {
		return v
	}
	v := lockNumbers.Add(1)
	if n.CompareAndSwap(0, v) {
		return v
	}
	return n.Load()
}

// waitObject is the object of a wait for n permits of s
// (future.WaitCounted): s's number, taken at its first wait, and n.
func (s *Semaphore) waitObject(n int64) uint64 {
	return future.WaitCountedOf(waitNumber(&s.num), uint64(n))
}
