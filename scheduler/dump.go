package scheduler

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blitz-go/blitz/future"
)

// This file is the task dump: Tasks takes a snapshot of the listed tasks,
// Dump and DumpEach write it. See the package doc, "Task dump".

// TaskState is where a task is in its life, as a dump shows it.
type TaskState uint8

// The task states.
const (
	// TaskIdle: the task waits for a wake.
	TaskIdle TaskState = iota
	// TaskScheduled: the task was woken and waits in a queue to be polled.
	TaskScheduled
	// TaskRunning: a worker is polling the task.
	TaskRunning
	// TaskComplete: the task finished after the snapshot began.
	TaskComplete
	// TaskQueued: the task waits in a queue for its first poll; it has
	// not run yet.
	TaskQueued
)

// String returns "idle", "scheduled", "running", "complete" or "queued".
func (s TaskState) String() string {
	switch s {
	case TaskIdle:
		return "idle"
	case TaskScheduled:
		return "scheduled"
	case TaskRunning:
		return "running"
	case TaskQueued:
		return "queued"
	}
	return "complete"
}

// TaskInfo is a snapshot of one live task.
type TaskInfo struct {
	// ID is the task's id; Parent the id of the task that spawned it, 0
	// for a spawn from outside the tasks.
	ID, Parent uint64
	// Name is the task's name (Named, SetName), "" for none.
	Name string
	// State is the task's state when the snapshot read it.
	State TaskState
	// Age is the time since the spawn; for a task spawned from outside
	// the workers, since its first poll, which saves the spawn a clock
	// read (0 while such a task is queued for its first poll).
	Age time.Duration
	// Polls counts the task's polls (modulo 2^32); 0 for a queued task.
	Polls uint32
	// SinceLastPoll is the time since the task's last poll began: for an
	// idle task, about how long it has waited; for a running one, how long
	// its poll in progress has run; for a queued one, its Age, how long it
	// has waited for its first poll.
	SinceLastPoll time.Duration
	// PollTime is the total duration of the task's polls, with
	// Config.PollTiming; 0 without.
	PollTime time.Duration
	// Wait is what the idle task waits on, as its last poll recorded it
	// (future.Context.Waiting); zero when the task is not idle or no leaf
	// future recorded a wait.
	Wait future.Wait
	// Site is the spawn site, "file:line", and Func the function there,
	// with Config.SpawnSites; "" without.
	Site, Func string
	// AwaitAt is where the idle task is suspended, when it runs an async
	// function: "file.go:42 (function)", the await nearest the wait; ""
	// for a future written by hand.
	AwaitAt string
	// WokenInPoll counts the polls during which the task was woken, by
	// itself most often (see Warnings).
	WokenInPoll uint64
	// WaitsFor is the id of the task the idle task waits for, 0 if none is
	// known: the awaited task of a JoinHandle wait, the holder of a lock
	// (future.Wait.Holder). The edges of the wait-for graph, in which a
	// cycle is a deadlock (Deadlocks).
	WaitsFor uint64
	// FirstPoll says the task is in its first poll and was found on the
	// worker polling it: its Age and SinceLastPoll are the time since that
	// poll began (with Config.PollTiming; without it, since the worker's
	// tick holding the poll began, which is at least as long), and its
	// parent is not known.
	FirstPoll bool
}

// Tasks returns a snapshot of the live tasks, in no particular order, and
// the number of live tasks (Stats().Live). It lists the tasks polled at
// least once (idle, scheduled or running), those waiting in a queue for
// their first poll (TaskQueued), and those in their first poll
// (TaskRunning, FirstPoll): the workers copy the tasks of their own queues
// when asked, between two polls, and the global queue's are read; from a
// worker that does not answer within 20 ms, being in a long poll, the tasks
// of its local queue are taken to the global queue, as an idle worker would
// steal them, and its task in its first poll is read from what the worker
// publishes of it (its id, name and spawn site; its SinceLastPoll is the
// age of the worker's tick, at least that of the poll), and so are the
// tasks never polled in its LIFO (their id, parent, name and spawn site;
// their age is that of the worker's tick, at least theirs). The difference
// from live are the tasks that moved between two queues while the snapshot
// read them, and, with Config.NoTaskIdentity, which turns what the workers
// publish off, the tasks in the LIFO of a worker in a long poll. The ages
// and wait times are accurate to a worker's tick (at most BudgetPerTick
// polls) unless Config.PollTiming makes them exact. Any goroutine may call
// it; it holds each owned shard's mutex while it copies that shard's tasks.
// SnapshotTasks takes the same snapshot without allocating a TaskInfo per
// task.
func (s *Scheduler) Tasks() (tasks []TaskInfo, live int64) {
	var snap TaskSnapshot
	s.SnapshotTasks(&snap)
	tasks = make([]TaskInfo, snap.Len())
	for i := range tasks {
		tasks[i] = snap.Task(i)
	}
	return tasks, snap.Live()
}

// waitsFor returns the task that a task waiting on w waits for, 0 if none
// is known.
func waitsFor(w future.Wait) uint64 {
	if w.Kind().Object() == future.WaitTask {
		return w.Object()
	}
	return w.Holder()
}

// Deadlocks returns the cycles of the wait-for graph of tasks (each idle
// task's WaitsFor): tasks each waiting for the next, the last for the
// first, none of which can go on. Each cycle starts at its smallest id;
// the cycles come in the order of those ids. A cycle of one is a task
// waiting for itself (a lock it holds). The snapshot is not atomic: a
// cycle seen in it may be one that was broken while it was taken, if a
// lock changed hands meanwhile; a deadlock stays, and shows in every dump.
func Deadlocks(tasks []TaskInfo) [][]TaskInfo {
	// Only a task that waits for another can be in a cycle: most tasks
	// are not, and the maps stay small.
	byID := make(map[uint64]*TaskInfo)
	for i := range tasks {
		if tasks[i].State == TaskIdle && tasks[i].WaitsFor != 0 {
			byID[tasks[i].ID] = &tasks[i]
		}
	}
	// Each task waits for at most one: follow the edges from each task,
	// coloring the tasks of the walk, until a task seen before.
	const (
		unseen = iota
		onWalk
		done
	)
	color := make(map[uint64]uint8, len(byID))
	var cycles [][]TaskInfo
	ids := make([]uint64, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, start := range ids {
		var walk []uint64
		id := start
		for {
			t := byID[id]
			if t == nil || color[id] == done {
				break
			}
			if color[id] == onWalk {
				i := slices.Index(walk, id)
				cycle := make([]TaskInfo, 0, len(walk)-i)
				for _, c := range walk[i:] {
					cycle = append(cycle, *byID[c])
				}
				m := 0
				for j := range cycle {
					if cycle[j].ID < cycle[m].ID {
						m = j
					}
				}
				cycles = append(cycles, append(cycle[m:], cycle[:m]...))
				break
			}
			color[id] = onWalk
			walk = append(walk, id)
			if t.State != TaskIdle || t.WaitsFor == 0 {
				break
			}
			id = t.WaitsFor
		}
		for _, w := range walk {
			color[w] = done
		}
	}
	slices.SortFunc(cycles, func(a, b []TaskInfo) int { return cmp.Compare(a[0].ID, b[0].ID) })
	return cycles
}

// spawnSite returns the "file:line" and the function of the first frame of
// pcs outside this package and the runtime module: the spawn's caller.
func spawnSite(pcs []uintptr) [2]string {
	n := 0
	for n < len(pcs) && pcs[n] != 0 {
		n++
	}
	frames := runtime.CallersFrames(pcs[:n])
	var f runtime.Frame
	for more := true; more; {
		f, more = frames.Next()
		if !internalFrame(f.Function) {
			break
		}
	}
	return [2]string{f.File + ":" + strconv.Itoa(f.Line), f.Function}
}

// internalFrame reports whether fn is a function of this package or of the
// runtime's (the root package blitz, its internal packages, and the
// deprecated forwarding package at the old path), whose frames a spawn
// site skips.
func internalFrame(fn string) bool {
	for _, p := range [...]string{
		"github.com/blitz-go/blitz/scheduler.",
		"github.com/blitz-go/blitz.",
		"github.com/blitz-go/blitz/internal/",
		"github.com/blitz-go/blitz/runtime.",
	} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// Dump writes the live tasks to w, grouped as a goroutine dump groups
// identical stacks: one stanza per state, wait kind, name and spawn site,
// with the number of tasks, their ids (the first ten) and the range of
// their ages, waits and polls; the largest groups first. See the package
// doc, "Task dump", for the format. Any goroutine may call it; it returns
// the error of writing to w.
func (s *Scheduler) Dump(w io.Writer) error { return s.dump(w, true) }

// DumpEach is Dump with one stanza per task, in the order of their ids,
// with all that Tasks tells of it.
func (s *Scheduler) DumpEach(w io.Writer) error { return s.dump(w, false) }

// dump is Dump (grouped) and DumpEach.
func (s *Scheduler) dump(w io.Writer, grouped bool) error {
	tasks, live := s.Tasks()
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "blitz tasks: %d live, %d listed", live, len(tasks))
	if n := live - int64(len(tasks)); n > 0 {
		if s.cfg.NoTaskIdentity {
			fmt.Fprintf(bw, " (%d not listed: in the LIFO of a worker held by a long poll, published only with task identity, or moving between queues)", n)
		} else {
			fmt.Fprintf(bw, " (%d not listed: moving between queues while they were read)", n)
		}
	}
	bw.WriteString("\n")
	for _, lp := range s.LongPolls(true) {
		s.dumpLongPoll(bw, &lp)
	}
	for _, cycle := range Deadlocks(tasks) {
		dumpDeadlock(bw, cycle)
	}
	for _, wa := range s.Warnings(tasks) {
		dumpWarning(bw, &wa)
	}
	dumpFailed(bw, s.FailedTasks())
	if grouped {
		dumpGroups(bw, tasks)
	} else {
		slices.SortFunc(tasks, func(a, b TaskInfo) int { return cmp.Compare(a.ID, b.ID) })
		for i := range tasks {
			dumpTask(bw, &tasks[i])
		}
	}
	return bw.Flush()
}

// dumpTask writes one task's stanza:
//
//	task 17 "worker": idle 3.2s, waiting on TCPStream.Read fd 12
//		age 5.1s, polls 12, poll time 1.2ms, parent task 3
//		spawned at /src/app/main.go:42 (main.serve)
func dumpTask(w *bufio.Writer, t *TaskInfo) {
	fmt.Fprintf(w, "\ntask %d", t.ID)
	if t.Name != "" {
		fmt.Fprintf(w, " %q", t.Name)
	}
	fmt.Fprintf(w, ": %s", t.State)
	switch t.State {
	case TaskIdle:
		fmt.Fprintf(w, " %s", fmtDur(t.SinceLastPoll))
		if t.Wait != 0 {
			fmt.Fprintf(w, ", waiting on %s", t.Wait)
			writeHolder(w, t)
		}
		if t.AwaitAt != "" {
			fmt.Fprintf(w, ", at %s", t.AwaitAt)
		}
	case TaskRunning:
		fmt.Fprintf(w, " for %s", fmtDur(t.SinceLastPoll))
		if t.FirstPoll {
			w.WriteString(", in its first poll")
		}
	case TaskQueued:
		w.WriteString(" since its spawn")
	}
	fmt.Fprintf(w, "\n\tage %s, polls %d", fmtDur(t.Age), t.Polls)
	if t.PollTime > 0 {
		fmt.Fprintf(w, ", poll time %s", fmtDur(t.PollTime))
	}
	if t.Parent != 0 {
		fmt.Fprintf(w, ", parent task %d", t.Parent)
	}
	w.WriteString("\n")
	if t.Site != "" {
		fmt.Fprintf(w, "\tspawned at %s (%s)\n", t.Site, t.Func)
	}
}

// groupKey is what the tasks of a group of Dump share.
type groupKey struct {
	state      TaskState
	wait       future.WaitKind
	name, site string
	at         string // the await site
}

// dumpGroups writes the tasks grouped by groupKey, the largest groups
// first:
//
//	2 tasks: idle, waiting on Mutex.Lock, "worker"
//		ids 4, 9
//		age 1.2s to 3.4s, idle 0.5s to 3.0s, polls 1 to 3
//		spawned at /src/app/main.go:42 (main.main)
//
// A group of one task shows its wait's object ("TCPStream.Read fd 12").
func dumpGroups(w *bufio.Writer, tasks []TaskInfo) {
	groups := make(map[groupKey][]*TaskInfo)
	for i := range tasks {
		t := &tasks[i]
		k := groupKey{t.State, t.Wait.Kind(), t.Name, t.Site, t.AwaitAt}
		groups[k] = append(groups[k], t)
	}
	keys := make([]groupKey, 0, len(groups))
	for k, g := range groups {
		keys = append(keys, k)
		slices.SortFunc(g, func(a, b *TaskInfo) int { return cmp.Compare(a.ID, b.ID) })
	}
	slices.SortFunc(keys, func(a, b groupKey) int {
		if c := cmp.Compare(len(groups[b]), len(groups[a])); c != 0 {
			return c
		}
		return cmp.Compare(groups[a][0].ID, groups[b][0].ID)
	})
	for _, k := range keys {
		g := groups[k]
		first := g[0]
		if len(g) == 1 {
			w.WriteString("\n1 task: ")
		} else {
			fmt.Fprintf(w, "\n%d tasks: ", len(g))
		}
		w.WriteString(k.state.String())
		if k.wait != 0 {
			desc := k.wait.Name()
			if len(g) == 1 {
				desc = first.Wait.String()
			}
			fmt.Fprintf(w, ", waiting on %s", desc)
			if len(g) == 1 {
				writeHolder(w, first)
			}
		}
		if k.at != "" {
			fmt.Fprintf(w, ", at %s", k.at)
		}
		if k.name != "" {
			fmt.Fprintf(w, ", %q", k.name)
		}
		w.WriteString("\n\tid")
		if len(g) > 1 {
			w.WriteString("s")
		}
		for i, t := range g {
			if i == 10 {
				w.WriteString(", ...")
				break
			}
			if i > 0 {
				w.WriteString(",")
			}
			fmt.Fprintf(w, " %d", t.ID)
		}
		w.WriteString("\n\tage ")
		writeRange(w, g, func(t *TaskInfo) time.Duration { return t.Age })
		switch k.state {
		case TaskIdle:
			w.WriteString(", idle ")
			writeRange(w, g, func(t *TaskInfo) time.Duration { return t.SinceLastPoll })
		case TaskRunning:
			w.WriteString(", running for ")
			writeRange(w, g, func(t *TaskInfo) time.Duration { return t.SinceLastPoll })
		}
		lo, hi := first.Polls, first.Polls
		var pt time.Duration
		for _, t := range g {
			lo, hi = min(lo, t.Polls), max(hi, t.Polls)
			pt += t.PollTime
		}
		if lo == hi {
			fmt.Fprintf(w, ", polls %d", lo)
		} else {
			fmt.Fprintf(w, ", polls %d to %d", lo, hi)
		}
		if pt > 0 {
			fmt.Fprintf(w, ", poll time %s in all", fmtDur(pt))
		}
		w.WriteString("\n")
		if k.site != "" {
			fmt.Fprintf(w, "\tspawned at %s (%s)\n", k.site, first.Func)
		}
	}
}

// writeRange writes the range of f over g: "1.2s", or "1.2s to 3.4s".
func writeRange(w *bufio.Writer, g []*TaskInfo, f func(*TaskInfo) time.Duration) {
	lo, hi := f(g[0]), f(g[0])
	for _, t := range g[1:] {
		lo, hi = min(lo, f(t)), max(hi, f(t))
	}
	w.WriteString(fmtDur(lo))
	if fmtDur(hi) != fmtDur(lo) {
		w.WriteString(" to ")
		w.WriteString(fmtDur(hi))
	}
}

// fmtDur rounds d for a dump: to the millisecond under a minute (to the
// microsecond under a millisecond), to the second above.
func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Minute:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// dumpLongPoll writes a long poll's stanza, before the tasks:
//
//	LONG POLL on worker 0: task 17 "handler" has run 2.1s in one poll
//	without yielding (threshold 1ms)
//		main.spin
//			/src/app/main.go:42
func (s *Scheduler) dumpLongPoll(w *bufio.Writer, lp *LongPoll) {
	fmt.Fprintf(w, "\nLONG POLL on worker %d: ", lp.Worker)
	if lp.Exact {
		fmt.Fprintf(w, "task %d", lp.Task)
		if lp.Name != "" {
			fmt.Fprintf(w, " %q", lp.Name)
		}
		fmt.Fprintf(w, " has run %s in one poll without yielding (threshold %s)\n", fmtDur(lp.For), fmtDur(s.cfg.SlowPoll))
	} else {
		fmt.Fprintf(w, "a tick of polls has run %s without ending: a task has not yielded (threshold %s; it is one of the running tasks below; Config.PollTiming names it)\n",
			fmtDur(lp.For), fmtDur(LongTickThreshold))
	}
	if lp.Queued > 0 {
		fmt.Fprintf(w, "\t%d tasks queued behind it on this worker\n", lp.Queued)
	}
	for _, l := range strings.Split(lp.Stack, "\n") {
		if l != "" {
			fmt.Fprintf(w, "\t%s\n", l)
		}
	}
}

// writeHolder writes ", held by task N" for a task waiting on a lock whose
// holder is known.
func writeHolder(w *bufio.Writer, t *TaskInfo) {
	if t.WaitsFor != 0 && t.Wait.Kind().Object() != future.WaitTask {
		fmt.Fprintf(w, " held by task %d", t.WaitsFor)
	}
}

// dumpDeadlock writes a cycle of the wait-for graph, before the tasks:
//
//	DEADLOCK: tasks 5 and 6 wait for each other
//		task 5 "a" waits on Mutex.Lock 2 held by task 6
//		task 6 "b" waits on Mutex.Lock 1 held by task 5
func dumpDeadlock(w *bufio.Writer, cycle []TaskInfo) {
	ids := make([]string, len(cycle))
	for i, t := range cycle {
		ids[i] = strconv.FormatUint(t.ID, 10)
	}
	switch len(cycle) {
	case 1:
		fmt.Fprintf(w, "\nDEADLOCK: task %s waits for itself\n", ids[0])
	case 2:
		fmt.Fprintf(w, "\nDEADLOCK: tasks %s and %s wait for each other\n", ids[0], ids[1])
	default:
		fmt.Fprintf(w, "\nDEADLOCK: tasks %s wait in a cycle\n", strings.Join(ids, ", "))
	}
	for i := range cycle {
		t := &cycle[i]
		fmt.Fprintf(w, "\ttask %d", t.ID)
		if t.Name != "" {
			fmt.Fprintf(w, " %q", t.Name)
		}
		fmt.Fprintf(w, " waits on %s", t.Wait)
		if t.Wait.Kind().Object() != future.WaitTask {
			fmt.Fprintf(w, " held by task %d", t.WaitsFor)
		}
		if t.AwaitAt != "" {
			fmt.Fprintf(w, ", at %s", t.AwaitAt)
		}
		w.WriteString("\n")
	}
}
