package globalq

import (
	"sync"
	"sync/atomic"
)

// The mutex queue: an intrusive singly linked FIFO under one sync.Mutex, with
// an atomic length for lock-free emptiness checks. The sharded variant in
// sharded.go is an array of these.

// Node is the constraint on an element's pointer type: P is *E, and E provides
// its own link field, whose address QueueNext returns. A typical element:
//
//	type Task struct {
//		next *Task // owned by the globalq queue holding the task
//		// ...
//	}
//
//	func (t *Task) QueueNext() **Task { return &t.next }
//
// The link must be nil while the element is in no queue: a new element's is,
// and every pop clears it. The queue holding an element owns its link; nobody
// else may read or write it until the element is popped. QueueNext must
// return the address of the same field on every call and do nothing else.
type Node[E any] interface {
	*E
	QueueNext() **E
}

// Queue is the global injection queue: a FIFO of elements linked through their
// own link field, so that a push allocates nothing. All methods are safe for
// concurrent use by any number of goroutines. Len and IsEmpty take no lock.
//
// The zero Queue is an empty, open queue ready to use. A Queue must not be
// copied after first use.
type Queue[E any, P Node[E]] struct {
	_ pad
	// mu guards head, tail, closed and every link of a queued element. Taken
	// by every method but Len, IsEmpty and Closed.
	mu sync.Mutex
	// head is the oldest element, nil when empty. Written and read under mu.
	head *E
	// tail is the newest element, nil when empty; its link is nil. Written
	// and read under mu.
	tail *E
	// closed is set by Close, never cleared. Written under mu; read under mu
	// by the pushes and lock-free, through closedFlag, by Closed.
	closed bool
	// closedFlag mirrors closed for Closed. Stored under mu by Close.
	closedFlag atomic.Bool
	// length is the number of linked elements. Written only under mu, after
	// the links are in place (push) or out (pop), so it is exact whenever mu
	// is held and never negative. Read lock-free by Len, IsEmpty and the
	// empty fast path of the pops (see the package doc, "Length").
	length atomic.Int64
	_      pad
}

// New returns an empty, open queue of the default variant, the mutex queue
// (see the package doc, "Measurements", for why it is the default). It is the
// same as new(Queue[E, P]). Any goroutine may call it.
func New[E any, P Node[E]]() *Queue[E, P] {
	return new(Queue[E, P])
}

// next returns the address of e's link field. Any goroutine may call it, but
// only the owner of the link (the queue holding e, under its lock, or the
// caller that holds e outside any queue) may use the result.
func next[E any, P Node[E]](e *E) **E {
	return P(e).QueueNext()
}

// Push appends e at the tail and reports true, or reports false if the queue
// is closed: then e is not linked and stays the caller's. e must not be nil
// and its link must be nil; Push panics otherwise, and if e is this queue's
// tail (see the package doc, "Misuse"). Any goroutine may call it.
func (q *Queue[E, P]) Push(e P) bool {
	if e == nil {
		panic(msgNilPush)
	}
	if *e.QueueNext() != nil {
		panic(msgLinkedPush)
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	if q.tail == (*E)(e) {
		q.mu.Unlock()
		panic(msgTailPush)
	}
	q.appendLocked((*E)(e), (*E)(e), 1)
	q.mu.Unlock()
	return true
}

// PushSlice appends the elements of es, in order, with one lock acquisition,
// and reports true; or, if the queue is closed, links none of them and
// reports false, leaving them the caller's. An empty es reports whether the
// queue is open. Every element must be non-nil with a nil link, and none may
// appear twice; PushSlice panics otherwise, having linked nothing. The queue
// does not retain es. Any goroutine may call it.
func (q *Queue[E, P]) PushSlice(es []P) bool {
	if len(es) == 0 {
		return !q.Closed()
	}
	return pushChain(q, es, true)
}

// PushOverflow appends the elements of batch, in order, with one lock
// acquisition. It gives a Queue the method of wsqueue.Overflow[E], so a
// worker's local queue hands its overflow here directly. Unlike Push and
// PushSlice it accepts the batch even after Close: the elements are work the
// runtime already accepted, moving between its queues, and the caller has no
// way to take them back, so rejecting them would lose them (see the package
// doc, "Close"). Element rules and panics are as for PushSlice. The queue does
// not retain batch. Any goroutine may call it.
func (q *Queue[E, P]) PushOverflow(batch []*E) {
	if len(batch) == 0 {
		return
	}
	pushChain(q, batch, false)
}

// pushChain links es into a chain, then appends it under one lock
// acquisition, unless rejectClosed is set and the queue is closed: then it
// unlinks the chain and reports false. It panics, having linked nothing, if
// an element is the queue's tail (see linkChain for the other checks).
// Any goroutine may call it; it takes q.mu.
func pushChain[E any, P Node[E], T ptr[E]](q *Queue[E, P], es []T, rejectClosed bool) bool {
	first, last := linkChain[E, P](es)
	q.mu.Lock()
	if rejectClosed && q.closed {
		q.mu.Unlock()
		unlinkChain[E, P](es)
		return false
	}
	if holdsTail[E](q.tail, es) {
		q.mu.Unlock()
		unlinkChain[E, P](es)
		panic(msgTailPush)
	}
	q.appendLocked(first, last, len(es))
	q.mu.Unlock()
	return true
}

// appendLocked links the chain first..last of n elements, whose last link is
// nil, after the tail. q.mu must be held.
func (q *Queue[E, P]) appendLocked(first, last *E, n int) {
	if q.tail == nil {
		q.head = first
	} else {
		*next[E, P](q.tail) = first
	}
	q.tail = last
	q.length.Add(int64(n)) // under mu, after linking; pairs with the lock-free loads in Len and the pops' fast path
}

// Pop removes and returns the oldest element, with its link cleared, or nil
// if the queue is empty. It takes no lock when Len is 0. Pop keeps working
// after Close, so that the remaining elements can be taken. Any goroutine may
// call it.
func (q *Queue[E, P]) Pop() P {
	if q.length.Load() == 0 { // lock-free emptiness check; pairs with the Adds under mu
		return nil
	}
	q.mu.Lock()
	e := q.head
	if e == nil {
		q.mu.Unlock()
		return nil
	}
	link := next[E, P](e)
	q.head = *link
	if q.head == nil {
		q.tail = nil
	}
	*link = nil
	q.length.Add(-1) // under mu, after unlinking; pairs with the lock-free loads
	q.mu.Unlock()
	return P(e)
}

// PopBatch removes up to len(dst) of the oldest elements into dst, in FIFO
// order, with one lock acquisition, and returns how many it took. It takes a
// fair share for one of workers workers:
//
//	n = min(len(dst), MaxBatch, max(MinBatch, Len/workers), Len)
//
// with Len read under the lock; workers below 1 counts as 1 (see the package
// doc, "Batch pop"). The taken elements have their links cleared; dst[n:] is
// untouched. Any goroutine may call it.
func (q *Queue[E, P]) PopBatch(dst []P, workers int) int {
	if len(dst) == 0 || q.length.Load() == 0 { // lock-free emptiness check; pairs with the Adds under mu
		return 0
	}
	q.mu.Lock()
	n := batchSize(int(q.length.Load()), workers, len(dst)) // exact under mu
	q.popLocked(dst[:n])
	q.mu.Unlock()
	return n
}

// popLocked moves the len(dst) oldest elements into dst, clearing their
// links. The queue must hold at least len(dst) elements. q.mu must be held.
func (q *Queue[E, P]) popLocked(dst []P) {
	if len(dst) == 0 {
		return
	}
	e := q.head
	for i := range dst {
		link := next[E, P](e)
		dst[i] = P(e)
		e = *link
		*link = nil
	}
	q.head = e
	if e == nil {
		q.tail = nil
	}
	q.length.Add(-int64(len(dst))) // under mu, after unlinking; pairs with the lock-free loads
}

// Drain removes every element, in FIFO order, and calls f with each, links
// cleared, outside the lock; it returns how many it removed. Elements pushed
// while f runs are not included. It is meant for shutdown, after Close, when
// it empties the queue for good; before Close it is a PopAll. f may push to q.
// Any goroutine may call it.
func (q *Queue[E, P]) Drain(f func(P)) int {
	q.mu.Lock()
	e := q.head
	n := int(q.length.Load()) // exact under mu
	q.head, q.tail = nil, nil
	q.length.Add(-int64(n)) // under mu; the chain is now ours alone
	q.mu.Unlock()
	for e != nil {
		link := next[E, P](e)
		nx := *link
		*link = nil
		f(P(e))
		e = nx
	}
	return n
}

// Close makes every later Push and PushSlice report false. Elements already
// queued stay, for Pop, PopBatch and Drain; PushOverflow still appends (see
// the package doc, "Close"). Close is idempotent. Any goroutine may call it.
func (q *Queue[E, P]) Close() {
	q.mu.Lock()
	q.closed = true
	q.closedFlag.Store(true) // under mu; pairs with the load in Closed
	q.mu.Unlock()
}

// Closed reports whether Close has been called. Lock-free. Any goroutine may
// call it.
func (q *Queue[E, P]) Closed() bool {
	return q.closedFlag.Load() // pairs with the store in Close
}

// Len returns the number of queued elements, without taking the lock. It is
// exact at some instant during the call and never negative; by the time the
// caller looks, pushes and pops may have changed it. Any goroutine may call
// it.
func (q *Queue[E, P]) Len() int {
	return int(q.length.Load()) // pairs with the Adds under mu
}

// IsEmpty reports whether Len is 0, without taking the lock. Any goroutine
// may call it.
func (q *Queue[E, P]) IsEmpty() bool {
	return q.length.Load() == 0 // pairs with the Adds under mu
}

// ptr is the constraint of the element slices linkChain accepts: []P from
// PushSlice, []*E from PushOverflow.
type ptr[E any] interface{ ~*E }

// linkChain checks es (non-nil elements, nil links, no duplicates) and links
// each element to the next, outside any lock: the elements are still the
// caller's. It returns the first and last element; the last link stays nil.
// On a bad element it restores the links it set and panics. Called by the
// pushes, before they lock.
func linkChain[E any, P Node[E], T ptr[E]](es []T) (first, last *E) {
	for i, t := range es {
		e := (*E)(t)
		if e == nil {
			unlinkChain[E, P](es[:i])
			panic(msgNilPush)
		}
		if i > 0 {
			*next[E, P]((*E)(es[i-1])) = e
		}
		// A duplicate of an earlier element has that element's link, just
		// set to its successor, so it is caught here too.
		if *next[E, P](e) != nil {
			unlinkChain[E, P](es[:i])
			panic(msgLinkedPush)
		}
	}
	return (*E)(es[0]), (*E)(es[len(es)-1])
}

// holdsTail reports whether tail, a queue's tail element, is one of es: the
// one queued element whose link is nil, so linkChain cannot tell it is queued.
// One pointer comparison per element. Called by the pushes with the queue's
// lock held.
func holdsTail[E any, T ptr[E]](tail *E, es []T) bool {
	if tail == nil {
		return false
	}
	for _, t := range es {
		if (*E)(t) == tail {
			return true
		}
	}
	return false
}

// unlinkChain clears the links of es, undoing linkChain. Called by the pushes
// on elements that are still the caller's.
func unlinkChain[E any, P Node[E], T ptr[E]](es []T) {
	for _, t := range es {
		if t != nil {
			*next[E, P]((*E)(t)) = nil
		}
	}
}
