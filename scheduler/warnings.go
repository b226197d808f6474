package scheduler

import (
	"bufio"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/blitz-go/blitz/future"
)

// This file holds the dump's warnings, after tokio-console's: a task that
// can no longer be woken, a task waking itself, a task that never
// yielded, and the latest failed tasks, kept after their end so that a
// crash's victim can still be seen. See the package doc, "Warnings".

// waitNoWaker is the wait recorded for a task whose last poll returned
// not-ready without taking its Waker (see runTask).
var waitNoWaker = future.NewWaitKind("nothing (its last poll took no waker)", future.WaitNoObject)

// WarningKind is what a Warning is about.
type WarningKind uint8

// The warnings.
const (
	// LostWaker: the task is idle and its last poll returned not-ready
	// without taking its Waker (future.Context.Waker): unless a Waker
	// registered by an earlier poll still will, nothing wakes it. The
	// classic lost wake-up of a future written by hand.
	LostWaker WarningKind = iota + 1
	// SelfWakes: the task was woken during most of its polls, by itself
	// most often (a busy loop that wakes its own Waker instead of
	// waiting, or of yielding with future.Context.Yield).
	SelfWakes
	// NeverYielded: the task has been in its first poll for longer than
	// Config.SlowPoll: it has not yielded once. Without Config.PollTiming
	// the task is seen only on a worker that a snapshot could not get an
	// answer from in 20 ms, and its poll's age is that of the worker's
	// tick.
	NeverYielded
)

// String returns the warning's name as the dump shows it.
func (k WarningKind) String() string {
	switch k {
	case LostWaker:
		return "lost waker"
	case SelfWakes:
		return "wakes itself"
	case NeverYielded:
		return "never yielded"
	}
	return "warning"
}

// Warning is a sign of a bug in a task, as a snapshot shows it.
type Warning struct {
	Kind WarningKind
	Task TaskInfo
}

// selfWakeMinPolls is how many polls a task needs before SelfWakes judges
// it, and selfWakeShare the share of its polls during which it was woken.
const (
	selfWakeMinPolls = 16
	selfWakeShare    = 0.5
)

// Warnings returns the warnings of a snapshot of tasks (Tasks), by task id.
func (s *Scheduler) Warnings(tasks []TaskInfo) []Warning {
	var out []Warning
	for i := range tasks {
		out = appendWarnings(out, &tasks[i], s.cfg.SlowPoll)
	}
	return out
}

// appendWarnings appends the warnings of t to out, for a scheduler whose
// Config.SlowPoll is slowPoll.
func appendWarnings(out []Warning, t *TaskInfo, slowPoll time.Duration) []Warning {
	switch {
	case t.State == TaskIdle && t.Wait.Kind() == waitNoWaker:
		out = append(out, Warning{LostWaker, *t})
	case t.State == TaskRunning && t.FirstPoll && t.SinceLastPoll >= slowPoll:
		out = append(out, Warning{NeverYielded, *t})
	}
	if t.Polls >= selfWakeMinPolls && float64(t.WokenInPoll) > selfWakeShare*float64(t.Polls) {
		out = append(out, Warning{SelfWakes, *t})
	}
	return out
}

// dumpWarning writes a warning, before the tasks:
//
//	WARNING (lost waker): task 7 "conn" is idle and its last poll took no waker: nothing will wake it unless an earlier poll's waker does
func dumpWarning(w *bufio.Writer, wa *Warning) {
	t := &wa.Task
	fmt.Fprintf(w, "\nWARNING (%s): task %d", wa.Kind, t.ID)
	if t.Name != "" {
		fmt.Fprintf(w, " %q", t.Name)
	}
	switch wa.Kind {
	case LostWaker:
		fmt.Fprintf(w, " is idle for %s and its last poll returned not-ready without taking its waker: nothing will wake it, unless a waker an earlier poll registered does", fmtDur(t.SinceLastPoll))
	case SelfWakes:
		fmt.Fprintf(w, " was woken during %d of its %d polls: a task waking itself busy-loops; wait, or yield", t.WokenInPoll, t.Polls)
	case NeverYielded:
		fmt.Fprintf(w, " has been in its first poll for %s: it has never yielded", fmtDur(t.SinceLastPoll))
	}
	if t.AwaitAt != "" {
		fmt.Fprintf(w, " (at %s)", t.AwaitAt)
	}
	if t.Site != "" {
		fmt.Fprintf(w, "\n\tspawned at %s (%s)", t.Site, t.Func)
	}
	w.WriteString("\n")
}

// FailedTask is a task that ended in failure (it panicked, or was
// cancelled), kept for a while after its end (Config.FailedTasksKept).
type FailedTask struct {
	ID   uint64
	Name string
	// Err is the task's outcome: a *PanicError, or ErrCancelled.
	Err error
	// Ended is when it ended.
	Ended time.Time
}

// DefaultFailedTasksKept is how many failed tasks a scheduler keeps when
// Config.FailedTasksKept is 0.
const DefaultFailedTasksKept = 32

// failedRing keeps the latest failed tasks. Its lock is taken only when a
// task fails, and by the dump.
type failedRing struct {
	mu sync.Mutex
	// keep is the ring's capacity (Config.FailedTasksKept). Set by New,
	// immutable.
	keep int
	// ring holds the tasks, next the slot the next one takes; guarded by mu.
	ring []FailedTask
	next int
}

// add keeps t, pushing out the oldest when the ring is full.
func (r *failedRing) add(t FailedTask) {
	if r.keep <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ring) < r.keep {
		r.ring = append(r.ring, t)
	} else {
		r.ring[r.next] = t
	}
	r.next = (r.next + 1) % r.keep
}

// snapshot returns the kept tasks, oldest first.
func (r *failedRing) snapshot() []FailedTask {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ring) < r.keep {
		return append([]FailedTask(nil), r.ring...)
	}
	return append(append([]FailedTask(nil), r.ring[r.next:]...), r.ring[:r.next]...)
}

// FailedTasks returns the latest tasks that panicked or were cancelled
// (up to Config.FailedTasksKept), oldest first. Any goroutine may call it.
func (s *Scheduler) FailedTasks() []FailedTask { return s.failed.snapshot() }

// noteFailed keeps t's end, if it panicked or was cancelled (not a task
// dropped by the shutdown). Called by the party finishing t.
func (s *Scheduler) noteFailed(t *taskBase, err error) {
	var pe *PanicError
	if s.failed.keep <= 0 || !errors.As(err, &pe) && !errors.Is(err, ErrCancelled) {
		return
	}
	ft := FailedTask{ID: t.id, Err: err, Ended: time.Now()}
	if x := t.ext.Load(); x != nil {
		ft.Name = x.name
	}
	s.failed.add(ft)
}

// dumpFailed writes the kept failed tasks, newest first:
//
//	recently failed: task 9 "handler" panicked 1.2s ago: boom
func dumpFailed(w *bufio.Writer, failed []FailedTask) {
	if len(failed) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%d recently failed (newest first):\n", len(failed))
	now := time.Now()
	for i := len(failed) - 1; i >= 0; i-- {
		f := &failed[i]
		fmt.Fprintf(w, "\ttask %d", f.ID)
		if f.Name != "" {
			fmt.Fprintf(w, " %q", f.Name)
		}
		var pe *PanicError
		how := "was cancelled"
		if errors.As(f.Err, &pe) {
			how = "panicked"
		} else if !errors.Is(f.Err, ErrCancelled) {
			how = "failed"
		}
		fmt.Fprintf(w, " %s %s ago: %v\n", how, fmtDur(now.Sub(f.Ended)), f.Err)
	}
}
