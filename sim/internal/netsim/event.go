package netsim

import (
	"container/heap"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// eventKind is what an event does when it runs (World.run). Events are
// typed records rather than closures so that they can be reused: a run
// schedules one or more for nearly every op, segment and completion.
type eventKind uint8

const (
	// evPost makes completions visible to b's Wait: c, then more.
	evPost eventKind = iota + 1
	// evOpTimeout completes the KindTimeout op p.
	evOpTimeout
	// evLimit is the linked timeout of op p.
	evLimit
	// evUnreachable fails the connect p: no host has its address.
	evUnreachable
	// evConnectTimeout fails the connect p of socket s: no answer in
	// time.
	evConnectTimeout
	// evSynRetry sends the SYN seg of the connect p from ep again, with
	// the next timeout twice rto.
	evSynRetry
	// evSegment is the TCP segment seg's arrival at host h.
	evSegment
	// evHoldTimeout gives ep up if it still holds the segments it began
	// holding at since.
	evHoldTimeout
	// evDatagram is the datagram seg's arrival at host h.
	evDatagram
	// evFileOp performs the file op p on o (nil: by path).
	evFileOp
)

// event is one thing the model does at a virtual time: a segment arriving,
// a disk op finishing, a timeout expiring, a batch of completions becoming
// visible to Wait. Events live in the heap of the host they concern; once
// run (or dropped dead) they go back to the world's free list. Guarded by
// World.mu.
type event struct {
	// at is when the event is due; tie is the seeded tiebreak among events
	// due at the same instant, drawn when the event was scheduled; seq
	// orders what tie leaves equal (in practice nothing) and tells an
	// evRef whether the event is still the one it named (0: free).
	at  time.Time
	tie uint64
	seq uint64
	// kind says what the event does, with the operands below (which
	// ones, see the kinds).
	kind eventKind
	// dead marks an event cancelled after it was scheduled (a linked
	// timeout whose op completed); it is dropped when it reaches the top.
	dead bool
	b    *simBackend
	h    *Host
	// p is the op the event is about; pseq is p.seq when the event was
	// scheduled (pendings are reused: a different seq is another op).
	p    *pending
	pseq uint64
	ep   *endpoint
	seg  *segment
	s    *socket
	o    *ofile
	// rto is an evSynRetry's timeout, since an evHoldTimeout's start.
	rto   time.Duration
	since time.Time
	// c and more are an evPost's completions; more keeps its capacity
	// across reuses.
	c    backend.Completion
	more []backend.Completion
}

// evRef names a scheduled event so that it can be cancelled later: the
// event may have run and been reused since, which its seq tells.
type evRef struct {
	e   *event
	seq uint64
}

// ref returns a reference to e.
func (e *event) ref() evRef { return evRef{e, e.seq} }

// cancel marks the event r names dead, if it is still scheduled.
func (r evRef) cancel() {
	if r.e != nil && r.e.seq == r.seq {
		r.e.dead = true
	}
}

// before orders events: time, then the seeded tiebreak, then sequence.
func (e *event) before(o *event) bool {
	if !e.at.Equal(o.at) {
		return e.at.Before(o.at)
	}
	if e.tie != o.tie {
		return e.tie < o.tie
	}
	return e.seq < o.seq
}

// current reports whether the event's op is still the one it was
// scheduled for (its pending was not finished and reused since).
func (e *event) current() bool { return e.p != nil && e.p.seq == e.pseq }

// eventHeap is a min-heap of events (container/heap).
type eventHeap []*event

func (q eventHeap) Len() int           { return len(q) }
func (q eventHeap) Less(i, j int) bool { return q[i].before(q[j]) }
func (q eventHeap) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *eventHeap) Push(x any)        { *q = append(*q, x.(*event)) }
func (q *eventHeap) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return e
}

// top returns the earliest live event, dropping dead ones (to w's free
// list), or nil.
func (q *eventHeap) top(w *World) *event {
	for q.Len() > 0 {
		if e := (*q)[0]; !e.dead {
			return e
		}
		w.freeEvent(heap.Pop(q).(*event))
	}
	return nil
}

// newEvent returns a cleared event of kind k from the free list, or a new
// one.
func (w *World) newEvent(k eventKind) *event {
	var e *event
	if n := len(w.freeEvents); n > 0 {
		e = w.freeEvents[n-1]
		w.freeEvents[n-1] = nil
		w.freeEvents = w.freeEvents[:n-1]
	} else {
		e = new(event)
	}
	e.kind = k
	return e
}

// freeEvent puts e, run or dropped, on the free list. Its references are
// cleared, so that it keeps nothing alive, and its seq too, so that no
// evRef matches it until it is scheduled again.
func (w *World) freeEvent(e *event) {
	clear(e.more)
	*e = event{more: e.more[:0]}
	w.freeEvents = append(w.freeEvents, e)
}

// schedule adds e (from newEvent, its operands set) for host h, due at at
// (never before the model clock), and returns it. Every Wait sleeping past
// at is told to look again: an event of one host may cause completions on
// another (a segment's arrival answered), and the host whose event it is
// may have nobody waiting to run it.
func (w *World) schedule(h *Host, at time.Time, e *event) *event {
	if at.Before(w.clock) {
		at = w.clock
	}
	w.seq++
	e.at, e.tie, e.seq, e.dead = at, w.rng.Uint64(), w.seq, false
	if e.p != nil {
		e.pseq = e.p.seq
	}
	heap.Push(&h.events, e)
	for _, o := range w.hosts {
		if o.be != nil {
			o.be.rescheduled(at)
		}
	}
	return e
}

// next returns the earliest live event of any host, or nil.
func (w *World) next() *event {
	var first *event
	for _, h := range w.hosts {
		if e := h.events.top(w); e != nil && (first == nil || e.before(first)) {
			first = e
		}
	}
	return first
}

// advance runs every event due by now, across all hosts, in event order,
// with the model clock set to each event's time, and leaves the clock at
// now. Every entry point calls it first (with w.mu held), so the model's
// state is a function of the calls made and their virtual times only.
func (w *World) advance() {
	now := time.Now()
	if now.Before(w.clock) {
		now = w.clock
	}
	for {
		var first *Host
		var fe *event
		for _, h := range w.hosts {
			if e := h.events.top(w); e != nil && (fe == nil || e.before(fe)) {
				first, fe = h, e
			}
		}
		if fe == nil || fe.at.After(now) {
			break
		}
		heap.Pop(&first.events)
		w.clock = fe.at
		w.run(fe)
		w.freeEvent(fe)
	}
	w.clock = now
}

// run performs the event e, due now.
func (w *World) run(e *event) {
	b, p := e.b, e.p
	switch e.kind {
	case evPost:
		b.deliver(e)
	case evOpTimeout:
		if e.current() {
			p.ev = evRef{}
			b.post(b.finish(p, 0, backend.ErrTimeout))
		}
	case evLimit:
		if e.current() && b.inflight[p.op] == p {
			p.limit = evRef{}
			b.post(b.abort(p, backend.ErrTimeout))
		}
	case evUnreachable:
		if e.current() {
			p.ev = evRef{}
			b.post(b.finish(p, 0, oserr("connect", backend.ErrUnreachable)))
		}
	case evConnectTimeout:
		if e.current() && b.inflight[p.op] == p {
			p.ev = evRef{}
			e.s.err = oserr("connect", backend.ErrTimedOut)
			b.post(b.abort(p, e.s.err))
		}
	case evSynRetry:
		if ep := e.ep; e.current() && ep.state == epSynSent && ep.connect == p && b.inflight[p.op] == p {
			w.sendSyn(b, p, ep, e.seg, e.rto)
		}
	case evSegment:
		w.deliverSeg(e.h, e.seg)
		if e.seg.kind != segSyn { // a SYN is sent again by its connect's retries
			w.freeSeg(e.seg)
		}
	case evHoldTimeout:
		if ep := e.ep; len(ep.held) > 0 && ep.heldSince.Equal(e.since) {
			w.timeOut(ep)
		}
	case evDatagram:
		w.deliverDgram(e.h, e.seg)
	case evFileOp:
		if e.current() && b.inflight[p.op] == p {
			p.ev = evRef{}
			b.completeFileOp(p, e.o)
		}
	default:
		panic("netsim: run: bad event kind")
	}
}
