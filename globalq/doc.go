// Package globalq provides the global injection queue of blitz for Go: the
// queue that receives tasks spawned from outside the workers and the
// overflow of full worker-local queues, and from which idle workers take
// their fair share in batches: a mutex-protected intrusive list with an
// atomic length for lock-free emptiness checks and a fair-share batch pop
// ([Queue]), and, as a measured alternative, a sharded variant ([Sharded]).
// The package imports only the standard library.
//
// Comments elsewhere in the package cite the sections below by name.
//
// # Elements and links
//
// The queues are intrusive and generic: an element type E carries its own
// link field, a *E, and its pointer type provides the link's address through
// [Node]:
//
//	type Task struct{ next *Task; ... }
//	func (t *Task) QueueNext() **Task { return &t.next }
//
//	q := globalq.New[Task]() // a *Queue[Task, *Task]
//
// So a push allocates nothing, links are typed pointers the garbage collector
// sees (no uintptr), and the task header package need not import this one: it
// only declares a field and a method. An element is in at most one queue at a
// time. From the moment a push accepts it until a pop, PopBatch or Drain hands
// it out, its link belongs to the queue and is read and written only under
// that queue's lock; whoever holds an element outside any queue finds its
// link nil, because every pop clears it.
//
// # The queue
//
// [Queue] is a singly linked FIFO with head and tail pointers under one
// sync.Mutex. Every operation takes the lock once, whatever the number of
// elements: [Queue.PushSlice] and [Queue.PushOverflow] link the batch into a
// chain before locking (the elements are still the caller's) and splice it
// in with two pointer writes; [Queue.PopBatch] unlinks a run from the head.
// [Queue.PushOverflow] has the signature of wsqueue.Overflow[E]'s one method,
// so a *Queue is a worker-local queue's overflow without an adapter and
// without either package importing the other. The zero Queue is usable.
//
// # Length
//
// The length is an atomic counter written only under the lock, after the
// links are in place (push) or undone (pop). Hence, under the lock, it is
// exact; without it, [Queue.Len] and [Queue.IsEmpty] read a value the queue
// really held at some instant during the call, never negative. [Queue.Pop]
// and [Queue.PopBatch] return at once, without locking, when it reads 0:
// an idle worker polling an empty global queue touches one cache line and
// takes no lock. The check is safe because a push that happened before the
// pop (in the happens-before sense: the pusher's Add precedes, through
// whatever synchronised the two goroutines, the popper's Load) is seen, and a
// concurrent one may be missed, as it could be by a locked check too.
//
// # Batch pop
//
// A worker that finds its own queue empty takes a fair share of the global
// queue in one lock, so that one worker does not drain it while the others
// starve:
//
//	n = min(len(dst), MaxBatch, max(MinBatch, Len/workers), Len)
//
// with MinBatch 4, MaxBatch 64, workers below 1 counted as 1, and Len read
// under the lock. For example Len 5 with 2 workers gives 4, Len 3 gives 3,
// Len 1000 with 100 workers gives 10, and len(dst) caps everything.
//
// # Close
//
// [Queue.Close] marks the queue closed. Afterwards [Queue.Push] and
// [Queue.PushSlice] report false and link nothing: a refused element stays
// the caller's, who must run, cancel or drop it. The answer is a bool, not an
// error, because it is on the spawn path and the only failure. Elements
// already queued stay: Pop, PopBatch and [Queue.Drain] keep handing them out,
// so nothing accepted is lost. [Queue.PushOverflow] still appends after Close:
// its elements are work the runtime already accepted, moving from a worker's
// local queue, and wsqueue's Overflow interface gives no way to hand them
// back; the shutdown protocol is to Close, stop the workers (whose local
// queues may still overflow here), then Drain.
//
// # Misuse
//
// Pushing nil panics. Pushing an element whose link is set panics: such an
// element is in a queue (not the tail), or was linked by hand. The same check
// catches an element that appears twice in one PushSlice or PushOverflow,
// since linking the chain sets the first copy's link. What cannot be told
// cheaply is an element that is the tail of some queue, whose link is nil
// like a free element's: the pushes compare the element, under the lock,
// with the tail of the queue (or shard) they push to and panic on a match,
// but the tail of another queue or shard goes undetected and corrupts both.
// A panicking push links nothing and restores the links it set. The panic
// values are strings starting "globalq: ".
//
// # Ordering
//
// [Queue] is FIFO: elements come out in the order their pushes took the lock,
// a slice's elements consecutively and in slice order. [Sharded] is FIFO per
// shard only: a PushSlice or PushOverflow batch goes to one shard and stays
// in order, but two pushes, even from one goroutine, land on different
// shards and may come out in either order.
//
// # The sharded queue
//
// [Sharded] is N mutex queues (8 by default), each on its own cache lines,
// pushes spread over them, pops scanning all of them from a rotating start.
// Two questions decide whether it pays: how pushes pick a shard, and whether
// the O(shards) pop scan is acceptable.
//
// A pop scans every shard, so a push never has to find its element's shard
// again, and the shard need not follow from the element. Sharded therefore
// does not hash element addresses (which would need package unsafe); it uses
// a round-robin counter per push (one atomic add, which spreads perfectly but
// makes every pusher write one shared cache line) and offers
// [Sharded.PushHint] for a caller with a stable number such as its worker id,
// which touches no shared counter. Hashing a task's address is what the blitz
// scheduler's owned-task list and the runtime's timer wheels do, because they
// must find an element's shard again to remove it: the address is converted
// to a uintptr only to be hashed, never turned back into a pointer, so the
// garbage collector still sees every pointer, and Go's heap objects do not
// move today, though the language does not promise a stable address. A caller
// that wants such a hash here can pass it to PushHint.
//
// The pop scan is O(shards), but each look at an empty shard is one atomic
// load of its length, no lock, so a scan of 8 empty shards costs 8 loads of
// lines that are shared-clean while nobody pushes. A non-empty bitmap would
// turn the scan into one load plus a find-first-set, but every push to an
// empty shard and every pop that empties one would then also write the
// bitmap, one more shared line per operation: the contention sharding exists
// to remove. At 8 shards the scan is the cheaper choice; the measurements
// below show sharding loses anyway on the 2-core development machine.
//
// # Measurements
//
// [New] returns the mutex [Queue]: it was faster under contention. Figures
// from two runs of go test -bench=. -benchtime=200ms -count=3 on linux/amd64,
// 2 cores (AMD EPYC, GOMAXPROCS 2), Go 1.26.8; ranges over the 6 samples, ns
// per element pushed and popped, no allocations in any of them:
//
//	benchmark                   globalq   sharded (8)   chan
//	PushPop (1 goroutine)       17-25     20-33         27-41
//	Contended (4 goroutines)    37-52     59-65         31-39
//	Batch (128 in, PopBatch/2)  5.6-8     7-11          -
//
// Alone, the two overlap from run to run. Under contention the
// sharded queue was about 1.5 times slower: it adds the shared round-robin
// counters (an atomic add per push and per pop) and a scan that loads other
// shards' length lines, while with 2 cores at most 2 goroutines run at once,
// so the one lock of the mutex queue has little contention to spread.
// PushHint, which avoids the push counter, was not measured. Sharding may pay
// off with many cores; rerun BenchmarkContended there before changing the
// default. A buffered channel was faster at 4 goroutines on 2 cores, but it is
// bounded, cannot take a batch in one operation, and needs its own slot
// array instead of the task's link.
package globalq
