//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package reactor

import (
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/backend"
)

// fdState is the reactor's record of one descriptor number. It is made on
// the first op that needs it and reused for every later descriptor with the
// same number (a closed descriptor leaves it empty and unregistered).
type fdState struct {
	// mu guards every field below and, for ops in its queues, their
	// Internal.Next, Internal.Prev and Internal.Token.
	mu sync.Mutex
	// qs are the descriptor's queues, nil until an op first waits in one
	// of them (see queues), kept from then on until the descriptor is
	// closed (so that a descriptor whose ops keep waiting does not make
	// them anew each time): a descriptor that waits only through an armed
	// receive, as an idle connection does, holds none, and its record is
	// 32 bytes, a size class.
	qs *fdQueues
	// armed: a receive is armed (ArmRecv), into group armGroup, its
	// completion keyed armKey.
	armKey   uint64
	armGroup uint16
	armed    bool
	// registered: the descriptor is in the poller.
	registered bool
	// probed: fstat has classified the descriptor for read and write ops;
	// isFile: it is a regular file or block device (never waited on).
	probed, isFile bool
	// drained: an armed receive's last read found the socket empty (a
	// short read, or EAGAIN) and the poller has reported nothing for the
	// descriptor since, so data that comes will bring an event: the next
	// ArmRecv waits for it rather than reading first (Reactor.edgePerArrival
	// only). peerClosed: an event said the peer closed its side, or the
	// socket hung up or failed, after which the end of stream may come
	// with no event: every ArmRecv reads first. Both cleared by reset.
	drained, peerClosed bool
}

// reset clears what fs knows of the descriptor that had its number: its
// registration, its kind, the state of its read side. fs.mu is held.
func (fs *fdState) reset() {
	fs.registered, fs.probed, fs.isFile = false, false, false
	fs.drained, fs.peerClosed = false, false
}

// readsFirst reports whether an armed receive should read before it
// waits: unless the last read drained the socket and no event came since,
// on a registered descriptor whose peer has not closed. fs.mu is held.
func (fs *fdState) readsFirst() bool {
	return !fs.drained || fs.peerClosed || !fs.registered
}

// fdQueues are a descriptor's read-side, write-side and poll queues.
type fdQueues struct {
	rq, wq, pq opQueue
}

// empty reports whether no op waits in any of the queues.
func (qs *fdQueues) empty() bool { return qs.rq.empty() && qs.wq.empty() && qs.pq.empty() }

// queue returns the queue an op of kind k waits in.
func (qs *fdQueues) queue(op *backend.Op) *opQueue {
	switch op.Kind {
	case backend.KindConnect, backend.KindSend, backend.KindSendTo, backend.KindWrite, backend.KindWritev:
		return &qs.wq
	case backend.KindPoll:
		return &qs.pq
	}
	return &qs.rq
}

// queues returns fs's queues, making them if none are attached. fs.mu
// is held.
func (fs *fdState) queues() *fdQueues {
	if fs.qs == nil {
		fs.qs = new(fdQueues)
	}
	return fs.qs
}

// queue returns the queue op waits in, nil when fs has no queues (then op
// waits in none). fs.mu is held.
func (fs *fdState) queue(op *backend.Op) *opQueue {
	if fs.qs == nil {
		return nil
	}
	return fs.qs.queue(op)
}

// readEmpty reports whether no op waits on the read side. fs.mu is held.
func (fs *fdState) readEmpty() bool { return fs.qs == nil || fs.qs.rq.empty() }

// tidy drops fs's queues if no op waits in them. fs.mu is held; called
// when the descriptor is closed or its number handed out again.
func (fs *fdState) tidy() {
	if fs.qs != nil && fs.qs.empty() {
		fs.qs = nil
	}
}

// opQueue is an intrusive FIFO of ops linked through Internal.Next/Prev,
// one word wide: Next runs from the head to the tail (nil after the tail),
// and Prev is circular, the head's Prev being the tail, so that push finds
// the tail without a second word and every queued op has a non-nil Prev.
type opQueue struct {
	head *backend.Op
}

func (q *opQueue) empty() bool { return q.head == nil }

func (q *opQueue) push(op *backend.Op) {
	op.Internal.Next = nil
	if q.head == nil {
		op.Internal.Prev = op
		q.head = op
		return
	}
	tail := q.head.Internal.Prev
	tail.Internal.Next = op
	op.Internal.Prev = tail
	q.head.Internal.Prev = op
}

// contains reports whether op is in q. An op only ever waits in the queue
// its kind picks (fdQueues.queue), so the caller passes that one; a queued
// op's Prev is never nil, an unqueued op's always is.
func (q *opQueue) contains(op *backend.Op) bool {
	return op.Internal.Prev != nil
}

func (q *opQueue) remove(op *backend.Op) {
	next, prev := op.Internal.Next, op.Internal.Prev
	switch {
	case op == q.head:
		q.head = next
		if next != nil {
			next.Internal.Prev = prev // the tail
		}
	case next == nil: // the tail, not the head
		prev.Internal.Next = nil
		q.head.Internal.Prev = prev
	default:
		prev.Internal.Next = next
		next.Internal.Prev = prev
	}
	op.Internal.Next, op.Internal.Prev = nil, nil
}

// The table: a fixed top level of chunk pointers covers descriptors below
// 1<<22 without locks; larger numbers (rare: they need a raised limit) go to
// a map under a mutex. A chunk's slot holds the index (plus one) of the
// descriptor's record, and the records live in pages of their own, made
// as needed in the order the descriptor numbers first come: each ring has
// its own reactor and table, so a ring's descriptors are sparse (every
// other number with two rings), and a 4-byte index for every number of a
// chunk, with a 32-byte record for each used one, costs less than a
// pointer for every number (or the record inline, 32 bytes for every
// number).
const (
	chunkBits = 10
	chunkSize = 1 << chunkBits
	topSize   = 1 << 12
)

type fdChunk [chunkSize]atomic.Uint32

// recPage is a page of records.
type recPage [chunkSize]fdState

type fdTable struct {
	// top and the chunks' slots are written once each: top by
	// CompareAndSwap, a slot under recMu (see get).
	top [topSize]atomic.Pointer[fdChunk]

	// recs are the pages of records; record i is recs[i>>chunkBits] at
	// i&(chunkSize-1). recMu guards nrec, the records given out, and the
	// making of records and pages; a page pointer is stored before the
	// slot that names a record in it (its publication).
	recs  [topSize]atomic.Pointer[recPage]
	recMu sync.Mutex
	nrec  uint32

	// bigMu guards big, the descriptors beyond the top level.
	bigMu sync.Mutex
	big   map[int]*fdState
}

// get returns fd's record, making it when create is set (else nil if none).
func (t *fdTable) get(fd int, create bool) *fdState {
	if fd < 0 {
		return nil
	}
	hi := fd >> chunkBits
	if hi >= topSize {
		return t.getBig(fd, create)
	}
	c := t.top[hi].Load()
	if c == nil {
		if !create {
			return nil
		}
		t.top[hi].CompareAndSwap(nil, new(fdChunk))
		c = t.top[hi].Load()
	}
	slot := &c[fd&(chunkSize-1)]
	i := slot.Load() // load-acquire: pairs with newRec's Store
	if i == 0 {
		if !create {
			return nil
		}
		i = t.newRec(slot)
	}
	return t.rec(i - 1)
}

// newRec gives the descriptor of slot a record, unless another getter did
// first, and returns its index plus one.
func (t *fdTable) newRec(slot *atomic.Uint32) uint32 {
	t.recMu.Lock()
	defer t.recMu.Unlock()
	if i := slot.Load(); i != 0 {
		return i
	}
	i := t.nrec
	if p := &t.recs[i>>chunkBits]; p.Load() == nil {
		p.Store(new(recPage)) // published before the slot below names a record in it
	}
	t.nrec++
	slot.Store(i + 1) // publishes the record: pairs with get's Load
	return i + 1
}

// rec returns record i (i < nrec, its slot published).
func (t *fdTable) rec(i uint32) *fdState {
	return &t.recs[i>>chunkBits].Load()[i&(chunkSize-1)]
}

func (t *fdTable) getBig(fd int, create bool) *fdState {
	t.bigMu.Lock()
	defer t.bigMu.Unlock()
	fs := t.big[fd]
	if fs == nil && create {
		if t.big == nil {
			t.big = make(map[int]*fdState)
		}
		fs = new(fdState)
		t.big[fd] = fs
	}
	return fs
}

// each calls f with every record and its descriptor number.
func (t *fdTable) each(f func(fd int, fs *fdState)) {
	for hi := range t.top {
		c := t.top[hi].Load()
		if c == nil {
			continue
		}
		for lo := range c {
			if i := c[lo].Load(); i != 0 {
				f(hi<<chunkBits|lo, t.rec(i-1))
			}
		}
	}
	t.bigMu.Lock()
	big := make([]int, 0, len(t.big))
	for fd := range t.big {
		big = append(big, fd)
	}
	t.bigMu.Unlock()
	for _, fd := range big {
		f(fd, t.getBig(fd, false))
	}
}
