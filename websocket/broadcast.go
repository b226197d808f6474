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
// queue is drained: an idle member holds no task, only its entry in the
// set (about 55 bytes). All methods may be called from any goroutine or
// task.
type Broadcaster struct {
	h        blitz.Handle
	queueLen int
	onDrop   func(c *Conn, err error)

	// mu guards members; a member's own lock is taken under it, never
	// the other way round.
	mu      sync.Mutex
	members map[*Conn]*member
}

// NewBroadcaster returns an empty Broadcaster whose senders run on h's
// runtime.
func NewBroadcaster(h blitz.Handle, opts *BroadcastOptions) *Broadcaster {
	b := &Broadcaster{h: h, queueLen: DefaultBroadcastQueue, members: map[*Conn]*member{}}
	if opts != nil {
		if opts.QueueLen > 0 {
			b.queueLen = min(opts.QueueLen, MaxBroadcastQueue)
		}
		b.onDrop = opts.OnDrop
	}
	return b
}

// member is a connection of a Broadcaster: 24 bytes, held for as long as
// the connection is in the set (its Broadcaster is passed to its methods
// rather than kept). Its queue is a record of its own, taken from a pool
// when a message is queued for an idle member and put back when the
// sender has drained it, so that an idle member holds no queue.
type member struct {
	c *Conn

	// mu guards q.
	mu sync.Mutex
	// q is nil while the member is idle (no sender runs, nothing waits);
	// otherwise its sender's queue, or goneQueue once the member left the
	// set (a sender that finds goneQueue ends).
	q *memberQueue
}

// memberQueue is the queue of a member whose sender runs: msgs[head:] are
// the messages waiting, in order, at most the Broadcaster's queueLen.
// msgs is compacted when it is full.
type memberQueue struct {
	msgs []*PreparedMessage
	head int
}

// goneQueue is the queue of a member that left its set.
var goneQueue = &memberQueue{}

// pooled says q is a queue of the pool's: neither nil nor goneQueue.
func (q *memberQueue) pooled() bool { return q != nil && q != goneQueue }

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

// recycle clears q and puts it back in the pool; a queue that grew past
// the default length is left to the collector, so that the pool does not
// keep the largest queue any member ever had.
func (q *memberQueue) recycle() {
	clear(q.msgs)
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
	m, ok := b.members[c]
	if !ok {
		m = &member{c: c}
		b.members[c] = m
	}
	for _, pm := range first {
		if !m.push(b, pm) {
			break
		}
	}
}

// Send queues pm for c alone, in order with the messages broadcast to
// it. It reports false, queueing nothing, if c is not in the set or its
// queue is full (Send does not drop the connection).
func (b *Broadcaster) Send(c *Conn, pm *PreparedMessage) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	m, ok := b.members[c]
	return ok && m.push(b, pm)
}

// Remove takes c out of the set: the messages queued for it and not yet
// being written are dropped. It reports whether c was in the set.
func (b *Broadcaster) Remove(c *Conn) bool {
	b.mu.Lock()
	m, ok := b.members[c]
	delete(b.members, c)
	b.mu.Unlock()
	if ok {
		m.leave()
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
	var slow []*member
	n := 0
	b.mu.Lock()
	for _, m := range b.members {
		if m.push(b, pm) {
			n++
			continue
		}
		slow = append(slow, m)
		delete(b.members, m.c)
	}
	b.mu.Unlock()
	for _, m := range slow {
		m.leave()
		_ = m.c.CloseNow()
		if b.onDrop != nil {
			b.onDrop(m.c, fmt.Errorf("%w: %d messages queued", ErrSlowConsumer, b.queueLen))
		}
	}
	return n
}

// push queues pm, starting a sender if none runs; false means the queue
// is full. b is m's Broadcaster.
func (m *member) push(b *Broadcaster, pm *PreparedMessage) bool {
	m.mu.Lock()
	q := m.q
	switch {
	case q == goneQueue:
		m.mu.Unlock()
		return false
	case q != nil && q.len() >= b.queueLen:
		m.mu.Unlock()
		return false
	}
	start := q == nil
	if start {
		q = queues.Get().(*memberQueue)
		m.q = q
	}
	q.push(pm)
	m.mu.Unlock()
	if start {
		if m.c.NetConn() != nil {
			// A net.Conn's futures block: a goroutine sends.
			go func() { _, _ = future.Block(context.Background(), future.Future[struct{}](&sender{b: b, m: m})) }()
		} else {
			blitz.SpawnValueDetachedOn[struct{}](b.h, sender{b: b, m: m})
		}
	}
	return true
}

// next returns the next message to write, or nil when the queue is
// drained or the member gone (the sender then ends, and the member is
// idle unless gone). Called by the sender.
func (m *member) next() *PreparedMessage {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.q
	switch {
	case !q.pooled():
		return nil
	case q.len() == 0:
		m.q = nil
		q.recycle()
		return nil
	}
	pm := q.msgs[q.head]
	q.msgs[q.head] = nil
	q.head++
	return pm
}

// leave marks the member gone and drops its queue.
func (m *member) leave() {
	m.mu.Lock()
	q := m.q
	m.q = goneQueue
	m.mu.Unlock()
	if q.pooled() {
		q.recycle()
	}
}

// fail takes the member out of its Broadcaster b after a write error.
func (m *member) fail(b *Broadcaster, err error) {
	b.mu.Lock()
	cur, ok := b.members[m.c]
	if ok && cur == m {
		delete(b.members, m.c)
	}
	b.mu.Unlock()
	m.leave()
	if ok && cur == m && b.onDrop != nil {
		b.onDrop(m.c, err)
	}
}

// sender writes a member's queue, one message at a time, until it is
// drained: the task (or goroutine) of a member with messages queued.
type sender struct {
	b  *Broadcaster
	m  *member
	wf *WriteFuture
}

// Poll writes the queued messages.
func (s *sender) Poll(cx *future.Context) (struct{}, bool) {
	for {
		if s.wf == nil {
			pm := s.m.next()
			if pm == nil {
				return struct{}{}, true
			}
			s.wf = s.m.c.WritePreparedMessage(pm)
		}
		r, ok := s.wf.Poll(cx)
		if !ok {
			return struct{}{}, false
		}
		s.wf = nil
		if r.Err != nil {
			s.m.fail(s.b, r.Err) // the member is gone: its queue too
			return struct{}{}, true
		}
	}
}

// Cancel abandons the write in progress (which breaks the connection if
// it had started) and the queue: the runtime is shutting down.
func (s *sender) Cancel() {
	if s.wf != nil {
		s.wf.Cancel()
		s.wf = nil
	}
	s.m.stop()
}

// stop drops the queue and marks the sender ended, the member staying in
// the set (idle, unless gone). Called by a cancelled sender.
func (m *member) stop() {
	m.mu.Lock()
	q := m.q
	if q != goneQueue {
		m.q = nil
	}
	m.mu.Unlock()
	if q.pooled() {
		q.recycle()
	}
}
