package scheduler

import (
	"bytes"
	"fmt"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

// This file finds the polls that run long while they run: a task that does
// not yield holds its worker, and the dump must name it before the poll
// ends (a slow poll is otherwise recorded only when it ends). See the
// package doc, "Long polls".

// LongTickThreshold is the age from which a worker's tick in progress
// counts as a long poll without Config.PollTiming, which alone times each
// poll: a tick runs at most BudgetPerTick polls, so a tick this old holds a
// poll of at least LongTickThreshold/BudgetPerTick, and most often one poll
// that has not yielded for about as long. With PollTiming, the threshold is
// Config.SlowPoll, per poll.
const LongTickThreshold = 100 * time.Millisecond

// LongPoll is a poll in progress that has run past the threshold: the task
// holds its worker and has not yielded.
type LongPoll struct {
	// Worker is the index of the worker polling the task.
	Worker int
	// Task is the task's id and Name its name, with Config.PollTiming;
	// without it, 0 and "" (the dump then finds the task among the running
	// ones).
	Task uint64
	Name string
	// For is how long the poll has run: exactly with Config.PollTiming;
	// without it, how long the worker's tick holding the poll has run,
	// which is at least as long.
	For time.Duration `json:"ForNs"`
	// Exact says For is the poll's own duration (Config.PollTiming).
	Exact bool
	// Queued is the length of the worker's local queue: tasks that wait
	// behind the long poll unless another worker steals them.
	Queued int
	// Stack is the worker goroutine's stack, innermost first, down to the
	// scheduler's frames: the line the task is on. It is read from a
	// goroutine profile, when asked for, and found by the worker's pprof
	// label, or, with Config.ProfileLabels (whose labels replace the
	// worker's during a poll), by the task's with Config.PollTiming. ""
	// when it cannot be had.
	Stack string
}

// LongPolls returns the polls in progress that have run past the
// threshold (Config.SlowPoll per poll with Config.PollTiming, else
// LongTickThreshold per tick), by worker. With stacks, it takes a
// goroutine profile (which stops the world for a moment) to find each
// worker's stack. Any goroutine may call it.
func (s *Scheduler) LongPolls(stacks bool) []LongPoll {
	now := s.now()
	var long []LongPoll
	for i, w := range s.workers {
		if s.cfg.PollTiming {
			if at, id, x, ok := w.pollInProgress(); ok && time.Duration(now-at) >= s.cfg.SlowPoll {
				lp := LongPoll{Worker: i, Task: id, For: time.Duration(now - at), Exact: true, Queued: w.stealer.Len()}
				if x != nil {
					lp.Name = x.name
				}
				long = append(long, lp)
			}
			continue
		}
		if at := w.tickAt.Load(); at >= 0 && time.Duration(now-at) >= LongTickThreshold { // tickAt: stored by w
			long = append(long, LongPoll{Worker: i, For: time.Duration(now - at), Queued: w.stealer.Len()})
		}
	}
	if stacks && len(long) > 0 {
		s.findStacks(long)
	}
	return long
}

// pollInProgress returns the poll w runs, with Config.PollTiming: when it
// began, its task's id and side record. ok is false between polls. The
// three are stored apart by w; a poll's start, in nanoseconds, tells one
// poll from the next, so reading it before and after the others gives them
// from one poll.
func (w *worker) pollInProgress() (at int64, id uint64, x *taskExt, ok bool) {
	for range 8 {
		at = w.pollAt.Load() // pollAt, pollID, pollExt: stored by w around each poll
		if at < 0 {
			return 0, 0, nil, false
		}
		id, x = w.pollID.Load(), w.pollExt.Load()
		if w.pollAt.Load() == at {
			return at, id, x, true
		}
	}
	return 0, 0, nil, false // w polls faster than it can be read: none is long
}

// findStacks fills in the Stack of each long poll from a goroutine profile.
func (s *Scheduler) findStacks(long []LongPoll) {
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		return
	}
	blocks := parseGoroutineProfile(b.String())
	for i := range long {
		lp := &long[i]
		for _, g := range blocks {
			if !g.worker {
				continue
			}
			if g.labels["blitz.worker"] == strconv.Itoa(lp.Worker) && g.labels["blitz.scheduler"] == s.label ||
				lp.Task != 0 && g.labels["blitz.task.id"] == strconv.FormatUint(lp.Task, 10) {
				lp.Stack = g.stack
				break
			}
		}
	}
}

// profiledGoroutines is a group of goroutines of a goroutine profile
// (debug=1): their labels, whether they are a worker (runWorker is on
// their stack), and their stack down to the scheduler's frames.
type profiledGoroutines struct {
	labels map[string]string
	worker bool
	stack  string
}

// labelPair matches one "key":"value" of a profile's labels line.
var labelPair = regexp.MustCompile(`"((?:[^"\\]|\\.)*)":"((?:[^"\\]|\\.)*)"`)

// parseGoroutineProfile splits a debug=1 goroutine profile into its groups.
func parseGoroutineProfile(p string) []profiledGoroutines {
	var out []profiledGoroutines
	for _, block := range strings.Split(p, "\n\n") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		if len(lines) < 2 || !strings.Contains(lines[0], " @ ") {
			continue
		}
		g := profiledGoroutines{labels: map[string]string{}}
		var frames []string
		inUser := true
		for _, l := range lines[1:] {
			if rest, ok := strings.CutPrefix(l, "# labels: "); ok {
				for _, m := range labelPair.FindAllStringSubmatch(rest, -1) {
					k, _ := strconv.Unquote(`"` + m[1] + `"`)
					v, _ := strconv.Unquote(`"` + m[2] + `"`)
					g.labels[k] = v
				}
				continue
			}
			// #	0x4b7c1f	main.spin+0x1f	/src/app/main.go:42, the
			// columns aligned with more tabs.
			f := strings.FieldsFunc(strings.TrimPrefix(l, "#"), func(r rune) bool { return r == '\t' })
			if len(f) < 3 {
				continue
			}
			fn, _, _ := strings.Cut(f[1], "+0x")
			if fn == workerEntryName {
				g.worker = true
			}
			if strings.HasPrefix(fn, "github.com/blitz-go/blitz/scheduler.") {
				inUser = false
			}
			if inUser {
				frames = append(frames, fmt.Sprintf("%s\n\t%s", fn, strings.TrimSpace(f[2])))
			}
		}
		g.stack = strings.Join(frames, "\n")
		out = append(out, g)
	}
	return out
}

// workerEntryName is runWorker's name in a stack.
const workerEntryName = "github.com/blitz-go/blitz/scheduler.runWorker"
