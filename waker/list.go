package waker

// noCopy makes go vet's copylocks check report copies of the structs that
// hold it. See https://golang.org/issues/8005#issuecomment-190753527.
type noCopy struct{}

// Lock is a no-op used by go vet's copylocks check.
func (*noCopy) Lock() {}

// Unlock is a no-op used by go vet's copylocks check.
func (*noCopy) Unlock() {}

// Waiter is one entry of a List. It is intrusive: the links live in the
// Waiter itself, so a primitive's future (or a goroutine's stack frame, when
// it does not escape) embeds a Waiter and waiting allocates nothing. Value is
// the caller's: a Semaphore stores the permits wanted, an RwLock whether the
// waiter reads or writes, a channel the slot of the value handed over.
//
// The zero Waiter is unlinked and ready to use. A Waiter must not be copied
// while linked. Every field but Value is guarded by the lock of the
// primitive that owns the List (see "The waiter list").
type Waiter[T any] struct {
	// Value is written and read by the caller, under the primitive's lock
	// whenever another party may look at it (a waker handing over a value).
	Value T

	// next and prev link the waiter into list. Written by List methods,
	// read by List methods and Next; the primitive's lock.
	next, prev *Waiter[T]
	// list is the List the waiter is linked into, nil when unlinked. Set by
	// a push, cleared by every removal; read by Linked and by List methods
	// to catch misuse. The primitive's lock.
	list *List[T]
	// waker is whom to wake when the waiter is taken off the list. Written
	// by a push and by SetWaker (the waiting party, re-polled with another
	// Waker); read by WakeOne, WakeAll and PopInto (the waking party) and by
	// Waker. The primitive's lock.
	waker Waker
}

// Linked reports whether w is in a list. A waiter leaves its list only by
// Remove (its owner giving up) or by PopFront, WakeOne, WakeAll or PopInto
// (a waking party taking it), so once the owner has pushed it, !Linked()
// means "woken" (see "Unlinked means woken").
// The primitive's lock must be held.
func (w *Waiter[T]) Linked() bool { return w.list != nil }

// Waker returns the Waker that w was pushed or last set with. It keeps that
// value after w is unlinked.
// The primitive's lock must be held.
func (w *Waiter[T]) Waker() Waker { return w.waker }

// SetWaker replaces the Waker that will wake w, for a future polled again
// by a task whose Waker does not WillWake the registered one. It may be
// called whether or not w is linked.
// The primitive's lock must be held.
func (w *Waiter[T]) SetWaker(wk Waker) { w.waker = wk }

// Next returns the waiter after w in its list, or nil if w is the last one
// or unlinked. Iterating with Next while removing: read Next before removing
// the current waiter.
// The primitive's lock must be held.
func (w *Waiter[T]) Next() *Waiter[T] { return w.next }

// List is a FIFO list of waiters: a doubly linked, intrusive list in which
// every operation is O(1) except WakeAll and PopInto, which are O(number
// taken). It is not synchronized: the primitive that owns it guards it, and
// every Waiter linked into it, with its own lock, and keeps the rest of its
// state under the same lock so that "check state, then enqueue" is atomic.
//
// The zero List is empty and ready to use. A List must not be copied after
// first use (go vet reports copies).
type List[T any] struct {
	_ noCopy

	// head and tail are the first and last waiters, nil when empty. The
	// primitive's lock.
	head, tail *Waiter[T]
	// n is the number of linked waiters. The primitive's lock.
	n int
}

// Len returns the number of waiters in l.
// The primitive's lock must be held.
func (l *List[T]) Len() int { return l.n }

// IsEmpty reports whether l has no waiters.
// The primitive's lock must be held.
func (l *List[T]) IsEmpty() bool { return l.n == 0 }

// Front returns the first (oldest, for PushBack) waiter, or nil if l is
// empty. It leaves the waiter linked: a Semaphore looks at the permits the
// front waiter wants before deciding to take it.
// The primitive's lock must be held.
func (l *List[T]) Front() *Waiter[T] { return l.head }

// Back returns the last waiter, or nil if l is empty.
// The primitive's lock must be held.
func (l *List[T]) Back() *Waiter[T] { return l.tail }

// checkPush panics if w cannot be pushed.
func (l *List[T]) checkPush(w *Waiter[T]) {
	if w == nil {
		panic(ErrNilWaiter)
	}
	if w.list != nil {
		panic(ErrWaiterLinked)
	}
}

// PushBack links w at the back of l (the fair, FIFO end) with wk as the
// Waker to call when w is woken. wk may be the zero Waker if the owner
// learns of its wake by other means (see "The zero Waker"). It panics with
// ErrNilWaiter or ErrWaiterLinked.
// The primitive's lock must be held.
func (l *List[T]) PushBack(w *Waiter[T], wk Waker) {
	l.checkPush(w)
	w.waker = wk
	w.list = l
	w.next = nil
	w.prev = l.tail
	if l.tail != nil {
		l.tail.next = w
	} else {
		l.head = w
	}
	l.tail = w
	l.n++
}

// Register keeps w in l with wk as its Waker: linked at the back if it is
// not in l yet, else left in its place with wk instead of its Waker (unless
// the Waker it has wakes the same task). It is the step of a future that
// waits across polls and keeps its place in line. w must not be linked in
// another list (PushBack's panics). The primitive's lock must be held.
func (l *List[T]) Register(w *Waiter[T], wk Waker) {
	if w.list != l {
		l.PushBack(w, wk)
		return
	}
	if !w.waker.WillWake(wk) {
		w.waker = wk
	}
}

// PushFront links w at the front of l, to be woken before every waiter
// already there: for a waiter that was handed something and must be put
// back first, or a LIFO policy. Otherwise as PushBack.
// The primitive's lock must be held.
func (l *List[T]) PushFront(w *Waiter[T], wk Waker) {
	l.checkPush(w)
	w.waker = wk
	w.list = l
	w.prev = nil
	w.next = l.head
	if l.head != nil {
		l.head.prev = w
	} else {
		l.tail = w
	}
	l.head = w
	l.n++
}

// unlink takes w, which is linked in l, out of l. Its waker stays.
func (l *List[T]) unlink(w *Waiter[T]) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		l.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		l.tail = w.prev
	}
	w.next, w.prev, w.list = nil, nil, nil
	l.n--
}

// Remove unlinks w from l without waking it and reports whether w was
// linked. A future or a goroutine that gives up (cancelled, timed out) calls
// it: true means it left before anyone woke it; false means a waking party
// took it first, so whatever was handed to it (a permit, a value, the lock)
// is now its own to use or to pass on (see "Cancellation"). It panics with
// ErrNilWaiter for a nil w and with ErrForeignWaiter if w is linked in
// another list.
// The primitive's lock must be held.
func (l *List[T]) Remove(w *Waiter[T]) bool {
	if w == nil {
		panic(ErrNilWaiter)
	}
	switch w.list {
	case nil:
		return false
	case l:
		l.unlink(w)
		return true
	default:
		panic(ErrForeignWaiter)
	}
}

// PopFront unlinks and returns the first waiter without waking it, or nil if
// l is empty. The caller hands the waiter what it was waiting for (through
// Value) and then wakes it with its Waker, now or after unlocking.
// The primitive's lock must be held.
func (l *List[T]) PopFront() *Waiter[T] {
	w := l.head
	if w != nil {
		l.unlink(w)
	}
	return w
}

// WakeOne unlinks the first waiter and calls its Waker, and reports whether
// there was one. The Waker runs under the primitive's lock: fine, since Wake
// never blocks, but see "Waking outside the lock" for the shorter critical
// section.
// The primitive's lock must be held.
func (l *List[T]) WakeOne() bool {
	w := l.PopFront()
	if w == nil {
		return false
	}
	w.waker.Wake() // unlinked first: the woken party sees !Linked once it holds the lock
	return true
}

// WakeAll unlinks and wakes, in FIFO order, the waiters that are in l when
// it is called, and returns how many. Waiters pushed during the call (by a
// Waker that runs on this goroutine) stay. The Wakers run under the
// primitive's lock; see "Waking outside the lock".
// The primitive's lock must be held.
func (l *List[T]) WakeAll() int {
	n := l.n
	for range n {
		w := l.head
		l.unlink(w)
		w.waker.Wake()
	}
	return n
}

// PopInto unlinks waiters from the front of l, as many as wl has room for,
// appends their Wakers to wl in FIFO order and returns how many it took. The
// caller calls wl.WakeAll after releasing the lock (see "Waking outside the
// lock").
// The primitive's lock must be held.
func (l *List[T]) PopInto(wl *WakeList) int {
	taken := 0
	for l.head != nil && wl.CanPush() {
		w := l.head
		l.unlink(w)
		wl.Push(w.waker)
		taken++
	}
	return taken
}
