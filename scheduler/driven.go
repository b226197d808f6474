package scheduler

import (
	"errors"
	"fmt"
	"time"

	"github.com/blitz-go/blitz/header"
)

// Chooser picks which ready task a driven scheduler polls next (see
// Config.Chooser and the package doc, "Driven schedulers"). A deterministic
// simulator implements it with a seeded source: uniform random choice,
// priorities (PCT), or first-come first-served.
type Chooser interface {
	// Choose returns the index in ready of the task to poll next. ready
	// holds the ids of the tasks ready to run, never empty, in the order
	// they became ready (a task ready since the last step is appended at
	// the end). An index out of range panics in Step. Called by Step, on
	// the driving goroutine.
	Choose(ready []uint64) int
}

// ErrNotDriven is returned by Step on a scheduler that has worker goroutines
// (no Config.Chooser).
var ErrNotDriven = errors.New("scheduler: not a driven scheduler (Config.Chooser is nil)")

// driven is the state of a driven scheduler: the ready tasks the chooser
// picks from. Owned by the driving goroutine (Step's caller).
type driven struct {
	chooser Chooser
	// ready are the tasks collected from the worker's queues, in the order
	// they were found; ids mirrors it for the chooser.
	ready []*header.Header
	ids   []uint64
	// stepping is set while Step polls a task; a Shutdown called from
	// that poll sets closeAfterStep, and Step finishes the shutdown once
	// the poll returned.
	stepping, closeAfterStep bool
}

// Driven reports whether s is a driven scheduler (Config.Chooser set).
func (s *Scheduler) Driven() bool { return s.driven != nil }

// Step is one step of a driven scheduler: it runs the Driver (the timers
// and I/O due now wake their tasks), gathers every ready task, and polls
// the one the Chooser picks. It reports whether it polled a task; when it
// did not (nothing is ready), wait is how long until the Driver has
// something due, negative when it has nothing pending: the driving loop
// then advances its clock (or reports that every task waits forever).
// Only one goroutine drives a scheduler; Step must not be called from a
// task's poll. On a scheduler with worker goroutines it returns
// ErrNotDriven, and after Shutdown began it returns (false, -1, nil).
func (s *Scheduler) Step() (polled bool, wait time.Duration, err error) {
	d := s.driven
	if d == nil {
		return false, 0, ErrNotDriven
	}
	if s.closing.Load() {
		return false, -1, nil
	}
	w := s.workers[0]
	wait = w.maintain()
	polled = s.pollChosen(w)
	return polled, wait, nil
}

// StepReady is Step without running the Driver first: it polls one of the
// tasks ready now (those the last Maintain or Step gathered, and any made
// ready since), as the Chooser picks, and reports whether there was one.
// A simulator that has just run Maintain on the scheduler, to choose among
// several, calls it to save a second run of the Driver. It returns
// ErrNotDriven as Step does, and false after Shutdown began.
func (s *Scheduler) StepReady() (polled bool, err error) {
	if s.driven == nil {
		return false, ErrNotDriven
	}
	if s.closing.Load() {
		return false, nil
	}
	return s.pollChosen(s.workers[0]), nil
}

// pollChosen gathers the ready tasks and polls the one the Chooser picks,
// if there is one.
func (s *Scheduler) pollChosen(w *worker) bool {
	d := s.driven
	w.setClock(time.Now())
	s.gatherReady(w)
	if len(d.ready) == 0 {
		return false
	}
	i := d.chooser.Choose(d.ids)
	if i < 0 || i >= len(d.ready) {
		panic(fmt.Sprintf("scheduler: Chooser.Choose returned %d for %d ready tasks", i, len(d.ready)))
	}
	h := d.ready[i]
	d.ready = append(d.ready[:i], d.ready[i+1:]...)
	d.ids = append(d.ids[:i], d.ids[i+1:]...)
	d.ready[len(d.ready):cap(d.ready)][0] = nil // the tail's copy of a moved pointer
	d.stepping = true
	w.runTask(h)
	d.stepping = false
	if d.closeAfterStep {
		s.shutdownDriven()
	}
	return true
}

// Ready returns the number of tasks ready to run in a driven scheduler,
// after gathering the ones its queues hold.
func (s *Scheduler) Ready() int {
	if s.driven == nil {
		return 0
	}
	s.gatherReady(s.workers[0])
	return len(s.driven.ready)
}

// ReadyIDs gathers the ready tasks of a driven scheduler without running
// its Driver, and appends their ids to dst in the order Step's Chooser
// will see them: for a simulator that knows the Driver has nothing due.
// It returns dst unchanged on a scheduler that is not driven or is shut
// down.
func (s *Scheduler) ReadyIDs(dst []uint64) []uint64 {
	if s.driven == nil || s.closing.Load() {
		return dst
	}
	s.gatherReady(s.workers[0])
	return append(dst, s.driven.ids...)
}

// Maintain runs a driven scheduler's Driver (the timers and I/O due now
// wake their tasks), gathers the ready tasks, and appends their ids to
// dst, in the order Step's Chooser will see them. wait is as in Step: how
// long until the Driver has something due, negative when nothing is
// pending. A simulator of several runtimes calls it on each to choose
// which one steps. It returns dst unchanged and -1 on a scheduler that is
// not driven or is shut down.
func (s *Scheduler) Maintain(dst []uint64) (ready []uint64, wait time.Duration) {
	if s.driven == nil || s.closing.Load() {
		return dst, -1
	}
	w := s.workers[0]
	wait = w.maintain()
	s.gatherReady(w)
	return append(dst, s.driven.ids...), wait
}

// gatherReady moves every task waiting in w's sources into the ready list,
// in a fixed order: the global queue (spawns and wakes from outside a
// poll), the local queue (rescheduled tasks), the LIFO (woken or spawned by
// a poll, oldest first), then the tasks that yielded.
func (s *Scheduler) gatherReady(w *worker) {
	d := s.driven
	for h := s.global.Pop(); h != nil; h = s.global.Pop() {
		d.add(h)
	}
	for h := w.local.Pop(); h != nil; h = w.local.Pop() {
		d.add(h)
	}
	for i := 0; i < w.lifoLen; i++ {
		d.add(w.lifo[i])
		w.lifo[i] = nil
	}
	w.lifoPub.clearAll(w.lifoLen)
	w.lifoLen = 0
	for i, h := range w.deferred {
		d.add(h)
		w.deferred[i] = nil
	}
	w.deferred = w.deferred[:0]
}

// add appends h to the ready list.
func (d *driven) add(h *header.Header) {
	d.ready = append(d.ready, h)
	d.ids = append(d.ids, taskOf(h).id)
}

// shutdownDriven is Shutdown for a driven scheduler, run on the driving
// goroutine: nothing polls a shielded task any more, so shields are cut at
// once (counted), and every task left is finished with ErrShutdown before
// it returns. Called from a poll (a task shutting its runtime down), it
// only refuses spawns, and Step finishes the shutdown after the poll.
func (s *Scheduler) shutdownDriven() {
	if s.driven.stepping {
		s.closing.Store(true) // spawns refused from now on
		s.driven.closeAfterStep = true
		return
	}
	s.shutdownOnce.Do(func() {
		s.shields.cut.Add(uint64(s.shieldedTasks()))
		s.shields.once.Do(func() { close(s.shields.graceOver) })
		s.stopWorkers()
		w := s.workers[0]
		s.gatherReady(w)
		s.global.Close()
		for i, h := range s.driven.ready {
			s.shutdownTask(h)
			s.driven.ready[i] = nil
		}
		s.driven.ready, s.driven.ids = nil, nil
		s.drain()
		close(s.done)
	})
}
