package scheduler

import (
	"sync"

	"github.com/blitz-go/blitz/future"
)

// Spawn starts f as a task of s and returns its JoinHandle. It is safe from
// any goroutine. cx says where the spawn comes from: the Context of a poll on
// one of s's workers puts the task in that worker's LIFO slot, to run next on
// the same worker (a spawn from inside a task); nil (or any other
// Context, such as another scheduler's) puts it on the global queue and wakes
// an idle worker.
//
// After shutdown began, f is not started: future.Cancel(f) is called and the
// handle is already resolved with ErrShutdown. A nil f starts nothing
// either: the handle is already resolved with ErrNilFuture (a misuse
// answered through the handle, which has room for an error, rather than
// with a panic).
func Spawn[T any](s *Scheduler, cx *future.Context, f future.Future[T]) JoinHandle[T] {
	if f == nil {
		return resolvedHandle[T](s, ErrNilFuture)
	}
	f, name := unname(f)
	return spawn(s, cx, f, name)
}

// SpawnValue is Spawn for a future held by value: f is copied into the
// task's own allocation and polled through its address, so that spawning
// allocates once, for the task and the future together, where Spawn stores
// the future in an interface (which allocates for a future that is not a
// pointer, and the caller usually allocated it already). The future's
// methods are those of *F: its Poll and, if it has one, its Cancel take a
// pointer receiver or a value one. The value type T is given, F and PF are
// inferred from f:
//
//	h := scheduler.SpawnValue[int](s, cx, countdown{left: 10})
//
// (Go does not infer T from the methods of *F.) As with Spawn, after
// shutdown began f is not started: its Cancel, if any, is called and the
// handle is already resolved with ErrShutdown. A future that must be
// reached from outside the task (a pointer kept or handed to someone else)
// is a pointer, for Spawn: SpawnValue holds a copy of f.
func SpawnValue[T any, F any, PF interface {
	*F
	future.Future[T]
}](s *Scheduler, cx *future.Context, f F) JoinHandle[T] {
	t := &valueTask[T, F, PF]{fut: f}
	t.s = s
	t.InitScheduled(t, true)
	return spawnCore(s, cx, &t.core, "")
}

// SpawnValueDetached is SpawnValue without a JoinHandle, as if it were
// detached at once: the task runs on unobserved, its value is dropped, and
// a panic is reported (Config.OnPanic, or the standard logger). After
// shutdown began f is not started: its Cancel, if any, is called. It
// reuses the memory of a finished task of the same type when there is one,
// instead of allocating: first from the spawning worker's own slots (a
// spawn from a task on one of s's workers, cx), then from s's spares of
// that type, which any goroutine may take from (see recycle). With no
// handle, nothing can tell the new task from the old one (a Waker of the
// old task that is still kept somewhere wakes the new one, a spurious
// wake, which futures tolerate).
func SpawnValueDetached[T any, F any, PF interface {
	*F
	future.Future[T]
}](s *Scheduler, cx *future.Context, f F) {
	SpawnValueDetachedNamed[T, F, PF](s, cx, f, nil)
}

// SpawnValueDetachedNamed is SpawnValueDetached for a task named name,
// which many tasks share (NewTaskName) at no allocation; nil names none.
func SpawnValueDetachedNamed[T any, F any, PF interface {
	*F
	future.Future[T]
}](s *Scheduler, cx *future.Context, f F, name *TaskName) {
	w := s.localWorker(cx)
	var t *detachedTask[T, F, PF]
	if w != nil {
		t = reuse[T, F, PF](&s.owned.shards[w.id])
	}
	if t == nil {
		t, _ = sparesOf[T, F, PF](s).Get().(*detachedTask[T, F, PF])
	}
	fresh := t == nil
	if !fresh {
		t.fut, t.dropped = f, false // linked and counted were reset by its finish
		t.ReinitScheduled(false)
	} else {
		t = &detachedTask[T, F, PF]{fut: f}
		t.s = s
		t.InitScheduled(t, false)
	}
	if !fresh || !w.identifyPlain(cx, &t.taskBase) {
		s.identify(w, cx, &t.taskBase, "", fresh)
	}
	nameShared(&t.taskBase, name)
	if !s.admit(w, &t.taskBase, false) || !s.start(w, &t.taskBase) {
		t.TransitionToShutdown()
		t.Abort(ErrShutdown)
	}
}

// reuse takes a recycled task of type detachedTask[T, F, PF] from worker
// shard sh's slots, or returns nil. Called only on that worker.
func reuse[T any, F any, PF interface {
	*F
	future.Future[T]
}](sh *ownedShard) *detachedTask[T, F, PF] {
	for i := range sh.recycled { // by index: ranging over the array copies it
		if t, ok := sh.recycled[i].(*detachedTask[T, F, PF]); ok {
			sh.recycled[i] = nil
			return t
		}
	}
	return nil
}

// sparesOf returns s's pool of finished tasks of type detachedTask[T, F, PF],
// made at the first call for the type. The key is the type's nil pointer,
// so one map holds the pools of every type; the type looked up last is
// kept in sparesHint, which spares a spawn-heavy program, whose spares are
// mostly of one type, the map's lookup.
func sparesOf[T any, F any, PF interface {
	*F
	future.Future[T]
}](s *Scheduler) *sync.Pool {
	key := any((*detachedTask[T, F, PF])(nil))
	if e := s.sparesHint.Load(); e != nil && e.key == key {
		return &e.pool
	}
	v, ok := s.spares.Load(key)
	if !ok {
		v, _ = s.spares.LoadOrStore(key, &sparesEntry{key: key})
	}
	e := v.(*sparesEntry)
	s.sparesHint.Store(e)
	return &e.pool
}

// sparesEntry is an entry of Scheduler.spares: the key, a type's nil
// *detachedTask, and its pool. key is immutable.
type sparesEntry struct {
	key  any
	pool sync.Pool
}

// spare is a finished task that can go to its scheduler's spares: the
// detachedTask of any type.
type spare interface{ toSpares() }

// recycle keeps t, a finished task spawned without a handle, in a slot of
// the finishing worker (cx's), for reuse by SpawnValueDetached. When every
// slot is taken, the task in the one evict points to moves to the
// scheduler's spares of its type (a sync.Pool, which the GC empties), and
// t takes its slot: so a worker keeps the few types it spawns most, while
// a burst of tasks spawned from elsewhere, which finish here, are reused
// by the next burst. It does nothing off the workers. Nothing references t
// but stale Wakers, and the worker's Context of its last poll, which the
// next poll resets; a task leaves the slots for the spares only at a later
// recycle, once this poll has long ended, so another goroutine reusing it
// cannot overlap with the worker's last use of it.
func (s *Scheduler) recycle(cx *future.Context, t spare) {
	w := s.localWorker(cx)
	if w == nil {
		return
	}
	sh := &s.owned.shards[w.id]
	for i := range sh.recycled {
		if sh.recycled[i] == nil {
			sh.recycled[i] = t
			return
		}
	}
	sh.recycled[sh.evict].toSpares()
	sh.recycled[sh.evict] = t
	sh.evict = (sh.evict + 1) % recycleSlots
}

// resolvedHandle returns the handle of a task that never runs, already
// finished with err.
func resolvedHandle[T any](s *Scheduler, err error) JoinHandle[T] {
	t := newTask[T](s, nil)
	s.identify(nil, nil, &t.taskBase, "", true)
	t.TransitionToShutdown() // claims the unscheduled task for the abort
	t.Abort(err)
	return JoinHandle[T]{t: &t.core}
}

// TrySpawn is Spawn with backpressure, and an exact bound: when
// Config.MaxLiveTasks is set and that many tasks are live, it returns
// ErrBackpressure and does not take f; after shutdown began it returns
// ErrShutdown, likewise without taking f (not even cancelling it). A nil f
// returns ErrNilFuture. See the package doc, "Backpressure".
func TrySpawn[T any](s *Scheduler, cx *future.Context, f future.Future[T]) (JoinHandle[T], error) {
	if f == nil {
		return JoinHandle[T]{}, ErrNilFuture
	}
	if s.closing.Load() {
		return JoinHandle[T]{}, ErrShutdown
	}
	max := int64(s.cfg.MaxLiveTasks)
	if !s.owned.reserve(max) {
		return JoinHandle[T]{}, ErrBackpressure
	}
	f, name := unname(f)
	t := &task[T]{fut: f}
	t.s = s
	t.InitScheduled(t, true)
	w := s.localWorker(cx)
	if name != "" || !w.identifyPlain(cx, &t.taskBase) {
		s.identify(w, cx, &t.taskBase, name, true)
	}
	if !s.admit(w, &t.taskBase, max > 0) || !s.start(w, &t.taskBase) {
		s.owned.uncount(&t.taskBase, -1)
		return JoinHandle[T]{}, ErrShutdown
	}
	return JoinHandle[T]{t: &t.core}, nil
}

// newTask builds the task of f with its header set up (Idle, join interest).
func newTask[T any](s *Scheduler, f future.Future[T]) *task[T] {
	t := &task[T]{fut: f}
	t.s = s
	t.Init(t, true)
	return t
}

// spawn is Spawn after its argument checks, for a task named name.
func spawn[T any](s *Scheduler, cx *future.Context, f future.Future[T], name string) JoinHandle[T] {
	t := &task[T]{fut: f}
	t.s = s
	t.InitScheduled(t, true)
	return spawnCore(s, cx, &t.core, name)
}

// spawnCore gives the new task t its identity (named name), counts and
// queues it, whatever kind holds its future, or resolves its handle with
// ErrShutdown without running it. t's header was set up by InitScheduled.
func spawnCore[T any](s *Scheduler, cx *future.Context, t *core[T], name string) JoinHandle[T] {
	w := s.localWorker(cx)
	if name != "" || !w.identifyPlain(cx, &t.taskBase) {
		s.identify(w, cx, &t.taskBase, name, true)
	}
	if !s.admit(w, &t.taskBase, false) || !s.start(w, &t.taskBase) {
		// Shutdown began: resolve the handle without running the future.
		t.TransitionToShutdown()
		t.Task().Abort(ErrShutdown)
	}
	return JoinHandle[T]{t: t}
}

// admit counts the new task t, spawned by worker w (nil from outside the
// workers), as live, or reports false when shutdown began. reserved says
// TrySpawn already counted it (reserve); a refusal drops that reservation.
// The task is not linked into the owned list yet: it is until its first
// poll that does not complete in a queue, which the shutdown drains (see
// ownedTasks).
func (s *Scheduler) admit(w *worker, t *taskBase, reserved bool) bool {
	if s.closing.Load() {
		if reserved {
			s.owned.live.bounded.Add(-1)
		}
		return false
	}
	s.owned.count(t, s.shardOf(w, t), s.cfg.MaxLiveTasks > 0, reserved, w == nil)
	return true
}

// shardOf picks the owned shard of a task spawned by worker w: the worker's
// own (for a nil w, a spawn from outside, a shard chosen by the task's
// address among those that are no worker's own).
func (s *Scheduler) shardOf(w *worker, t *taskBase) uint32 {
	if w != nil {
		return uint32(w.id)
	}
	i := t.hashShard(s.owned.mask)
	if n := uint32(len(s.workers)); i < n {
		// Not a worker's own: its line, whose recycled slots the worker
		// writes at each finish, would bounce between the spawner and
		// the worker. The shards beyond the workers' are at least three
		// times as many (ownedTasks.init).
		i += n
	}
	return i
}

// start queues a new task, Scheduled since its InitScheduled and counted
// by admit: on the spawning worker w's LIFO slot, or, for a nil w, on the
// global queue. It reports false when the global queue refused t (it
// closed: the shutdown's drain began, and will not see t); the caller then
// finishes or uncounts t. A worker's queues never refuse: the drain takes
// them only after the workers exited.
func (s *Scheduler) start(w *worker, t *taskBase) bool {
	h := &t.Header
	if w != nil {
		w.ctr.spawned++
		w.scheduleLocal(h)
		if w.identity {
			if i := w.lifoLen - 1; i >= 0 && w.lifo[i] == h {
				w.lifoPub.publish(i, t) // for the snapshots that this worker, held by a long poll, will not answer
			}
		}
		return true
	}
	// Counted before it is queued, so that its finish, which may follow at
	// once on a worker, never makes the live count dip (see liveCounter).
	s.spawnedRemote.Add(1)
	if !s.global.Push(h) {
		s.spawnedRemote.Add(^uint64(0))
		if t.counted == countedRemote {
			t.counted = notCounted // the caller's finish or uncount owes nothing
		}
		return false
	}
	s.idle.NotifyOne()
	return true
}
