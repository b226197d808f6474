package scheduler

import (
	"context"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/header"
)

// This file gives tasks their identity: ids, names, spawn sites, parents,
// the per-poll bookkeeping that Dump reads, and the profiler's labels and
// the tracer's tasks around polls. See the package doc, "Task identity".

// idBlock is how many ids a worker reserves at once from Scheduler.ids,
// so that a spawn on a worker pays no shared atomic.
const idBlock = 256

// spawnPCs is how many return addresses a spawn site keeps: enough to get
// past the spawn functions of this package and the runtime's to the
// caller's frame (see spawnSite).
const spawnPCs = 6

// taskExt is the side record of a task that carries more than its id: a
// name, a spawn site, the profiler's labels, the tracer's task, the poll
// time. A task has none until one of them is wanted. name and pcs are
// written before the record is published (taskBase.ext's atomic store)
// and never after; the rest as each field says.
type taskExt struct {
	name string
	// shared says the record is a TaskName's, which many tasks point to:
	// read-only; extOrNew replaces it with a private copy before anything
	// is written. Immutable.
	shared bool
	// pcs are the return addresses of the spawn (Config.SpawnSites), zero
	// when not recorded.
	pcs [spawnPCs]uintptr
	// pollNanos is the total duration of the task's polls
	// (Config.PollTiming). Added to by the polling worker, loaded by Dump.
	pollNanos atomic.Int64
	// wokenInPoll counts the polls during which the task was woken (by
	// itself, most often: a busy loop). Added to by the polling worker,
	// loaded by Dump.
	wokenInPoll atomic.Uint64
	// scheduledAt is when a wake last scheduled the task (s.now), 0 once
	// its next poll took it (Config.PollTiming): stored by the waker's
	// scheduling (noteScheduled), swapped to 0 by the polling worker.
	scheduledAt atomic.Int64
	// labels are the task's pprof labels (Config.ProfileLabels), made at
	// its first labelled poll. Owned by the worker polling the task.
	labels context.Context
	// traceCtx and traceTask are the execution tracer's task, made at the
	// task's first poll while the tracer runs, ended by its finish. Owned
	// by the worker polling the task, then by the party finishing it.
	traceCtx  context.Context
	traceTask *trace.Task
}

// taskOf returns the task whose header is h. Every Header of a Scheduler
// is the first field of a taskBase (assertHeaderFirst), so the conversion
// only changes the pointer's type, not the object it points into.
func taskOf(h *header.Header) *taskBase { return (*taskBase)(unsafe.Pointer(h)) }

// assertHeaderFirst fails to compile if Header is not taskBase's first
// field, which taskOf relies on.
var _ [0]struct{} = [unsafe.Offsetof(taskBase{}.Header)]struct{}{}

// newID returns a new task id: from worker w's block, refilled from ids
// when spent, or, for a nil w (a spawn from outside), from ids directly.
// Called on w's goroutine.
func (s *Scheduler) newID(w *worker) uint64 {
	if w == nil {
		return s.ids.Add(1) // ids: shared with every block reservation
	}
	if w.nextID == w.endID {
		end := s.ids.Add(idBlock) // reserves (end-idBlock, end]
		w.nextID, w.endID = end-idBlock, end
	}
	w.nextID++
	return w.nextID
}

// now is the scheduler's clock: nanoseconds since New, from the monotonic
// clock.
func (s *Scheduler) now() int64 { return int64(time.Since(s.epoch)) }

// setClock sets worker w's coarse clock (the time its tick started, or its
// poll with Config.PollTiming): spawns and polls on w read it instead of
// the system clock. Called on w's goroutine.
func (w *worker) setClock(t time.Time) {
	// At least 1: a birth of 0 means "not known yet" (a spawn from
	// outside), and a clock too coarse to have moved since New (Windows')
	// would read 0 at the first tick.
	w.clock = max(int64(t.Sub(w.s.epoch)), 1)
	w.clockMs = uint32(w.clock / int64(time.Millisecond))
}

// identify gives the new task b its id, parent and birth time, and its
// side record when it has a name or the spawn sites are recorded; fresh
// says b is newly allocated (its atomics are zero), else it is a recycled
// task whose bookkeeping is reset. The spawn site is the caller's frame
// past this package's and the runtime's (spawnSite). Called by the spawn,
// before b is shared, when identifyPlain (the common spawn) declined.
func (s *Scheduler) identify(w *worker, cx *future.Context, b *taskBase, name string, fresh bool) {
	if !fresh {
		// A recycled task nobody else reaches: Dump's last loads were made
		// under the owned shard's mutex, which the task's unlink took
		// afterwards, and its next loads follow the link, which takes it
		// again (see clearOwned).
		clearOwned(&b.run)
		b.wait.Clear()
		if b.ext.Load() != nil {
			b.ext.Store(nil)
		}
	}
	if s.cfg.NoTaskIdentity {
		if name != "" {
			b.ext.Store(&taskExt{name: name})
		}
		return
	}
	b.id = s.newID(w)
	if w != nil {
		b.born, b.parent = w.clock, cx.TaskID() // see identify
	} else {
		// A spawn from outside reads no clock (about as long as the rest
		// of the spawn): the first poll sets born (notePollFirst).
		b.born = 0
	}
	if name != "" || s.cfg.SpawnSites {
		x := &taskExt{name: name}
		if s.cfg.SpawnSites {
			runtime.Callers(3, x.pcs[:])
		}
		b.ext.Store(x)
	}
}

// identifyPlain is identify for the common spawn, inlined in the spawn
// functions: a new unnamed task b spawned by a poll on worker w, with ids
// left in w's block and no side record to make (Config.SpawnSites off).
// It reports false, doing nothing, for any other spawn, which calls
// identify. Called by the spawn, before b is shared, on w's goroutine (w
// may be nil).
func (w *worker) identifyPlain(cx *future.Context, b *taskBase) bool {
	if w == nil || !w.plainSpawn || w.nextID == w.endID {
		return false
	}
	// cx is a poll of this scheduler's worker w (localWorker), which gave
	// it the polled task's id (runTask), 0 outside a task's poll.
	w.nextID++
	b.id, b.parent, b.born = w.nextID, cx.TaskID(), w.clock
	return true
}

// notePoll stamps the poll of t by worker w with w's clock, and carries
// the header's count of polls (low, 16 bits, counted by the transition to
// Running) into run when it wrapped. It returns the poll's sequence number
// for the WaitSlot. Called by the worker that moved t to Running. The
// store, whose fence costs a few nanoseconds, is skipped when run would
// not change: in most polls, since w's clock moves once a tick. A first
// poll goes through notePollFirst (or runTask's inlined copy of it),
// which also sets the birth of a task spawned from outside.
func (t *taskBase) notePoll(w *worker, low uint16) uint8 {
	r := t.run.Load() // run: only this worker writes it now
	high := uint16(r)
	if low == 0 {
		high++ // the header's count wrapped
	}
	if next := uint64(w.clockMs)<<32 | r&runSiteMask | uint64(high); next != r {
		t.run.Store(next) // run: loaded by Dump
	}
	return uint8(low)
}

// notePollFirst is notePoll for a poll that may be a first poll (low is
// 1), or that follows one, whose task w.firstPoll still publishes: a first
// poll's stamp is left to pending, and its task published; any other
// poll clears what the last first poll published. runTask calls it
// instead of notePoll, which stays small enough to be inlined. Called by
// the worker that moved t to Running.
func (t *taskBase) notePollFirst(w *worker, low uint16) uint8 {
	if low != 1 || t.run.Load() != 0 { // run: only this worker writes it now
		w.firstPoll.clear() // not a first poll: the last one's task is stale
		return t.notePoll(w, low)
	}
	if t.born == 0 {
		// A task spawned from outside, whose spawn read no clock: born
		// at its first poll, before the link (ownedTasks.link) that
		// publishes it to Dump.
		t.born = w.clock
	}
	// Published for the snapshots (firstpoll.go); its stamp is stored by
	// pending, if t is linked.
	fp := &w.firstPoll
	if x := t.ext.Load(); x != nil || fp.hasExt { // ext: stored by t's owner, which is this worker now
		fp.publishExt(x)
	}
	fp.publishID(t.id)
	return 1
}

// storeFirstRun stores in run the stamp of the first poll in progress
// (the worker's clock, which does not move during a poll), with the await
// site the poll recorded meanwhile, before the link that publishes t to
// Dump. A plain store: until the link, no other goroutine reads t's run
// (t is in no queue, and listed nowhere; see clearOwned for the reads of
// a recycled task's last life). Called by the worker polling t, at the
// end of a poll that did not complete, when t is not linked.
func (t *taskBase) storeFirstRun(cx *future.Context) {
	w := t.s.localWorker(cx)
	if w == nil || w.firstPoll.id != t.id || t.id == 0 {
		return // no identity, or not t's first poll (notePollFirst)
	}
	r := t.run.Load() // run: only this worker writes it now
	storeOwned(&t.run, uint64(w.clockMs)<<32|r&runSiteMask)
}

// runSiteMask is the await site's place in taskBase.run.
const runSiteMask = 0xffff << 16

// RecordWait records wt, the wait of the task that w polls (w.cx's), in
// its WaitSlot: the worker is its Context's future.WaitRecorder, set once
// (newWorker), so that a poll stores no pointer for it. Called on w's
// goroutine, by the leaf futures of the poll (future.Context.Waiting).
func (w *worker) RecordWait(wt future.Wait) {
	if h, ok := w.cx.Task().(*header.Header); ok {
		taskOf(h).wait.RecordWait(wt) // wait: loaded by Dump
	}
}

// RecordSite records s, the await site at which the async function of the
// task that w polls suspended, as RecordWait records a wait: the worker is
// its Context's future.SiteRecorder. Called on w's goroutine, by the
// generated code of the poll (future.Context.Suspended).
func (w *worker) RecordSite(s future.AwaitSite) {
	if h, ok := w.cx.Task().(*header.Header); ok {
		taskOf(h).recordSite(s)
	}
}

// recordSite records the await site at which the task's async function
// suspended in the poll in progress (future.Context.Suspended), in run,
// with a store only when it changes. Called by the worker polling the
// task (worker.RecordSite).
func (t *taskBase) recordSite(s future.AwaitSite) {
	site := uint64(s)
	if site > 0xffff {
		site = 0 // past run's 16 bits: not shown
	}
	r := t.run.Load() // run: only this worker writes it now
	if next := r&^runSiteMask | site<<16; next != r {
		t.run.Store(next) // run: loaded by Dump
	}
}

// extOrNew returns t's side record, making it if t has none. Called by the
// party that owns t (the worker polling it).
func (t *taskBase) extOrNew() *taskExt {
	old := t.ext.Load()
	if old != nil && !old.shared {
		return old
	}
	x := new(taskExt)
	if old != nil {
		x.name = old.name // a TaskName's record: the task's own copy
	}
	t.ext.Store(x) // ext: publishes the record to Dump
	return x
}

// TaskName is a name that many tasks share, made once (NewTaskName): a task
// spawned with it (SpawnValueDetachedNamed) carries the name at no
// allocation, where Named gives each task a record of its own. A server
// names its connection tasks this way.
type TaskName struct {
	x taskExt
}

// NewTaskName returns a name for tasks to share.
func NewTaskName(name string) *TaskName { return &TaskName{x: taskExt{name: name, shared: true}} }

// nameShared gives b the shared name n, after identify: b points to n's
// record, unless b has a record of its own (spawn sites), which then takes
// the name. Called by the spawn before b is shared.
func nameShared(b *taskBase, n *TaskName) {
	if n == nil {
		return
	}
	if x := b.ext.Load(); x != nil {
		x.name = n.x.name // b's own record, not yet shared with anyone
		return
	}
	b.ext.Store(&n.x)
}

// observing reports whether a poll on w needs pollObserved: a Config
// switch is on, or the execution tracer runs and polls are traced.
func (w *worker) observing() bool {
	return w.observe || (w.traceable && trace.IsEnabled())
}

// pollObserved polls h's task as runTask does, measuring the poll
// (Config.PollTiming), under the task's pprof labels
// (Config.ProfileLabels), and as a region of the tracer's task of t while
// the tracer runs. Called by the worker that moved h to Running.
func (w *worker) pollObserved(h *header.Header, t *taskBase) bool {
	cfg := &w.s.cfg
	var start time.Time
	// t's id and side record (its name) before the poll, for a slow poll:
	// a task that finishes in the poll may be reused right after it.
	var id uint64
	var x *taskExt
	if cfg.PollTiming {
		start = time.Now()
		w.setClock(start)
		id, x = t.id, t.ext.Load()
		w.noteDelay(x, start)
		// The poll in progress, for LongPolls and Tasks: its start last,
		// which tells this poll's record from the last one's.
		w.pollID.Store(id)
		w.pollExt.Store(x)
		w.pollAt.Store(w.clock)
	}
	if cfg.ProfileLabels {
		pprof.SetGoroutineLabels(t.labels())
	}
	var region *trace.Region
	if !cfg.NoTraceRegions && trace.IsEnabled() {
		x := t.extOrNew()
		if x.traceTask == nil {
			x.traceCtx, x.traceTask = trace.NewTask(context.Background(), traceTaskType(x.name))
			trace.Log(x.traceCtx, "blitz.task.id", strconv.FormatUint(t.id, 10))
		}
		w.tracing = t
		region = trace.StartRegion(x.traceCtx, "blitz.poll")
	}
	done := h.Task().Poll(&w.cx)
	if region != nil {
		region.End()
		w.tracing = nil
		if w.endTrace != nil {
			w.endTrace.End() // the task finished in this poll
			w.endTrace = nil
		}
	}
	if cfg.ProfileLabels {
		pprof.SetGoroutineLabels(w.labels)
	}
	if cfg.PollTiming {
		w.pollAt.Store(-1)
		d := time.Since(start)
		w.timedPoll(id, x, d)
		if !done {
			// Only while t lives: a finished task may be reused.
			t.extOrNew().pollNanos.Add(int64(d)) // pollNanos: loaded by Dump
		}
	}
	return done
}

// traceTaskType is the execution tracer's task type of a task named name.
func traceTaskType(name string) string {
	if name == "" {
		return "blitz.task"
	}
	return name
}

// labels returns t's pprof label set, made at its first labelled poll
// and kept in its side record. Called by the worker polling t.
func (t *taskBase) labels() context.Context {
	x := t.extOrNew()
	if x.labels == nil {
		id := strconv.FormatUint(t.id, 10)
		if x.name != "" {
			x.labels = pprof.WithLabels(context.Background(), pprof.Labels("blitz.task", x.name, "blitz.task.id", id))
		} else {
			x.labels = pprof.WithLabels(context.Background(), pprof.Labels("blitz.task.id", id))
		}
	}
	return x.labels
}

// endTrace ends the tracer's task of t, if it has one: at once, or, when
// t finishes inside the traced poll of worker w, after that poll's region
// ends (pollObserved). Called by the party finishing t.
func (t *taskBase) endTrace(w *worker) {
	x := t.ext.Load()
	if x == nil || x.traceTask == nil {
		return
	}
	tk := x.traceTask
	x.traceTask, x.traceCtx = nil, nil
	if w != nil && w.tracing == t {
		w.endTrace = tk
		return
	}
	tk.End()
}

// named is the future Named returns: f, and the name its spawn gives the
// task.
type named[T any] struct {
	name string
	f    future.Future[T]
}

// Named returns f carrying a name for its task: Spawn and TrySpawn (and
// the runtime's Spawn, SpawnOn and TrySpawnOn) unwrap it, run f itself as
// the task's future, and give the task that name, which Dump, the
// JoinHandle's Name, the pprof labels and the execution tracer show. Any
// other use polls and cancels f through it. For a task spawned by value
// (SpawnValue, SpawnValueDetached), the task names itself with SetName.
func Named[T any](name string, f future.Future[T]) future.Future[T] {
	return &named[T]{name: name, f: f}
}

// Poll polls the wrapped future.
func (n *named[T]) Poll(cx *future.Context) (T, bool) { return n.f.Poll(cx) }

// Cancel cancels the wrapped future.
func (n *named[T]) Cancel() { future.Cancel(n.f) }

// unname returns the future and the name of a Named future, f itself and
// "" for any other.
func unname[T any](f future.Future[T]) (future.Future[T], string) {
	if n, ok := f.(*named[T]); ok && n.f != nil {
		return n.f, n.name
	}
	return f, ""
}

// SetName names the task being polled with cx, a poll of one of s's
// workers (it reports false, doing nothing, for any other Context): for a
// task spawned by value, which Named cannot wrap, or to rename a task as
// it goes. Called by the task's poll.
func (s *Scheduler) SetName(cx *future.Context, name string) bool {
	h, ok := cx.Task().(*header.Header)
	if !ok || s.localWorker(cx) == nil || h.Scheduler() != header.Scheduler(s) {
		return false
	}
	t := taskOf(h)
	x := &taskExt{name: name}
	if old := t.ext.Load(); old != nil {
		x.pcs = old.pcs
		x.pollNanos.Store(old.pollNanos.Load())
		x.traceCtx, x.traceTask = old.traceCtx, old.traceTask
		// labels are remade with the new name at the next labelled poll.
	}
	t.ext.Store(x) // ext: publishes the new record to Dump
	return true
}

// TaskID returns the id of the task being polled with cx, if it is one
// of s's: ok is false for any other Context.
func (s *Scheduler) TaskID(cx *future.Context) (id uint64, ok bool) {
	h, ok := cx.Task().(*header.Header)
	if !ok || h.Scheduler() != header.Scheduler(s) {
		return 0, false
	}
	return taskOf(h).id, true
}

// ID returns the task's id: unique among the tasks of its scheduler, never
// 0 (0 with Config.NoTaskIdentity).
func (j JoinHandle[T]) ID() uint64 { return j.task().id }

// Name returns the task's name, "" when it has none.
func (j JoinHandle[T]) Name() string {
	if x := j.task().ext.Load(); x != nil {
		return x.name
	}
	return ""
}

// storeOwned stores v in the atomic word p with a plain store, under the
// rule of clearOwned: p is a word of a task that no other goroutine reaches
// until what publishes the task (the link's mutex).
func storeOwned(p *atomic.Uint64, v uint64) { *(*uint64)(unsafe.Pointer(p)) = v }

// clearOwned zeroes the atomic word p with a plain store, which skips the
// fence of an atomic store (a locked exchange on amd64). Only for a word of
// a task that no other goroutine can reach (a recycled task, before the
// spawn reusing it shares it): the other goroutines' last loads of p happen
// before the call, and their next loads after what publishes the task.
func clearOwned(p *atomic.Uint64) { *(*uint64)(unsafe.Pointer(p)) = 0 }
