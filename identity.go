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

// TaskState is a task's state in a TaskInfo: TaskIdle, TaskScheduled or
// TaskRunning (TaskComplete for one that finished as the snapshot was
// taken).
type TaskState = scheduler.TaskState

// The task states.
const (
	TaskIdle      = scheduler.TaskIdle
	TaskScheduled = scheduler.TaskScheduled
	TaskRunning   = scheduler.TaskRunning
	TaskComplete  = scheduler.TaskComplete
)

// Tasks returns a snapshot of the live tasks that have been polled at
// least once, and the number of live tasks: the difference are tasks
// queued since their spawn and not polled yet, or in their first poll. It
// is what Dump writes, for a program that shows tasks its own way. Any
// goroutine may call it.
func (rt *Runtime) Tasks() (tasks []TaskInfo, live int64) { return rt.sched.Tasks() }

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
