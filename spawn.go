package blitz

import (
	"context"
	"fmt"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// JoinHandle is the handle of a spawned task; see scheduler.JoinHandle.
type JoinHandle[T any] = scheduler.JoinHandle[T]

// Spawn starts f as a task on the runtime polling cx, from inside a task:
// the new task goes to this worker's LIFO slot and runs next. It panics with
// ErrNoRuntime if no runtime polls cx; from outside a task use SpawnOn. A nil
// f starts nothing: the JoinHandle is resolved with ErrNilFuture. Wrap f
// with Named to name the task.
func Spawn[T any](cx *future.Context, f future.Future[T]) JoinHandle[T] {
	h, ok := Current(cx)
	if !ok {
		panic(ErrNoRuntime)
	}
	return scheduler.Spawn(h.rt.sched, cx, f)
}

// SpawnOn starts f as a task on h's runtime from any goroutine: the task
// goes to the global queue and an idle worker is woken. After Shutdown began,
// f is cancelled unpolled and the JoinHandle reports ErrShutdown. A nil f
// starts nothing: the JoinHandle is resolved with ErrNilFuture.
//
// A future wrapped by Named gives the task its name, as with Spawn.
func SpawnOn[T any](h Handle, f future.Future[T]) JoinHandle[T] {
	return scheduler.Spawn(h.Runtime().sched, nil, f)
}

// TrySpawnOn is SpawnOn that refuses, without taking f, when the runtime is
// shutting down (ErrShutdown) or Config.MaxLiveTasks tasks are live
// (ErrBackpressure), and refuses a nil f with ErrNilFuture.
func TrySpawnOn[T any](h Handle, f future.Future[T]) (JoinHandle[T], error) {
	return scheduler.TrySpawn(h.Runtime().sched, nil, f)
}

// BlockOn runs f to completion on the calling goroutine and returns its
// value: the bridge from goroutine code to task code. f is polled here, not
// on a worker, with a Context of h's runtime, so it can sleep, spawn and use
// the runtime's other services. If ctx ends first, f is cancelled and the
// error wraps ctx's cause; if the runtime shuts down first, f is cancelled
// and the error is ErrShutdown. A nil f is refused with ErrNilFuture.
//
// A task must not block in BlockOn (it would block its worker, and on a
// one-worker runtime wait forever for work only that worker can do); it
// polls f instead. Called on a worker, BlockOn polls f once and, if f is
// not ready, cancels it and returns an error wrapping ErrBlockingInTask.
// The check walks the stack, about a microsecond, and only a BlockOn that
// would block pays it. A goroutine a task started, or a blocking-pool
// call, may use BlockOn.
//
// On a simulated runtime (Config.Simulation), f runs as a task of the
// runtime, and the caller drives the simulation until it finishes: a
// simulation test waits for its client this way. A panic of f then comes
// back as an error wrapping ErrPanicked, and a simulation that cannot go
// on (every task waits) as the simulator's error.
func BlockOn[T any](ctx context.Context, h Handle, f future.Future[T]) (T, error) {
	rt := h.Runtime()
	var zero T
	if f == nil {
		return zero, fmt.Errorf("blitz: BlockOn: %w", ErrNilFuture)
	}
	if rt.sim != nil {
		return blockOnSimulated(ctx, rt, f)
	}
	b := future.GetBlocker() // no allocation of its own once warm
	defer b.Put()
	cx := b.Context()
	cx.Reset(b.Waker(), rt.sched, nil, future.NoWorker)
	for first := true; ; first = false {
		if v, ok := f.Poll(cx); ok {
			return v, nil
		}
		if first && scheduler.OnWorker() {
			future.Cancel(f)
			return zero, fmt.Errorf("blitz: BlockOn: %w", ErrBlockingInTask)
		}
		select {
		case <-b.Signal().Chan():
		case <-ctx.Done():
			future.Cancel(f)
			return zero, fmt.Errorf("blitz: BlockOn: %w", context.Cause(ctx))
		case <-rt.sched.Done():
			future.Cancel(f)
			return zero, ErrShutdown
		}
	}
}

// SpawnValue is Spawn for a future held by value: f is copied into the
// task's own allocation and polled through its address, so that the spawn
// allocates once, where Spawn stores f in an interface (and the caller
// usually allocated f on its own). F's pointer type is the future: its
// Poll, and its Cancel if it has one, may take a pointer or a value
// receiver. T is given and F inferred:
//
//	blitz.SpawnValue[int](cx, sum{a: 1, b: 2})
//
// Like Spawn, it is called from inside a task and panics with ErrNoRuntime
// if no runtime polls cx. Spawn a pointer instead when the future must
// also be reached from outside the task: SpawnValue holds a copy of f.
func SpawnValue[T any, F any, PF interface {
	*F
	future.Future[T]
}](cx *future.Context, f F) JoinHandle[T] {
	h, ok := Current(cx)
	if !ok {
		panic(ErrNoRuntime)
	}
	return scheduler.SpawnValue[T, F, PF](h.rt.sched, cx, f)
}

// SpawnValueOn is SpawnOn for a future held by value (see SpawnValue): it
// starts f as a task on h's runtime from any goroutine, in one allocation.
// After Shutdown began, f's Cancel (if any) is called, f is not polled, and
// the JoinHandle reports ErrShutdown.
func SpawnValueOn[T any, F any, PF interface {
	*F
	future.Future[T]
}](h Handle, f F) JoinHandle[T] {
	return scheduler.SpawnValue[T, F, PF](h.Runtime().sched, nil, f)
}

// SpawnValueDetached is SpawnValue without a JoinHandle, as if detached at
// once: the task runs on unobserved, its value is dropped and a panic is
// reported (Config.OnPanic, or the standard logger). Because no handle can
// refer to it, the finished task's memory is reused by a later
// SpawnValueDetached of the same future type on the same worker, so that a
// chain of such spawns does not allocate. It is called from inside a task
// and panics with ErrNoRuntime if no runtime polls cx.
func SpawnValueDetached[T any, F any, PF interface {
	*F
	future.Future[T]
}](cx *future.Context, f F) {
	h, ok := Current(cx)
	if !ok {
		panic(ErrNoRuntime)
	}
	scheduler.SpawnValueDetached[T, F, PF](h.rt.sched, cx, f)
}

// SpawnValueDetachedOn is SpawnValueOn without a JoinHandle (see
// SpawnValueDetached), from any goroutine. From outside the workers it
// allocates the task. After Shutdown began f is not polled: its Cancel, if
// any, is called.
func SpawnValueDetachedOn[T any, F any, PF interface {
	*F
	future.Future[T]
}](h Handle, f F) {
	scheduler.SpawnValueDetached[T, F, PF](h.Runtime().sched, nil, f)
}

// TaskName is a name that many tasks share (scheduler.TaskName): made once
// with NewTaskName, it names every task spawned with it
// (SpawnValueDetachedNamed) at no allocation, where Named gives each task
// a record of its own. A server names its connection tasks this way.
type TaskName = scheduler.TaskName

// NewTaskName returns a name for tasks to share.
func NewTaskName(name string) *TaskName { return scheduler.NewTaskName(name) }

// SpawnValueDetachedNamed is SpawnValueDetached for a task named name (nil
// names none), from inside a task.
func SpawnValueDetachedNamed[T any, F any, PF interface {
	*F
	future.Future[T]
}](cx *future.Context, name *TaskName, f F) {
	h, ok := Current(cx)
	if !ok {
		panic(ErrNoRuntime)
	}
	scheduler.SpawnValueDetachedNamed[T, F, PF](h.rt.sched, cx, f, name)
}

// SpawnValueDetachedNamedOn is SpawnValueDetachedOn for a task named name
// (nil names none), from any goroutine.
func SpawnValueDetachedNamedOn[T any, F any, PF interface {
	*F
	future.Future[T]
}](h Handle, name *TaskName, f F) {
	scheduler.SpawnValueDetachedNamed[T, F, PF](h.Runtime().sched, nil, f, name)
}

// FallibleHandle is the JoinHandle of a fallible task, one whose future
// yields a future.Result[T] (an async function with results (T, error)):
// its outcome is the future's value and error, or the task's own error (a
// *PanicError, ErrCancelled, ErrShutdown), in one Result, so that an async
// function awaits it as a call that can fail,
//
//	v, err := future.Try(blitz.SpawnFallible(future.Cx(), fetchAsync(url)))
//
// where a JoinHandle would give a Result inside a Result. Cancel, Detach,
// IsFinished and the rest are the JoinHandle's.
type FallibleHandle[T any] struct {
	JoinHandle[future.Result[T]]
}

// SpawnFallible is Spawn for a fallible future: see FallibleHandle.
func SpawnFallible[T any](cx *future.Context, f future.Future[future.Result[T]]) FallibleHandle[T] {
	return FallibleHandle[T]{Spawn(cx, f)}
}

// SpawnFallibleOn is SpawnOn for a fallible future: see FallibleHandle.
func SpawnFallibleOn[T any](h Handle, f future.Future[future.Result[T]]) FallibleHandle[T] {
	return FallibleHandle[T]{SpawnOn(h, f)}
}

// Poll returns the task's outcome once it finished: the future's value and
// error, or the task's error; see JoinHandle.Poll.
func (j FallibleHandle[T]) Poll(cx *future.Context) (future.Result[T], bool) {
	r, ok := j.JoinHandle.Poll(cx)
	if !ok {
		return future.Result[T]{}, false
	}
	if r.Err != nil {
		return future.Fail[T](r.Err), true
	}
	return r.Value, true
}

// Future returns j as a future.Future, for the combinators.
func (j FallibleHandle[T]) Future() future.Future[future.Result[T]] { return j }

// Wait blocks the calling goroutine until the task finished and returns the
// future's value and error, or the task's error; see JoinHandle.Wait.
func (j FallibleHandle[T]) Wait(ctx context.Context) (T, error) {
	r, err := j.JoinHandle.Wait(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	return r.Value, r.Err
}
