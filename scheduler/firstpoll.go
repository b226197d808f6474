package scheduler

import "sync/atomic"

// This file publishes the task in its first poll on a worker, which no
// other goroutine can otherwise list before the poll returns: a snapshot
// reads it when the worker does not answer its request, being in a long
// poll (a handler that blocks before its first await). See the package
// doc, "Listing queued tasks".

// firstPollPub is what a worker publishes of the task in its first poll:
// values, never the task itself, so that a snapshot reads nothing of a
// task that may meanwhile finish and be reused.
//
// The worker stores the task's id at the start of each first poll (one
// atomic store, on its own cache line, per spawned task) and clears it
// only at the start of the next poll that is not a first poll, or at the
// end of its tick: a snapshot reads it only from a worker in a poll that
// began before the snapshot asked, and then it is that poll's task if the
// poll is a first poll, and 0 otherwise.
type firstPollPub struct {
	// pubID is the task's id, 0 for none. Stored by the worker (after
	// pubExt when the task has a side record, and with a 0 in between when
	// pubExt changes), loaded by the snapshots before and after pubExt,
	// which tells them the two are the same task's.
	pubID atomic.Uint64
	// pubExt is the task's side record (its name and spawn site), nil for
	// none. Stored by the worker, loaded by the snapshots between two loads
	// of pubID.
	pubExt atomic.Pointer[taskExt]
	// id is the id published, and hasExt whether a side record is. Owned
	// by the worker.
	id     uint64
	hasExt bool
}

// publishExt publishes x, the side record of the task that publishID
// publishes next, when it or the last one published has one (hasExt).
// Called on the worker's goroutine, with publishID, at the start of a
// first poll (taskBase.notePollFirst).
func (fp *firstPollPub) publishExt(x *taskExt) {
	if fp.id != 0 {
		fp.pubID.Store(0) // pubID: before the record changes, for the snapshots that load it around it
	}
	fp.pubExt.Store(x)
	fp.hasExt = x != nil
}

// publishID publishes id, the id of the task that the worker is about to
// poll for the first time, after its side record (publishExt). Called on
// the worker's goroutine.
func (fp *firstPollPub) publishID(id uint64) {
	fp.pubID.Store(id) // pubID: loaded by the snapshots (read)
	fp.id = id
}

// clear clears what publishExt and publishID published. Called on the worker's goroutine,
// at the start of a poll that is not a first poll and at the end of a
// tick, when id is not 0.
func (fp *firstPollPub) clear() {
	fp.pubID.Store(0) // pubID: before pubExt, for the snapshots that load it around it
	if fp.hasExt {
		fp.pubExt.Store(nil)
		fp.hasExt = false
	}
	fp.id = 0
}

// read returns the task published: its id (0 for none) and side record.
// It returns 0 when the worker changed it while it was read. Any
// goroutine may call it.
func (fp *firstPollPub) read() (id uint64, x *taskExt) {
	id = fp.pubID.Load() // pubID: stored by the worker
	if id == 0 {
		return 0, nil
	}
	x = fp.pubExt.Load() // pubExt: stored by the worker before pubID, and after a 0 when it changes
	if fp.pubID.Load() != id {
		return 0, nil // the worker moved on
	}
	return id, x
}
