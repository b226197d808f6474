package simprims

import (
	"errors"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// joinSetState is the JoinSet workload's shared state.
type joinSetState struct {
	set *blitz.JoinSet[int]
	// seen counts, per task id, the outcomes the collectors got; finished
	// marks the tasks that ran to their end.
	seen     map[int]int
	finished map[int]bool
}

// joinSetWorkload checks, in two phases, what a JoinSet promises. First,
// collection: tasks tasks that pause and return their id, collected by
// collectors tasks awaiting Next at once, until ErrJoinSetEmpty: every
// outcome must be collected exactly once. Then cancel-on-close: tasks
// tasks that sleep 0 to 3 ms, a Close at a random point, and one task
// spawned after the Close: each outcome must be the value of a task that
// finished or ErrCancelled for one that did not, and the late task must
// never run.
//
//blitz:async
func joinSetWorkload(tasks, collectors int) error {
	if err := future.Await(collectAllAsync(tasks, collectors)); err != nil {
		return err
	}
	return future.Await(cancelOnCloseAsync(tasks))
}

// collectAll is the collection phase of joinSetWorkload.
//
//blitz:async
func collectAll(tasks, collectors int) error {
	s := &joinSetState{set: new(blitz.JoinSet[int]), seen: map[int]int{}, finished: map[int]bool{}}
	for id := range tasks {
		s.set.Spawn(future.Cx(), s.workerAsync(id, 0))
	}
	fs := make([]future.Future[error], 0, collectors)
	for range collectors {
		fs = append(fs, s.collectorAsync())
	}
	if err := future.Await(allAsync(fs)); err != nil {
		return err
	}
	for id := range tasks {
		if s.seen[id] != 1 {
			return violation("joinset: task %d's outcome collected %d times", id, s.seen[id])
		}
	}
	return nil
}

// cancelOnClose is the cancel-on-close phase of joinSetWorkload.
//
//blitz:async
func cancelOnClose(tasks int) error {
	s := &joinSetState{set: new(blitz.JoinSet[int]), seen: map[int]int{}, finished: map[int]bool{}}
	for id := range tasks {
		s.set.Spawn(future.Cx(), s.workerAsync(id, between(future.Cx(), 3)))
	}
	future.Await(pauseAsync())
	s.set.Close()
	s.set.Spawn(future.Cx(), s.workerAsync(tasks, 0))
	values := 0
	for range tasks + 1 {
		v, err := future.Try(s.set.Next())
		switch {
		case err == nil && !s.finished[v]:
			return violation("joinset: the value of task %d, which did not finish", v)
		case err == nil:
			values++
		case !errors.Is(err, blitz.ErrCancelled):
			return err
		}
	}
	if s.finished[tasks] {
		return violation("joinset: a task spawned after Close ran")
	}
	if len(s.finished) != values {
		return violation("joinset: %d tasks finished, %d values reported (the others must be ErrCancelled)", len(s.finished), values)
	}
	if _, err := future.Try(s.set.Next()); !errors.Is(err, blitz.ErrJoinSetEmpty) {
		return violation("joinset: Next after every outcome: %v, want ErrJoinSetEmpty", err)
	}
	return nil
}

// worker sleeps d (with d zero, pauses), records that it finished and
// returns its id.
//
//blitz:async
func (s *joinSetState) worker(id int, d time.Duration) int {
	if d > 0 {
		future.Await(blitz.Sleep(d))
	} else {
		future.Await(pauseAsync())
	}
	s.finished[id] = true
	return id
}

// collector takes outcomes from the set until it is empty.
//
//blitz:async
func (s *joinSetState) collector() error {
	for {
		future.Await(pauseAsync())
		id, err := future.Try(s.set.Next())
		if errors.Is(err, blitz.ErrJoinSetEmpty) {
			return nil
		}
		if err != nil {
			return err
		}
		s.seen[id]++
	}
}

// joinHandleWorkload checks a JoinHandle awaited by several tasks at once
// (each through its own copy): awaiters tasks wait for a task that pauses
// and returns 42, all of which must get 42; as many wait for a task that
// sleeps an hour and is cancelled after a pause, all of which must get
// ErrCancelled; and as many wait for a task that pauses and returns 7
// while another copy of its handle is detached, each of which must get 7
// (it collected the outcome first) or ErrDetached. An awaiter whose wake
// is lost waits for ever, and the run ends in a deadlock.
//
//blitz:async
func joinHandleWorkload(awaiters int) error {
	value := blitz.Spawn(future.Cx(), valueLaterAsync(42))
	never := blitz.Spawn(future.Cx(), sleepHourAsync())
	detached := blitz.Spawn(future.Cx(), valueLaterAsync(7))
	fs := make([]future.Future[error], 0, 3*awaiters+2)
	for range awaiters {
		fs = append(fs, awaitHandleAsync(value, 42), awaitHandleAsync(never, -1), awaitDetachedAsync(detached, 7))
	}
	fs = append(fs, cancelLaterAsync(never), detachLaterAsync(detached))
	return future.Await(allAsync(fs))
}

// detachLater detaches h after a pause.
//
//blitz:async
func detachLater(h blitz.JoinHandle[int]) error {
	future.Await(pauseAsync())
	h.Detach()
	return nil
}

// awaitDetached awaits h, which another task detaches, after a pause: its
// outcome must be want or ErrDetached.
//
//blitz:async
func awaitDetached(h blitz.JoinHandle[int], want int) error {
	future.Await(pauseAsync())
	v, err := future.Try(h)
	if (err != nil || v != want) && !errors.Is(err, blitz.ErrDetached) {
		return violation("joinhandle: a detached handle's outcome %d, %v; want %d or ErrDetached", v, err, want)
	}
	return nil
}

// valueLater returns v after a pause.
//
//blitz:async
func valueLater(v int) int {
	future.Await(pauseAsync())
	return v
}

// sleepHour sleeps an hour of virtual time and returns 0.
//
//blitz:async
func sleepHour() int {
	future.Await(blitz.Sleep(time.Hour))
	return 0
}

// cancelLater cancels h's task after a pause.
//
//blitz:async
func cancelLater(h blitz.JoinHandle[int]) error {
	future.Await(pauseAsync())
	future.Await(pauseAsync())
	h.Cancel()
	return nil
}

// awaitHandle awaits h after a pause: its value must be want, or, for
// want -1, its error ErrCancelled.
//
//blitz:async
func awaitHandle(h blitz.JoinHandle[int], want int) error {
	future.Await(pauseAsync())
	v, err := future.Try(h)
	if want < 0 {
		if !errors.Is(err, blitz.ErrCancelled) {
			return violation("joinhandle: a cancelled task's outcome %d, %v; want ErrCancelled", v, err)
		}
		return nil
	}
	if err != nil || v != want {
		return violation("joinhandle: outcome %d, %v; want %d", v, err, want)
	}
	return nil
}
