package scheduler

import "sync/atomic"

// This file publishes the tasks in a worker's LIFO that were never
// polled, which no other goroutine can otherwise list: the LIFO is the
// worker's alone, and a worker held by a long poll (a task that blocks
// after spawning) does not answer a snapshot. See the package doc,
// "Listing queued tasks".

// lifoPub is what a worker publishes of the tasks never polled in its
// LIFO, entry by entry: values, never the task, so that a snapshot reads
// nothing of a task that may meanwhile run, finish and be reused.
//
// Entry i mirrors the LIFO's entry i: its id is the id of the task there
// if that task was spawned into it (so never polled) with task identity
// on, and 0 otherwise; every entry at or past the LIFO's length is 0. The
// worker stores an entry's parent and side record before its id, and
// clears the id before the side record (the parent is left); a snapshot
// loads the id before and after the other two and keeps them only if it
// read the same id twice (ids are never reused, so the same id means the
// same publication).
type lifoPub struct {
	_ pad
	// ids, parents and exts are the entries. Stored by the worker, loaded
	// by the snapshots (read).
	ids     [LIFOStack]atomic.Uint64
	parents [LIFOStack]atomic.Uint64
	exts    [LIFOStack]atomic.Pointer[taskExt]
	// set and hasExt are which ids and exts are not zero (hasExt only
	// where set). Owned by the worker, so that it clears only what it
	// published.
	set    [LIFOStack]bool
	hasExt [LIFOStack]bool
	_      pad
}

// publish publishes the task t, just spawned into LIFO entry i. Called on
// the worker's goroutine.
func (p *lifoPub) publish(i int, t *taskBase) {
	p.parents[i].Store(t.parent)     // parents, exts: before ids, for the snapshots that load ids around them
	if x := t.ext.Load(); x != nil { // entry i is clear (past the LIFO's length): no record to overwrite with nil
		p.exts[i].Store(x)
		p.hasExt[i] = true
	}
	p.ids[i].Store(t.id) // ids: loaded by the snapshots
	p.set[i] = true
}

// clear clears entry i, whose task left the LIFO: its id, and its side
// record, which the entry would otherwise keep reachable after the task
// finished. A plain load when it holds nothing, which is the common case:
// a woken task, or no identity. Called on the worker's goroutine.
func (p *lifoPub) clear(i int) {
	if p.set[i] {
		p.ids[i].Store(0) // ids: loaded by the snapshots, before the record
		p.set[i] = false
	}
	if p.hasExt[i] {
		p.exts[i].Store(nil)
		p.hasExt[i] = false
	}
}

// clearAll clears the first n entries. Called on the worker's goroutine.
func (p *lifoPub) clearAll(n int) {
	for i := range n {
		p.clear(i)
	}
}

// shiftDown follows the LIFO's eviction of its entry 0, when entries 1 to
// n-1 move down one: entry 0 is cleared, the others move, and entry n-1
// is cleared. Called on the worker's goroutine.
func (p *lifoPub) shiftDown(n int) {
	p.clear(0)
	for i := 1; i < n; i++ {
		if !p.set[i] {
			continue
		}
		// Published at i-1 before it is cleared at i: a snapshot may list
		// the task twice meanwhile, which it sorts out (ids are unique),
		// but never miss it.
		p.parents[i-1].Store(p.parents[i].Load())
		if p.hasExt[i] { // entry i-1 is clear: cleared above, or moved on
			p.exts[i-1].Store(p.exts[i].Load())
			p.hasExt[i-1] = true
		}
		p.ids[i-1].Store(p.ids[i].Load())
		p.set[i-1] = true
		p.clear(i)
	}
}

// read returns entry i: the id of a task never polled in the LIFO (0 for
// none), its parent and its side record. It returns 0 when the worker
// changed the entry while it was read. Any goroutine may call it.
func (p *lifoPub) read(i int) (id, parent uint64, x *taskExt) {
	id = p.ids[i].Load() // ids: stored by the worker after parents and exts
	if id == 0 {
		return 0, 0, nil
	}
	parent, x = p.parents[i].Load(), p.exts[i].Load()
	if p.ids[i].Load() != id {
		return 0, 0, nil // the worker moved on
	}
	return id, parent, x
}
