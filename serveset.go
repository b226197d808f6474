package blitz

// serveSet: Serve's handlers in flight, one small record each.

import (
	"errors"
	"sync"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// serveSet is the handlers in flight of a ServeFuture and the counts of
// those that ended. Each handler is a task; its serveEntry is the Waker
// registered on the task's JoinHandle, so the task's end calls the entry,
// which takes the outcome into the counts and leaves the set on the spot.
// So the server keeps per connection a 24-byte entry and its place in
// conns (a JoinSet keeps 128 bytes: a Context to poll the handle with and
// the links of its lists), and the Serve task is woken only when the set
// empties while it waits for that (drained).
//
// mu guards every field. Lock order: mu is never held while a handle is
// polled or a task is spawned or cancelled.
type serveSet struct {
	mu sync.Mutex
	// conns are the handlers in flight, each at its entry's idx.
	conns []*serveEntry
	// wk is the Waker of the Serve task waiting for the set to empty (see
	// drained); the handler that empties it wakes it.
	wk waker.Waker
	// closed is set by cancelAll(true): later spawns are cancelled at once.
	closed bool
	// The counts of the handlers that ended (see ServeStats).
	completed, failed, cancelled int
	handlerErr                   error
}

// serveEntry is one handler task of a set: the Wakeable registered on its
// JoinHandle.
type serveEntry struct {
	set *serveSet
	h   JoinHandle[error]
	// idx is the entry's index in set.conns, -1 once it left the set.
	// Guarded by set.mu.
	idx int32
}

// spawn starts fut as a handler task on the runtime polling cx and adds it
// to the set. Called by the Serve task.
func (st *serveSet) spawn(cx *future.Context, fut future.Future[error]) {
	e := &serveEntry{set: st, h: Spawn(cx, fut)}
	st.mu.Lock()
	e.idx = int32(len(st.conns))
	st.conns = append(st.conns, e)
	closed := st.closed
	st.mu.Unlock()
	e.Wake() // registers e on the handle, or takes the outcome of a task already done
	if closed {
		e.h.Cancel()
	}
}

// Wake polls the entry's handle: if the task ended, its outcome is counted
// and the entry leaves the set; if not, the poll registers the entry to be
// woken when it does. The task's end calls it, on whatever goroutine ended
// the task, with no lock held; spawn calls it once first. A wake of an
// entry that left the set does nothing.
func (e *serveEntry) Wake() {
	var cx future.Context
	cx.Reset(waker.New(e), nil, nil, future.NoWorker)
	if r, done := e.h.Poll(&cx); done {
		e.set.end(e, r)
	}
}

// end counts the outcome r of e's task and takes e out of the set, once;
// the handler that empties the set wakes the Serve task waiting for it.
func (st *serveSet) end(e *serveEntry, r future.Result[error]) {
	st.mu.Lock()
	i := e.idx
	if i < 0 {
		st.mu.Unlock()
		return // counted already (spawn's poll and the task's wake raced)
	}
	switch {
	case errors.Is(r.Err, ErrCancelled) || errors.Is(r.Err, ErrShutdown):
		st.cancelled++
	case r.Err != nil:
		st.countLocked(r.Err) // the task's panic
	default:
		st.countLocked(r.Value) // the handler's own outcome
	}
	last := len(st.conns) - 1
	moved := st.conns[last]
	st.conns[i] = moved
	moved.idx = i
	st.conns[last] = nil
	st.conns = st.conns[:last]
	e.idx = -1
	var w waker.Waker
	if last == 0 {
		w, st.wk = st.wk, waker.Waker{}
	}
	st.mu.Unlock()
	w.Wake()
}

// countLocked counts a handler that ended, with err if it failed.
// st.mu must be held.
func (st *serveSet) countLocked(err error) {
	st.completed++
	if err != nil {
		st.failed++
		if st.handlerErr == nil {
			st.handlerErr = err
		}
	}
}

// drained reports whether the set is empty; if not, the handler that
// empties it wakes cx's Waker. Called by the Serve task.
func (st *serveSet) drained(cx *future.Context) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.conns) == 0 {
		st.wk = waker.Waker{}
		return true
	}
	st.wk = cx.Waker()
	return false
}

// cancelAll cancels every handler in the set (see JoinHandle.Cancel); with
// closing, handlers spawned later are cancelled at once too. Each
// cancelled task's end wakes its entry, which counts it. Called by the
// Serve task.
func (st *serveSet) cancelAll(closing bool) {
	st.mu.Lock()
	if closing {
		st.closed = true
	}
	hs := make([]JoinHandle[error], 0, len(st.conns))
	for _, e := range st.conns {
		hs = append(hs, e.h)
	}
	st.mu.Unlock()
	for _, h := range hs { // outside mu: Cancel may schedule the task
		h.Cancel()
	}
}

// len returns the number of handlers in flight.
func (st *serveSet) len() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.conns)
}

// collect adds the counts of the ended handlers to stats. Called by the
// Serve task once the set is drained.
func (st *serveSet) collect(stats *ServeStats) {
	st.mu.Lock()
	defer st.mu.Unlock()
	stats.Completed += st.completed
	stats.Failed += st.failed
	stats.Cancelled += st.cancelled
	if stats.HandlerErr == nil {
		stats.HandlerErr = st.handlerErr
	}
}
