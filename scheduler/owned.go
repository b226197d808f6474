package scheduler

import (
	"sync"
	"sync/atomic"
)

// ownedTasks is the list of every live task (spawned, not yet finished),
// which the shutdown needs to reach tasks that sit in no queue: a task idle
// on a waker that will never fire must still have its JoinHandle resolved.
// It is Tokio's OwnedTasks: shards of intrusive doubly linked lists, each
// under its own mutex, a task's shard chosen by its address so that spawns
// on different workers rarely share a lock.
type ownedTasks struct {
	shards []ownedShard
	// mask is len(shards)-1; len(shards) is a power of two.
	mask uintptr
	// live counts linked tasks, for Stats and Config.MaxLiveTasks. Raised
	// by insert (or by TrySpawn's reservation) and lowered by remove.
	live atomic.Int64
}

// ownedShard is one list.
type ownedShard struct {
	_  pad
	mu sync.Mutex
	// head is the first task, guarded by mu.
	head *taskBase
	// closed is set by the shutdown sweep, guarded by mu; no task is linked
	// afterwards.
	closed bool
}

// init makes the shards: a power of two, at least 4 per worker.
func (o *ownedTasks) init(workers int) {
	n := 8
	for n < 4*workers {
		n *= 2
	}
	o.shards = make([]ownedShard, n)
	o.mask = uintptr(n - 1)
}

// insert links t and reports true, or reports false if the list is closed
// (shutdown began). reserved says the live count was already raised (by
// TrySpawn); insert lowers it again on failure.
func (o *ownedTasks) insert(t *taskBase, reserved bool) bool {
	sh := &o.shards[t.shardIndex(o.mask)]
	sh.mu.Lock()
	if sh.closed {
		sh.mu.Unlock()
		if reserved {
			o.live.Add(-1)
		}
		return false
	}
	t.next = sh.head
	if sh.head != nil {
		sh.head.prev = t
	}
	sh.head = t
	t.linked = true
	sh.mu.Unlock()
	if !reserved {
		o.live.Add(1)
	}
	return true
}

// remove unlinks t if it is linked.
func (o *ownedTasks) remove(t *taskBase) {
	sh := &o.shards[t.shardIndex(o.mask)]
	sh.mu.Lock()
	if !t.linked {
		sh.mu.Unlock()
		return
	}
	sh.unlink(t)
	sh.mu.Unlock()
	o.live.Add(-1)
}

// unlink takes t out of the shard's list. Called with sh.mu held.
func (sh *ownedShard) unlink(t *taskBase) {
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		sh.head = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	}
	t.prev, t.next, t.linked = nil, nil, false
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
			sh.unlink(t)
			sh.mu.Unlock()
			o.live.Add(-1)
			f(t)
		}
	}
}
