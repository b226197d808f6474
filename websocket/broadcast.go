package websocket

// The Broadcaster: a set of connections, each with a bounded queue of
// prepared messages and a sender that drains it (see "Broadcast" in the
// package doc).

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// ErrSlowConsumer is wrapped by the error with which a Broadcaster drops a
// connection whose queue is full: the connection is closed (without a
// close handshake, as its writes are stuck) and leaves the set.
var ErrSlowConsumer = errors.New("websocket: slow consumer")

// DefaultBroadcastQueue is the default of BroadcastOptions.QueueLen, and
// MaxBroadcastQueue its largest value (a longer queue is this one).
const (
	DefaultBroadcastQueue = 16
	MaxBroadcastQueue     = 1 << 20
)

// BroadcastOptions tune a Broadcaster; the zero BroadcastOptions is valid.
type BroadcastOptions struct {
	// QueueLen is the most messages waiting to be written to one
	// connection (the one being written not counted); a Broadcast that
	// finds a connection's queue full drops the connection (see
	// ErrSlowConsumer). 0 means DefaultBroadcastQueue; more than
	// MaxBroadcastQueue means MaxBroadcastQueue.
	QueueLen int
	// OnDrop, if not nil, is called when a connection leaves the set
	// otherwise than by Remove: with an error wrapping ErrSlowConsumer
	// when its queue was full, or the error of a write that failed. It is
	// called on the goroutine or task of the Broadcast, or of the
	// connection's sender, without the Broadcaster's lock: it may call
	// the Broadcaster, and must not block.
	OnDrop func(c *Conn, err error)
}

// Broadcaster sends prepared messages to a set of connections without
// letting one slow connection hold up the others: Broadcast queues the
// message for each connection and returns, and each connection's sender
// writes its queue in order. A connection's queue holds at most
// BroadcastOptions.QueueLen messages; a Broadcast that finds it full
// drops the connection (closes it and removes it from the set, with
// OnDrop told ErrSlowConsumer), so that a consumer that cannot keep up
// costs neither memory without bound nor the others' latency. A
// connection whose write fails leaves the set too.
//
// A connection's sender is a task of the Broadcaster's runtime (for a
// connection on the runtime's streams) or a goroutine (for one over a
// net.Conn), started when its queue becomes non-empty and ended when the
// queue is drained: an idle member holds no task and no record of its
// own, only its entry in the set (about 30 bytes: the map's slot, 24 to
// 38 bytes as the map fills). All methods may be called from any
// goroutine or task.
type Broadcaster struct {
	h        blitz.Handle
	queueLen int
	onDrop   func(c *Conn, err error)

	// mu guards members. A queue's mu is taken under it, never the other
	// way round: a sender holding its queue's mu releases it before it
	// takes this one.
	mu sync.Mutex
	// members holds the connections of the set. A nil value is an idle
	// member: no sender runs, nothing waits. Otherwise the value is the
	// member's queue, owned by the sender that drains it: the map points
	// at a queue only while its sender runs (and has not given it up),
	// and a queue the map no longer points at is reachable by its sender
	// alone.
	members map[*Conn]*memberQueue
}

// NewBroadcaster returns an empty Broadcaster whose senders run on h's
// runtime.
func NewBroadcaster(h blitz.Handle, opts *BroadcastOptions) *Broadcaster {
	b := &Broadcaster{h: h, queueLen: DefaultBroadcastQueue, members: map[*Conn]*memberQueue{}}
	if opts != nil {
		if opts.QueueLen > 0 {
			b.queueLen = min(opts.QueueLen, MaxBroadcastQueue)
		}
		b.onDrop = opts.OnDrop
	}
	return b
}

// memberQueue is the queue of a busy member, the one whose sender runs:
// taken from a pool by the push that finds the member idle, given to the
// sender it starts, and put back by that sender alone, once the map no
// longer points at it (the member went idle, or left the set). An idle
// member holds none.
type memberQueue struct {
	// c is the member's connection: set by the push that takes the queue
	// from the pool, then read-only until recycle.
	c *Conn

	// mu guards msgs, head, gone, starting and cancelled. It is taken
	// under the Broadcaster's mu (push, Remove, Broadcast, a sender that
	// goes idle) or alone (a sender popping a message); never the
	// Broadcaster's mu under it.
	mu sync.Mutex
	// msgs[head:] are the messages waiting, in order, at most the
	// Broadcaster's queueLen (the one being written is the sender's, not
	// here); pushed under the Broadcaster's mu, popped by the sender.
	// msgs is compacted when it is full.
	msgs []*PreparedMessage
	head int
	// gone says the member left the set (removed, dropped as slow): the
	// map no longer points at the queue, msgs was cleared, and the sender
	// ends after its write in flight. Set under the Broadcaster's mu, at
	// the entry's deletion; so a queue the map points at is never gone.
	gone bool
	// starting is set while the push that made the queue spawns its
	// sender task, holding the Broadcaster's mu; cancelled, by the
	// sender's Cancel that finds starting set (a spawn on a runtime that
	// shuts down cancels the task at once, on the spawning goroutine):
	// that Cancel cannot take the Broadcaster's mu, so the push makes the
	// member idle and recycles the queue in its stead.
	starting, cancelled bool
}

// queues holds drained member queues, their messages cleared, for the
// next member that becomes busy.
var queues = sync.Pool{New: func() any { return new(memberQueue) }}

// len returns the number of messages waiting.
func (q *memberQueue) len() int { return len(q.msgs) - q.head }

// push appends pm, compacting msgs first when it is full.
func (q *memberQueue) push(pm *PreparedMessage) {
	if q.head > 0 && len(q.msgs) == cap(q.msgs) {
		q.msgs = q.msgs[:copy(q.msgs, q.msgs[q.head:])]
		clear(q.msgs[len(q.msgs):cap(q.msgs)])
		q.head = 0
	}
	q.msgs = append(q.msgs, pm)
}

// pop removes and returns the first message waiting; there is one.
func (q *memberQueue) pop() *PreparedMessage {
	pm := q.msgs[q.head]
	q.msgs[q.head] = nil
	q.head++
	return pm
}

// leave marks the queue gone and drops the messages waiting (not the one
// being written, which its sender holds). Called with the Broadcaster's
// mu held, as the member's entry is deleted.
func (q *memberQueue) leave() {
	q.mu.Lock()
	q.gone = true
	clear(q.msgs)
	q.msgs, q.head = q.msgs[:0], 0
	q.mu.Unlock()
}

// recycle clears q and puts it back in the pool; a queue that grew past
// the default length is left to the collector, so that the pool does not
// keep the largest queue any member ever had. Called by q's sender once
// nothing else can reach q.
func (q *memberQueue) recycle() {
	clear(q.msgs)
	q.c, q.gone, q.starting, q.cancelled = nil, false, false, false
	if cap(q.msgs) > DefaultBroadcastQueue {
		return
	}
	q.msgs, q.head = q.msgs[:0], 0
	queues.Put(q)
}

// Add adds c to the set, with first queued for it before any message
// broadcast after (a welcome, say; at most BroadcastOptions.QueueLen of
// them). Adding a connection that is in the set already queues first
// after what waits for it.
func (b *Broadcaster) Add(c *Conn, first ...*PreparedMessage) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q, ok := b.members[c]
	if !ok {
		b.members[c] = nil
	}
	for _, pm := range first {
		if !b.push(c, q, pm) {
			break
		}
		q = b.members[c] // the first push made the member busy
	}
}

// Send queues pm for c alone, in order with the messages broadcast to
// it. It reports false, queueing nothing, if c is not in the set or its
// queue is full (Send does not drop the connection).
func (b *Broadcaster) Send(c *Conn, pm *PreparedMessage) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	q, ok := b.members[c]
	return ok && b.push(c, q, pm)
}

// Remove takes c out of the set: the messages queued for it and not yet
// being written are dropped. It reports whether c was in the set.
func (b *Broadcaster) Remove(c *Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	q, ok := b.members[c]
	delete(b.members, c)
	if q != nil {
		q.leave() // its sender ends after its write in flight, and recycles it
	}
	return ok
}

// Len returns the number of connections in the set.
func (b *Broadcaster) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.members)
}

// Broadcast queues pm for every connection of the set and returns the
// number it was queued for. It does not wait for any write: each
// connection's sender writes its queue. A connection whose queue is full
// is dropped (see Broadcaster).
func (b *Broadcaster) Broadcast(pm *PreparedMessage) int {
	var slow []*Conn
	n := 0
	b.mu.Lock()
	for c, q := range b.members {
		if b.push(c, q, pm) {
			n++
			continue
		}
		// Full, so busy: its sender recycles q.
		delete(b.members, c)
		q.leave()
		slow = append(slow, c)
	}
	b.mu.Unlock()
	for _, c := range slow {
		_ = c.CloseNow()
		if b.onDrop != nil {
			b.onDrop(c, fmt.Errorf("%w: %d messages queued", ErrSlowConsumer, b.queueLen))
		}
	}
	return n
}

// push queues pm for c, a member whose queue is q (nil: idle), starting a
// sender if none runs; false means the queue is full. Called with b.mu
// held.
func (b *Broadcaster) push(c *Conn, q *memberQueue, pm *PreparedMessage) bool {
	if q != nil {
		q.mu.Lock()
		ok := q.len() < b.queueLen // not gone: the map points at it
		if ok {
			q.push(pm)
		}
		q.mu.Unlock()
		return ok
	}
	// Idle: a queue from the pool, which nobody else reaches before the
	// sender starts (the map is b.mu's).
	q = queues.Get().(*memberQueue)
	q.c = c
	q.push(pm)
	b.members[c] = q
	if c.NetConn() != nil {
		// A net.Conn's futures block: a goroutine sends.
		go func() { _, _ = future.Block(context.Background(), future.Future[struct{}](&sender{b: b, q: q})) }()
		return true
	}
	q.starting = true
	blitz.SpawnValueDetachedOn[struct{}](b.h, sender{b: b, q: q})
	q.mu.Lock()
	cancelled := q.cancelled
	q.starting = false
	q.mu.Unlock()
	if cancelled {
		// The sender was cancelled before it could take b.mu (the runtime
		// shuts down): the member stays in the set, idle, as after a
		// sender's Cancel.
		b.members[c] = nil
		q.recycle()
	}
	return true
}

// sender writes a member's queue, one message at a time, until it is
// drained or the member gone: the task (or goroutine) of a busy member.
type sender struct {
	b *Broadcaster
	// q is the member's queue, the sender's to recycle; nil once it did
	// (or left that to the push that spawned it).
	q  *memberQueue
	wf *WriteFuture
}

// Poll writes the queued messages.
func (s *sender) Poll(cx *future.Context) (struct{}, bool) {
	for {
		if s.wf == nil {
			pm := s.next()
			if pm == nil {
				return struct{}{}, true
			}
			s.wf = s.q.c.WritePreparedMessage(pm)
		}
		r, ok := s.wf.Poll(cx)
		if !ok {
			return struct{}{}, false
		}
		s.wf = nil
		if r.Err != nil {
			s.fail(r.Err)
			return struct{}{}, true
		}
	}
}

// next returns the next message to write, or nil when the queue is
// drained or the member gone: the sender then ends, having made the
// member idle (unless gone) and recycled the queue.
func (s *sender) next() *PreparedMessage {
	q := s.q
	q.mu.Lock()
	if q.gone {
		q.mu.Unlock()
		s.drop()
		return nil
	}
	if q.len() > 0 {
		pm := q.pop()
		q.mu.Unlock()
		return pm
	}
	// Drained: the member goes idle under b.mu, unless a push came in
	// between or the member left meanwhile.
	q.mu.Unlock()
	b := s.b
	b.mu.Lock()
	q.mu.Lock()
	if !q.gone && q.len() > 0 {
		pm := q.pop()
		q.mu.Unlock()
		b.mu.Unlock()
		return pm
	}
	if b.members[q.c] == q {
		b.members[q.c] = nil
	}
	q.mu.Unlock()
	b.mu.Unlock()
	s.drop()
	return nil
}

// drop recycles the queue, which the map no longer points at.
func (s *sender) drop() {
	q := s.q
	s.q = nil
	q.recycle()
}

// fail takes the member out of the set after a write error, unless it
// left it before, and ends the sender.
func (s *sender) fail(err error) {
	b, c := s.b, s.q.c
	b.mu.Lock()
	mine := b.members[c] == s.q
	if mine {
		delete(b.members, c)
	}
	b.mu.Unlock()
	s.drop() // nothing else reaches it now
	if mine && b.onDrop != nil {
		b.onDrop(c, err)
	}
}

// Cancel abandons the write in progress (which breaks the connection if
// it had started) and the queue: the runtime is shutting down. The member
// stays in the set, idle (unless gone).
func (s *sender) Cancel() {
	if s.wf != nil {
		s.wf.Cancel()
		s.wf = nil
	}
	q := s.q
	if q == nil {
		return // ended already (a panic of OnDrop)
	}
	q.mu.Lock()
	if q.starting {
		// Cancelled by the spawn, on the goroutine of the push that holds
		// b.mu (or as it spawns): the push makes the member idle.
		q.cancelled = true
		q.mu.Unlock()
		s.q = nil
		return
	}
	q.mu.Unlock()
	b := s.b
	b.mu.Lock()
	if b.members[q.c] == q {
		b.members[q.c] = nil
	}
	b.mu.Unlock()
	s.drop()
}
