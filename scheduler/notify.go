package scheduler

// Tasks that hand their outcome to a Notifier instead of a JoinHandle.

import (
	"fmt"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/header"
)

// Notifier receives the outcome of the tasks spawned with SpawnNotifying.
// It is how a set of tasks (a server's connection handlers) learns of each
// one's end without keeping a JoinHandle per task and a Waker registered on
// it: the task itself calls TaskEnded as it finishes.
type Notifier[T any] interface {
	// TaskEnded is called once per task, when it ends: with its value, or
	// the error of its panic (a *PanicError), its cancellation
	// (ErrCancelled) or the shutdown (ErrShutdown). It runs on the
	// goroutine that ended the task (a worker, or the shutdown), with no
	// lock of the scheduler held; it must not block. t is the ended task,
	// whose Tag is as last set.
	TaskEnded(t TaskRef, res future.Result[T])
}

// TaskRef refers to a task spawned with SpawnNotifying: it can cancel the
// task, and holds the notifier's tag for it. The zero TaskRef refers to no
// task. It is 8 bytes: a set of tasks keeps one per task.
type TaskRef struct {
	b *taskBase
}

// tagged is what every notifying task is, whatever its types: TaskRef
// reaches the tag through it.
type tagged interface {
	tagWord() *uint32
}

// Cancel cancels the task, as JoinHandle.Cancel does: its notifier then
// gets ErrCancelled, unless the task ended before. Any goroutine may call
// it, any number of times.
func (r TaskRef) Cancel() {
	if r.b == nil {
		return
	}
	if h := &r.b.Header; h.Cancel() == header.CancelEnqueue {
		r.b.sched().Schedule(h)
	}
}

// Tag returns the task's tag: the word its notifier keeps in it (an index
// in the notifier's own table, say). The tag is the notifier's: the
// scheduler never reads it, and the notifier guards it as it guards its
// table (SetTag and Tag under the same lock).
func (r TaskRef) Tag() uint32 { return *r.b.Task().(tagged).tagWord() }

// SetTag sets the task's tag (see Tag).
func (r TaskRef) SetTag(tag uint32) { *r.b.Task().(tagged).tagWord() = tag }

// ID returns the task's id, as Dump shows it.
func (r TaskRef) ID() uint64 { return r.b.id }

// notifyTask is the task of SpawnNotifying: its future, held in an
// interface as Spawn's, and its notifier, with no outcome stored and no
// awaiter, since nothing joins it. With a pointer for N it is 144 bytes,
// where a task and the record a set would keep for its JoinHandle take
// 176 and more.
type notifyTask[T any, N Notifier[T]] struct {
	taskBase
	// fut is the user's future. Owned by the worker that moved the header
	// to Running; set to nil when the task ends.
	fut future.Future[T]
	// to is the notifier, called once by finish. Set by the spawn before
	// the task is shared; zeroed by finish, or by a spawn that did not
	// start the task (which then finishes it without a word).
	to N
	// tag is the notifier's (see TaskRef.Tag).
	tag uint32
	// silent is set by a spawn that failed to start the task: its finish
	// then notifies nobody (the spawn reports the failure instead).
	silent bool
}

func (t *notifyTask[T, N]) tagWord() *uint32 { return &t.tag }

// SpawnNotifying starts f as a task of s that, when it ends, calls
// to.TaskEnded with its outcome and a TaskRef to it, instead of keeping
// the outcome for a JoinHandle. tag is the task's first tag (see
// TaskRef.Tag). cx says where the spawn comes from, as for Spawn; a Named
// future names the task.
//
// When the task cannot start, because shutdown began (ErrShutdown) or f
// is nil (ErrNilFuture), SpawnNotifying returns the error, f's Cancel is
// called, and to is never called for it. Otherwise to is called exactly
// once, perhaps before SpawnNotifying returns, on another worker: so a
// notifier that records the returned TaskRef under a lock its TaskEnded
// also takes may hold that lock across the call, and then sees every
// task it recorded end after the recording.
func SpawnNotifying[T any, N Notifier[T]](s *Scheduler, cx *future.Context, f future.Future[T], to N, tag uint32) (TaskRef, error) {
	if f == nil {
		return TaskRef{}, ErrNilFuture
	}
	f, name := unname(f)
	t := &notifyTask[T, N]{fut: f, to: to, tag: tag}
	t.s = s
	t.InitScheduled(t, false)
	w := s.localWorker(cx)
	if name != "" || !w.identifyPlain(cx, &t.taskBase) {
		s.identify(w, cx, &t.taskBase, name, true)
	}
	if !s.admit(w, &t.taskBase, false) || !s.start(w, &t.taskBase) {
		// Nobody else holds the task: it was never queued.
		t.silent = true
		t.TransitionToShutdown()
		t.Abort(ErrShutdown)
		return TaskRef{}, ErrShutdown
	}
	return TaskRef{b: &t.taskBase}, nil
}

// Poll polls the future once; see task.Poll.
func (t *notifyTask[T, N]) Poll(cx *future.Context) bool {
	v, ok, perr := t.pollFuture(cx)
	switch {
	case perr != nil:
		if cpe := t.cancelFuture(); cpe != nil {
			t.sched().ReportPanic("the Cancel of a task's future, after its poll panicked", cpe)
		}
		t.finish(cx, future.Fail[T](perr))
		return true
	case ok:
		t.fut = nil
		t.finish(cx, future.Ok(v))
		return true
	}
	t.pending(cx)
	return false
}

// pollFuture polls t.fut and converts a panic into a *PanicError.
func (t *notifyTask[T, N]) pollFuture(cx *future.Context) (v T, ok bool, perr *PanicError) {
	return pollHeld(t.fut, cx)
}

// cancelFuture cancels t.fut and drops it; see task.cancelFuture.
func (t *notifyTask[T, N]) cancelFuture() (perr *PanicError) {
	f := t.fut
	t.fut = nil
	return cancelHeld(f)
}

// Abort cancels the future and ends the task with err; see task.Abort.
func (t *notifyTask[T, N]) Abort(err error) {
	if cpe := t.cancelFuture(); cpe != nil {
		err = fmt.Errorf("%w; then its future's Cancel panicked: %w", err, cpe)
	}
	t.finish(nil, future.Fail[T](err))
}

// finish unlinks and uncounts the task, completes its header and hands
// res to the notifier (unless the spawn failed: silent). It mirrors
// core.finish for a task that nothing joins.
func (t *notifyTask[T, N]) finish(cx *future.Context, res future.Result[T]) {
	s := t.sched()
	if res.Err != nil {
		s.noteFailed(&t.taskBase, res.Err)
	}
	s.owned.remove(&t.taskBase, s.workerIndex(cx))
	t.TransitionToCompleteAndUnref()
	if t.ext.Load() != nil {
		t.endTrace(s.localWorker(cx))
	}
	s.countFinish(cx, res.Err)
	to := t.to
	var none N
	t.to = none
	if !t.silent {
		to.TaskEnded(TaskRef{b: &t.taskBase}, res)
	}
}
