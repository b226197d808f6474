package blitz

// serveSet: Serve's handlers in flight, a TaskRef each.

import (
	"errors"
	"sync"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// serveSet is the handlers in flight of a ServeFuture and the counts of
// those that ended. Each handler is a task that reports its own end to the
// set (scheduler.SpawnNotifying): the set is its Notifier, and keeps per
// connection only the task's 8-byte TaskRef in conns, at the index the
// task's tag holds. So a connection costs the server no JoinHandle record
// and no Waker registered on it (a JoinSet keeps 128 bytes per task: a
// Context to poll the handle with and the links of its lists), and the
// Serve task is woken only when the set empties while it waits for that
// (drained).
//
// mu guards every field and the tags of the tasks in conns. Lock order:
// mu is held across a spawn (which does not call TaskEnded, see
// SpawnNotifying), never while a task is cancelled.
type serveSet struct {
	mu sync.Mutex
	// conns are the handlers in flight, each at the index its tag holds.
	conns []scheduler.TaskRef
	// wk is the Waker of the Serve task waiting for the set to empty (see
	// drained); the handler that empties it wakes it.
	wk waker.Waker
	// closed is set by cancelAll(true): later spawns are cancelled at once.
	closed bool
	// The counts of the handlers that ended (see ServeStats).
	completed, failed, cancelled int
	handlerErr                   error
}

// spawn starts fut as a handler task on the runtime polling cx and adds it
// to the set. Called by the Serve task.
func (st *serveSet) spawn(cx *future.Context, fut future.Future[error]) {
	h, ok := Current(cx)
	if !ok {
		panic(ErrNoRuntime)
	}
	st.mu.Lock()
	ref, err := scheduler.SpawnNotifying(h.rt.sched, cx, fut, st, uint32(len(st.conns)))
	if err != nil {
		st.cancelled++ // the shutdown began: fut was cancelled unpolled
		st.mu.Unlock()
		return
	}
	st.conns = append(st.conns, ref)
	closed := st.closed
	st.mu.Unlock()
	if closed {
		ref.Cancel()
	}
}

// TaskEnded counts the outcome r of the handler task t and takes it out of
// the set; the handler that empties the set wakes the Serve task waiting
// for it. It makes the set the tasks' scheduler.Notifier: each task's end
// calls it once, on whatever goroutine ended the task.
func (st *serveSet) TaskEnded(t scheduler.TaskRef, r future.Result[error]) {
	st.mu.Lock()
	switch {
	case errors.Is(r.Err, ErrCancelled) || errors.Is(r.Err, ErrShutdown):
		st.cancelled++
	case r.Err != nil:
		st.countLocked(r.Err) // the task's panic
	default:
		st.countLocked(r.Value) // the handler's own outcome
	}
	i := t.Tag()
	last := len(st.conns) - 1
	moved := st.conns[last]
	st.conns[i] = moved
	moved.SetTag(i)
	st.conns[last] = scheduler.TaskRef{}
	st.conns = st.conns[:last]
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

// cancelAll cancels every handler in the set (see TaskRef.Cancel); with
// closing, handlers spawned later are cancelled at once too. Each
// cancelled task's end reports to the set (TaskEnded), which counts it.
// Called by the Serve task.
func (st *serveSet) cancelAll(closing bool) {
	st.mu.Lock()
	if closing {
		st.closed = true
	}
	refs := append([]scheduler.TaskRef(nil), st.conns...)
	st.mu.Unlock()
	for _, r := range refs { // outside mu: Cancel may schedule the task
		r.Cancel()
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
