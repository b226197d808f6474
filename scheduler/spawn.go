package scheduler

import (
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
	return spawn(s, cx, f)
}

// resolvedHandle returns the handle of a task that never runs, already
// finished with err.
func resolvedHandle[T any](s *Scheduler, err error) JoinHandle[T] {
	t := newTask[T](s, nil)
	t.TransitionToShutdown() // claims the unscheduled task for the abort
	t.Abort(err)
	return JoinHandle[T]{t: t}
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
	reserved := false
	if max := int64(s.cfg.MaxLiveTasks); max > 0 {
		// Reserve before spawning: the count never exceeds max, however
		// many goroutines spawn at once (see the package doc,
		// "Backpressure"). A CAS
		// loop rather than add-then-undo, so that a refusal never shows in
		// Stats().Live nor refuses another TrySpawn while a slot is free.
		for {
			n := s.owned.live.Load()
			if n >= max {
				return JoinHandle[T]{}, ErrBackpressure
			}
			if s.owned.live.CompareAndSwap(n, n+1) {
				break
			}
		}
		reserved = true
	}
	t := newTask(s, f)
	if !s.owned.insert(&t.taskBase, reserved) {
		return JoinHandle[T]{}, ErrShutdown
	}
	s.start(cx, &t.taskBase)
	return JoinHandle[T]{t: t}, nil
}

// newTask builds the task of f with its header set up (Idle, join interest).
func newTask[T any](s *Scheduler, f future.Future[T]) *task[T] {
	t := &task[T]{fut: f}
	t.Init(t, s, true)
	return t
}

// spawn is Spawn after its argument checks.
func spawn[T any](s *Scheduler, cx *future.Context, f future.Future[T]) JoinHandle[T] {
	t := newTask(s, f)
	if s.closing.Load() || !s.owned.insert(&t.taskBase, false) {
		// Shutdown began: resolve the handle without running f.
		t.TransitionToShutdown()
		t.Abort(ErrShutdown)
		return JoinHandle[T]{t: t}
	}
	s.start(cx, &t.taskBase)
	return JoinHandle[T]{t: t}
}

// start schedules a new, linked task: on the spawning worker's LIFO slot, or
// on the global queue.
func (s *Scheduler) start(cx *future.Context, t *taskBase) {
	h := &t.Header
	h.TransitionToScheduled() // Idle to Scheduled: always ScheduleEnqueue here
	if w := s.localWorker(cx); w != nil {
		w.ctr.spawned++
		w.scheduleLocal(h)
		return
	}
	s.spawnedRemote.Add(1)
	s.Schedule(h)
}
