package blitz

import (
	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// This file is the runtime's face of task identity: names, ids and the
// snapshot of the live tasks. See the package doc, "Task identity and
// dumps".

// Named returns f carrying name for its task: Spawn, SpawnOn and
// TrySpawnOn run f itself as the task's future and give the task that
// name, which Dump, JoinHandle.Name, the pprof labels (Config.ProfileLabels)
// and the execution tracer show. A task spawned by value (SpawnValue and
// the other Value forms) names itself with SetTaskName.
//
//	h := blitz.SpawnOn(rt.Handle(), blitz.Named("accept loop", acceptAsync(ln)))
func Named[T any](name string, f future.Future[T]) future.Future[T] {
	return scheduler.Named(name, f)
}

// SetTaskName names the task being polled with cx, or renames it, and
// reports false, doing nothing, when cx is not a poll of a runtime's task
// (BlockOn's, a test's). It is how a task spawned by value, which Named
// cannot wrap, takes a name: at its first poll. It allocates a small
// record; the name shows from then on.
func SetTaskName(cx *future.Context, name string) bool {
	h, ok := Current(cx)
	return ok && h.rt.sched.SetName(cx, name)
}

// TaskID returns the id of the task being polled with cx, unique among the
// tasks of its runtime, and false when cx is not a poll of a runtime's task
// (BlockOn's, a test's). JoinHandle.ID gives the same id to the spawner.
func TaskID(cx *future.Context) (uint64, bool) {
	h, ok := Current(cx)
	if !ok {
		return 0, false
	}
	return h.rt.sched.TaskID(cx)
}

// TaskInfo is a snapshot of one live task; see Runtime.Tasks.
type TaskInfo = scheduler.TaskInfo

// TaskState is a task's state in a TaskInfo: TaskQueued, TaskIdle,
// TaskScheduled or TaskRunning (TaskComplete for one that finished as the
// snapshot was taken).
type TaskState = scheduler.TaskState

// The task states.
const (
	// TaskIdle: the task waits for a wake.
	TaskIdle = scheduler.TaskIdle
	// TaskScheduled: the task was woken and waits in a queue to be polled.
	TaskScheduled = scheduler.TaskScheduled
	// TaskRunning: a worker is polling the task.
	TaskRunning = scheduler.TaskRunning
	// TaskComplete: the task finished after the snapshot began.
	TaskComplete = scheduler.TaskComplete
	// TaskQueued: the task waits in a queue for its first poll.
	TaskQueued = scheduler.TaskQueued
)

// Tasks returns a snapshot of the live tasks, and the number of live
// tasks. It lists the tasks polled at least once, those waiting in a
// queue for their first poll (TaskQueued), also behind a poll that does
// not return, and those in their first poll (TaskRunning, FirstPoll); the
// difference from live are the few it could not list: the tasks in the
// LIFO slot of a worker held by a poll that has not returned for 20 ms
// (one each, or Config.LIFO), and tasks that moved between queues while
// the snapshot read them. It is what Dump
// writes, for a program that shows tasks its own way; SnapshotTasks takes
// the same snapshot without allocating a TaskInfo per task. Any goroutine
// may call it.
func (rt *Runtime) Tasks() (tasks []TaskInfo, live int64) { return rt.sched.Tasks() }

// TaskSnapshot is a snapshot of the live tasks in a compact form that
// SnapshotTasks fills again and again without allocating
// (scheduler.TaskSnapshot): for a program that looks at many tasks often,
// such as a console.
type TaskSnapshot = scheduler.TaskSnapshot

// SnapshotTasks fills snap with the snapshot of the live tasks that Tasks
// would return, reusing snap's memory: once it has grown to the number of
// tasks, a fill allocates nothing in proportion to them. Any goroutine may
// call it.
func (rt *Runtime) SnapshotTasks(snap *TaskSnapshot) { rt.sched.SnapshotTasks(snap) }

// ioWaitKinds are the waits of tasks whose socket operation is in flight,
// by the operation's kind ("I/O recv fd 12"), recorded where a socket
// future waits for its operation (ioFuture.wait).
var ioWaitKinds = func() (ks [256]future.WaitKind) {
	for k := backend.Kind(1); k.Valid(); k++ {
		ks[k] = future.NewWaitKind("I/O "+k.String(), future.WaitFD)
	}
	return ks
}()

// FailedTask is a task that panicked or was cancelled, kept after its end
// for the dumps (scheduler.FailedTask).
type FailedTask = scheduler.FailedTask

// FailedTasks returns the latest tasks that panicked or were cancelled (up
// to Config.FailedTasksKept), oldest first. Any goroutine may call it.
func (rt *Runtime) FailedTasks() []FailedTask { return rt.sched.FailedTasks() }

// Warning is a sign of a bug in a task (scheduler.Warning): a lost waker,
// a task waking itself, a task that never yielded.
type Warning = scheduler.Warning

// Warnings returns the warnings of a snapshot of tasks (Tasks).
func (rt *Runtime) Warnings(tasks []TaskInfo) []Warning { return rt.sched.Warnings(tasks) }

// Deadlocks returns the cycles of the wait-for graph of a snapshot of tasks
// (Tasks): tasks each waiting for the next (a lock the next holds, or its
// end), the last for the first (scheduler.Deadlocks).
func Deadlocks(tasks []TaskInfo) [][]TaskInfo { return scheduler.Deadlocks(tasks) }
