package scheduler

import (
	"sync"
	"sync/atomic"
)

// ownedTasks is the list of every live task (spawned, not yet finished),
// which the shutdown needs to reach tasks that sit in no queue: a task idle
// on a waker that will never fire must still have its JoinHandle resolved.
// It is Tokio's OwnedTasks: shards of intrusive doubly linked lists, each
// under its own mutex. A task spawned by a worker goes to that worker's own
// shard (index = worker id), whose lock the worker then takes without
// contention and finds in its cache when the task finishes on the same
// worker, as a chain of spawns does; a task spawned from outside goes to a
// shard chosen by its address.
type ownedTasks struct {
	shards []ownedShard
	// mask is len(shards)-1; len(shards) is a power of two, at least the
	// number of workers.
	mask uint32
	// live is the count of linked tasks, for Stats and
	// Config.MaxLiveTasks.
	live liveCounter
}

// liveCounter counts the linked tasks. A task of a scheduler with
// Config.MaxLiveTasks is counted in bounded, which gives TrySpawn its exact
// bound; any other task in its shard's n, under the shard's lock, so that
// spawns and completions on different workers share no cache line.
type liveCounter struct {
	// bounded is raised by reserve (TrySpawn) or by insert (Spawn) and
	// lowered by unlink, for the tasks counted there (taskBase.bounded).
	bounded atomic.Int64
	// shards are the owned shards (the slice of ownedTasks), whose counts
	// Load adds. Set by init.
	shards []ownedShard
}

// Load returns the number of linked tasks: exact when every task is
// counted in bounded; otherwise the sum of the shards' counts, each read
// under its lock, one after the other.
func (c *liveCounter) Load() int64 {
	n := c.bounded.Load()
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		n += sh.n
		sh.mu.Unlock()
	}
	return n
}

// ownedShard is one list.
type ownedShard struct {
	_  pad
	mu sync.Mutex
	// head is the first task, guarded by mu.
	head *taskBase
	// n counts the tasks linked here that liveCounter.bounded does not.
	// Guarded by mu.
	n int64
	// closed is set by the shutdown sweep, guarded by mu; no task is linked
	// afterwards.
	closed bool
	// recycled holds up to recycleSlots finished tasks spawned without a
	// handle (*valueTask of any type, nil for a free slot), kept for a
	// later spawn of the same type (see Scheduler.recycle). Shard i <
	// Config.Workers is worker i's own: its recycled slots are owned by
	// that worker's goroutine, and never touched by anyone else (not even
	// under mu).
	recycled [recycleSlots]any
	// evict is the slot the next recycle replaces when all are taken, so
	// that tasks of a type no longer spawned do not hold the slots for
	// ever. Owned like recycled.
	evict uint8
}

// recycleSlots is the number of finished tasks a worker keeps for reuse:
// enough for the few task types that a spawn-heavy task alternates
// between (a chain, a ping and its pong), few enough to scan.
const recycleSlots = 4

// init makes the shards: a power of two, at least 4 per worker.
func (o *ownedTasks) init(workers int) {
	n := 8
	for n < 4*workers {
		n *= 2
	}
	o.shards = make([]ownedShard, n)
	o.mask = uint32(n - 1)
	o.live.shards = o.shards
}

// reserve raises the live count for a TrySpawn, unless it is at max
// (then it reports false). Without a bound (max 0) it does nothing and
// reports true.
func (o *ownedTasks) reserve(max int64) bool {
	if max <= 0 {
		return true
	}
	// Reserve before spawning: the count never exceeds max, however
	// many goroutines spawn at once (see the package doc, "Backpressure").
	// A CAS loop rather than add-then-undo, so that a refusal never shows
	// in Stats().Live nor refuses another TrySpawn while a slot is free.
	for {
		n := o.live.bounded.Load()
		if n >= max {
			return false
		}
		if o.live.bounded.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// insert links t into shard i and reports true, or reports false if the
// list is closed (shutdown began). bounded says the scheduler has a
// Config.MaxLiveTasks, so that t is counted in live.bounded; reserved says
// reserve already counted it there (TrySpawn), and insert uncounts it again
// on failure.
func (o *ownedTasks) insert(t *taskBase, i uint32, bounded, reserved bool) bool {
	sh := &o.shards[i&o.mask]
	t.shard, t.bounded = i&o.mask, bounded
	sh.mu.Lock()
	if sh.closed {
		sh.mu.Unlock()
		if reserved {
			o.live.bounded.Add(-1)
		}
		return false
	}
	t.next = sh.head
	if sh.head != nil {
		sh.head.prev = t
	}
	sh.head = t
	t.linked = true
	if !bounded {
		sh.n++
	}
	sh.mu.Unlock()
	if bounded && !reserved {
		o.live.bounded.Add(1)
	}
	return true
}

// remove unlinks t if it is linked.
func (o *ownedTasks) remove(t *taskBase) {
	sh := &o.shards[t.shard]
	sh.mu.Lock()
	if !t.linked {
		sh.mu.Unlock()
		return
	}
	o.unlink(sh, t)
	sh.mu.Unlock()
}

// unlink takes t out of shard sh's list and uncounts it. Called with sh.mu
// held.
func (o *ownedTasks) unlink(sh *ownedShard, t *taskBase) {
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		sh.head = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	}
	t.prev, t.next, t.linked = nil, nil, false
	if t.bounded {
		o.live.bounded.Add(-1)
	} else {
		sh.n--
	}
}

// closeAndPop closes every shard to inserts and then hands each task still
// linked to f, one at a time, unlinked and outside the lock. Called once, by
// the shutdown, after the workers have exited.
func (o *ownedTasks) closeAndPop(f func(*taskBase)) {
	for i := range o.shards {
		sh := &o.shards[i]
		sh.mu.Lock()
		sh.closed = true
		sh.mu.Unlock()
	}
	for i := range o.shards {
		sh := &o.shards[i]
		for {
			sh.mu.Lock()
			t := sh.head
			if t == nil {
				sh.mu.Unlock()
				break
			}
			o.unlink(sh, t)
			sh.mu.Unlock()
			f(t)
		}
	}
}
