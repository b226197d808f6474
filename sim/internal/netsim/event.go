package netsim

import (
	"container/heap"
	"time"
)

// event is one thing the model does at a virtual time: a segment arriving,
// a disk op finishing, a timeout expiring, a batch of completions becoming
// visible to Wait. Events live in the heap of the host they concern.
type event struct {
	// at is when the event is due; tie is the seeded tiebreak among events
	// due at the same instant, drawn when the event was scheduled; seq
	// orders what tie leaves equal (in practice nothing).
	at  time.Time
	tie uint64
	seq uint64
	// fn is the event's effect, run under the world's lock with the
	// model clock at at.
	fn func()
	// dead marks an event cancelled after it was scheduled (a linked
	// timeout whose op completed); it is dropped when it reaches the top.
	dead bool
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

// top returns the earliest live event, dropping dead ones, or nil.
func (q *eventHeap) top() *event {
	for q.Len() > 0 {
		if e := (*q)[0]; !e.dead {
			return e
		}
		heap.Pop(q)
	}
	return nil
}

// schedule adds an event for host h due at at (never before the model
// clock) and returns it, so that it can be marked dead. Every Wait
// sleeping past at is told to look again: an event of one host may cause
// completions on another (a segment's arrival answered), and the host
// whose event it is may have nobody waiting to run it.
func (w *World) schedule(h *Host, at time.Time, fn func()) *event {
	if at.Before(w.clock) {
		at = w.clock
	}
	w.seq++
	e := &event{at: at, tie: w.rng.Uint64(), seq: w.seq, fn: fn}
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
		if e := h.events.top(); e != nil && (first == nil || e.before(first)) {
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
			if e := h.events.top(); e != nil && (fe == nil || e.before(fe)) {
				first, fe = h, e
			}
		}
		if fe == nil || fe.at.After(now) {
			break
		}
		heap.Pop(&first.events)
		w.clock = fe.at
		fe.fn()
	}
	w.clock = now
}
