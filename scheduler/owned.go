package scheduler

import (
	"sync"
	"sync/atomic"
)

// ownedTasks is the list of the live tasks that may sit in no queue,
// which the shutdown needs to reach: a task idle on a waker that will never
// fire must still have its JoinHandle resolved. It is Tokio's OwnedTasks:
// shards of intrusive doubly linked lists, each under its own mutex.
//
// A task is linked when it can first be in no queue: at its first poll
// that does not complete (ownedTasks.link, from taskBase.pending). Until
// then it sits in a queue, which the shutdown drains after the workers
// exited: a worker's LIFO slot or local queue, or the global queue, whose
// Push refuses a spawn once the drain began (the spawn then resolves the
// task itself). A task that completes at its first poll, as a link of a
// chain of spawns or a trivial task spawned from outside does, is never
// linked. The task's shard is chosen at the spawn: the spawning worker's
// own (index = worker id), which also counts it; for a spawn from outside,
// one chosen by the task's address among the shards that are no worker's
// (such a task is counted apart, see liveCounter). The link moves the task
// to the shard of the worker polling it, whose lock that worker then takes
// without contention, as its finish, most often on the same worker, does
// too.
//
// Every task is counted as live from its spawn to its finish, whether
// linked or not (see liveCounter).
type ownedTasks struct {
	shards []ownedShard
	// mask is len(shards)-1; len(shards) is a power of two, at least the
	// number of workers.
	mask uint32
	// live is the count of live tasks, for Stats and Config.MaxLiveTasks.
	live liveCounter
}

// Where a task is counted (taskBase.counted).
const (
	notCounted     uint8 = iota
	countedInShard       // in its shard's n
	countedBounded       // in liveCounter.bounded
	countedRemote        // in liveCounter.remote (a spawn from outside the workers)
)

// liveCounter counts the live tasks. A task of a scheduler with
// Config.MaxLiveTasks is counted in bounded, which gives TrySpawn its exact
// bound. Any other task spawned by a worker is counted in that worker's
// shard's n, so that spawns and completions on different workers share no
// cache line; one spawned from outside the workers is counted in remote,
// which the spawn raises anyway (the scheduler's count of such spawns), and
// its finish raises the finishing worker's shard's doneRemote: so neither
// side writes a line the other side writes.
type liveCounter struct {
	// bounded is raised by reserve (TrySpawn) or by count (Spawn) and
	// lowered by uncount, for the tasks counted there.
	bounded atomic.Int64
	// remote is the scheduler's count of spawns from outside the workers
	// (Scheduler.spawnedRemote), raised before such a task is queued (and
	// lowered again if the queue refused it); nil with Config.MaxLiveTasks,
	// where every task is counted in bounded. Set by init.
	remote *atomic.Uint64
	// shards are the owned shards (the slice of ownedTasks), whose counts
	// Load adds. Set by init.
	shards []ownedShard
}

// Load returns the number of live tasks: exact when every task is counted
// in bounded; otherwise the sum of the shards' counts and of the spawns
// from outside, read one after the other (so it may be off by the tasks
// that moved meanwhile, and is never reported below 0).
func (c *liveCounter) Load() int64 {
	n := c.bounded.Load()
	for i := range c.shards {
		n += c.shards[i].n.Load() - c.shards[i].doneRemote.Load()
	}
	if c.remote != nil {
		n += int64(c.remote.Load())
	}
	return max(n, 0)
}

// ownedShard is one list.
type ownedShard struct {
	_  pad
	mu sync.Mutex
	// head is the first task, guarded by mu.
	head *taskBase
	// n counts the live tasks of this shard that liveCounter.bounded does
	// not: raised at their spawn, lowered at their finish, by whichever
	// goroutine does either.
	n atomic.Int64
	// doneRemote counts the tasks spawned from outside the workers
	// (countedRemote) that finished here: raised by the finish of such a
	// task on this shard's worker (or, off the workers, in the task's
	// shard).
	doneRemote atomic.Int64
	// closed is set by the shutdown sweep, guarded by mu; no task is linked
	// afterwards.
	closed bool
	// recycled holds up to recycleSlots finished tasks spawned without a
	// handle (*detachedTask of any type, nil for a free slot), kept for a
	// later spawn of the same type (see Scheduler.recycle). Shard i <
	// Config.Workers is worker i's own: its recycled slots are owned by
	// that worker's goroutine, and never touched by anyone else (not even
	// under mu).
	recycled [recycleSlots]spare
	// evict is the slot the next recycle replaces when all are taken, so
	// that tasks of a type no longer spawned do not hold the slots for
	// ever. Owned like recycled.
	evict uint8
}

// recycleSlots is the number of finished tasks a worker keeps for reuse:
// enough for the few task types that a spawn-heavy task alternates
// between (a chain, a ping and its pong), few enough to scan.
const recycleSlots = 4

// init makes the shards: a power of two, at least 4 per worker. remote is
// the scheduler's count of spawns from outside the workers, in which such
// tasks are counted as live, or nil when every task is counted in bounded.
func (o *ownedTasks) init(workers int, remote *atomic.Uint64) {
	n := 8
	for n < 4*workers {
		n *= 2
	}
	o.shards = make([]ownedShard, n)
	o.mask = uint32(n - 1)
	o.live.shards = o.shards
	o.live.remote = remote
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

// count makes t a live task of shard i: counted in live.bounded if bounded
// (the scheduler has a Config.MaxLiveTasks; reserved says reserve already
// counted it), in live.remote if remote (a spawn from outside the workers:
// start raises it), in the shard's n otherwise. Called by the spawn, before
// t is shared.
func (o *ownedTasks) count(t *taskBase, i uint32, bounded, reserved, remote bool) {
	t.shard = i & o.mask
	switch {
	case bounded:
		if !reserved {
			o.live.bounded.Add(1)
		}
		t.counted = countedBounded
	case remote:
		t.counted = countedRemote
	default:
		o.shards[t.shard].n.Add(1)
		t.counted = countedInShard
	}
}

// uncount undoes count, once; it does nothing for a task not counted.
// Called by the task's finish, with the index of the finishing worker (-1
// off the workers), or by a TrySpawn that gives t up.
func (o *ownedTasks) uncount(t *taskBase, worker int) {
	switch t.counted {
	case countedBounded:
		o.live.bounded.Add(-1)
	case countedInShard:
		o.shards[t.shard].n.Add(-1)
	case countedRemote:
		i := t.shard
		if worker >= 0 {
			i = uint32(worker) & o.mask
		}
		o.shards[i].doneRemote.Add(1)
	}
	t.counted = notCounted
}

// link links t into shard i, the shard of the worker polling it, and
// reports true, or reports false if the list is closed. A task counted in
// another shard (spawned from outside the workers, or by another worker)
// moves there first, so that the lock its link and its finish take is
// this worker's own, whose cache line no spawner from elsewhere touches.
// It is called only from a worker's poll, and the shutdown sweep closes
// the list only after the workers exited, so it succeeds.
func (o *ownedTasks) link(t *taskBase, i uint32) bool {
	if i &= o.mask; t.shard != i {
		o.rehome(t, i)
	}
	sh := &o.shards[t.shard]
	sh.mu.Lock()
	if sh.closed {
		sh.mu.Unlock()
		return false
	}
	t.next = sh.head
	if sh.head != nil {
		sh.head.prev = t
	}
	sh.head = t
	t.linked = true
	sh.mu.Unlock()
	return true
}

// rehome moves the unlinked task t to shard i, with its count if the
// shard counts it: raised in i before it is lowered in the old one, so that
// Load never misses t. Called only by the owner of t before its link (shard
// is then read only by t's owners: its link, its finish).
func (o *ownedTasks) rehome(t *taskBase, i uint32) {
	if t.counted == countedInShard { // a remote task's count is not in a shard
		o.shards[i].n.Add(1)
		o.shards[t.shard].n.Add(-1)
	}
	t.shard = i
}

// remove unlinks t if it is linked, and uncounts it: the finish of a task,
// on worker (-1 off the workers). Called by the party that completed t. Reading linked without the lock is
// safe there: only link (on the worker polling t, before the transition
// that hands t to its next poller) and the shutdown sweep (after the
// workers exited, on the goroutine that then finishes t) write it, and
// both happen before this finish.
func (o *ownedTasks) remove(t *taskBase, worker int) {
	if t.linked {
		sh := &o.shards[t.shard]
		sh.mu.Lock()
		if t.linked {
			sh.unlink(t)
		}
		sh.mu.Unlock()
	}
	o.uncount(t, worker)
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

// closeAndPop closes every shard to links and then hands each task still
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
			f(t) // its finish uncounts it
		}
	}
}
