package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/globalq"
	"github.com/blitz-go/blitz/header"
	"github.com/blitz-go/blitz/idle"
	"github.com/blitz-go/blitz/waker"
	"github.com/blitz-go/blitz/wsqueue"
)

// Scheduler is the work-stealing executor: Config.Workers worker goroutines,
// each with a LIFO slot and a local queue, a global injection queue, and the
// idle protocol between them. See the package doc for the protocol.
//
// All methods are safe for concurrent use. A Scheduler starts its workers in
// New and stops them in Shutdown; it must be shut down to release them.
type Scheduler struct {
	// The fields before global are read by the workers' loops and by
	// spawns, and written once at most (closing, by Shutdown).
	cfg     Config
	workers []*worker
	// idle coordinates searching and parked workers.
	idle *idle.State
	// blocker is cfg.Driver as a Blocker, or nil. Immutable.
	blocker Blocker
	// closing is set once by Shutdown; workers leave their loops when they
	// see it, and spawns after it are refused.
	closing atomic.Bool
	// snapReq is the snapshot request in progress (askWorkers), nil when
	// there is none: stored by the snapshot, loaded by the workers between
	// polls (worker.checkSnapshot).
	snapReq atomic.Pointer[snapRequest]
	// driven is the ready list of a driven scheduler (Config.Chooser), nil
	// for one with worker goroutines. Immutable pointer; its contents are
	// owned by the driving goroutine.
	driven *driven
	// failed keeps the latest failed tasks (warnings.go).
	failed failedRing
	// label tells this scheduler's workers from another's in a goroutine
	// profile (their blitz.scheduler pprof label). Immutable.
	label string
	// epoch is when New ran: the origin of the tasks' clock (now).
	// Immutable.
	epoch time.Time
	// owned lists every live task, for the shutdown.
	owned ownedTasks
	// spares holds, for each type of task spawned by value without a
	// handle, a *sparesEntry: the pool of finished tasks of that type that
	// a spawn from any goroutine may reuse (see recycle and sparesOf).
	// Keyed by the type's nil *detachedTask; safe for concurrent use.
	spares sync.Map
	// sparesHint is the entry of spares looked up last (see sparesOf).
	sparesHint atomic.Pointer[sparesEntry]
	// global is the injection queue: spawns from outside the workers,
	// wakes from goroutines, overflow of the local queues. Padded on both sides.
	global globalq.Queue[header.Header, *header.Header]
	// joins are the locks of the tasks' JoinHandles (see taskBase.join).
	joins [joinStripes]joinStripe
	// wg counts running worker goroutines.
	wg sync.WaitGroup
	// shutdownOnce starts the shutdown; done is closed when it finished.
	// shields records the shutdown's wait for shielded tasks (shield.go).
	shutdownOnce sync.Once
	shields      shieldState
	done         chan struct{}
	// slow keeps the latest slow polls (Config.PollTiming), for Stats.
	slow slowPolls
	// snapMu orders the task snapshots (SnapshotTasks), one at a time,
	// and the shutdown's drain after any of them that holds the global
	// queue's tasks out of it (takeGlobal).
	snapMu sync.Mutex
	// snapQ is the queue into which a snapshot steals the local queue of a
	// worker that did not answer it (takeLocal), made at the first need.
	// Guarded by snapMu.
	snapQ *wsqueue.Owner[header.Header]
	// Counters for Stats that a spawn from outside the workers writes, each
	// of them: on lines of their own, away from the fields the workers'
	// loops read (closing, epoch). The workers count their own spawns.
	_             pad
	spawnedRemote atomic.Uint64
	// ids is the last task id handed out (see newID): workers reserve
	// blocks of idBlock from it, spawns from outside one id each.
	ids atomic.Uint64
	_   pad
	// Counters of completions for Stats, by whichever worker completes.
	panicked  atomic.Uint64
	cancelled atomic.Uint64
}

// New starts a scheduler with cfg (see Config for the defaults). It returns
// an error wrapping ErrConfig for an invalid Config.
func New(cfg Config) (*Scheduler, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Scheduler{cfg: cfg, done: make(chan struct{}), epoch: time.Now(), label: strconv.FormatUint(schedulers.Add(1), 10)}
	s.shields.graceOver = make(chan struct{})
	s.failed.keep = cfg.FailedTasksKept
	s.idle = idle.New(cfg.Workers)
	if b, ok := cfg.Driver.(Blocker); ok {
		s.blocker = b
		s.idle.SetUnparker(b.Unpark)
	}
	var remote *atomic.Uint64
	if cfg.MaxLiveTasks <= 0 {
		remote = &s.spawnedRemote
	}
	s.owned.init(cfg.Workers, remote)
	s.workers = make([]*worker, cfg.Workers)
	for i := range s.workers {
		s.workers[i] = newWorker(s, i)
	}
	if cfg.Chooser != nil {
		s.driven = &driven{chooser: cfg.Chooser}
		return s, nil // driven: Step polls, no goroutine
	}
	s.wg.Add(len(s.workers))
	for _, w := range s.workers {
		go runWorker(w)
	}
	return s, nil
}

// schedulers counts the schedulers made, for their labels.
var schedulers atomic.Uint64

// Workers returns the number of workers.
func (s *Scheduler) Workers() int { return len(s.workers) }

// Services returns Config.Services; it makes *Scheduler a future.Executor.
func (s *Scheduler) Services() any { return s.cfg.Services }

// Schedule queues h, just moved from Idle to Scheduled by a wake, on the
// global queue and notifies an idle worker. It makes *Scheduler a
// header.Scheduler; Header.Wake calls it from any goroutine. After shutdown
// began the global queue refuses h, and the shutdown sweep finishes it.
// h must be the header of a task spawned on s (the workers reach the task
// around it from h).
func (s *Scheduler) Schedule(h *header.Header) {
	if s.cfg.PollTiming {
		s.noteScheduled(h)
	}
	if s.global.Push(h) {
		s.idle.NotifyOne()
	}
}

// WakeLocal wakes wk from a poll on one of this scheduler's workers, sending
// the task to that worker's LIFO slot; it makes *Scheduler a
// future.Executor. It reports false, doing nothing, when wk is not one of
// this scheduler's tasks or cx is not a worker's Context.
func (s *Scheduler) WakeLocal(cx *future.Context, wk waker.Waker) bool {
	h, ok := wk.Target().(*header.Header)
	w := s.localWorker(cx)
	if !ok || w == nil || h.Scheduler() != header.Scheduler(s) {
		return false
	}
	if h.TransitionToScheduled() == header.ScheduleEnqueue {
		if s.cfg.PollTiming {
			s.noteScheduled(h)
		}
		w.scheduleLocal(h)
	}
	return true
}

// Notify wakes an idle worker if none is searching, so that it looks at the
// global queue and runs the Driver. The runtime calls it when it makes a
// timer due sooner than any parked worker expects.
func (s *Scheduler) Notify() { s.idle.NotifyOne() }

// NotifyWorker wakes worker id if it is parked, whatever the other workers
// do, and reports whether it did: for work only that worker looks at (the
// runtime calls it when an I/O ring that no worker waits on gets an
// operation in flight, and worker id is one that waits on that ring). The
// worker runs the Driver and parks again. The caller publishes the work
// first (the operation is counted in flight), and the Blocker's TryAcquire
// looks at it after the worker announced itself parked, so one of the two
// sees the other. id is from 0 to Workers()-1.
func (s *Scheduler) NotifyWorker(id int) bool { return s.idle.NotifyWorker(id) }

// localWorker returns the worker whose poll cx belongs to, or nil.
func (s *Scheduler) localWorker(cx *future.Context) *worker {
	if cx == nil || cx.Executor() != future.Executor(s) {
		return nil
	}
	if id := cx.Worker(); id >= 0 && id < len(s.workers) {
		return s.workers[id]
	}
	return nil
}

// workerIndex returns the index of the worker whose poll cx belongs to, or
// -1.
func (s *Scheduler) workerIndex(cx *future.Context) int {
	if w := s.localWorker(cx); w != nil {
		return w.id
	}
	return -1
}

// countFinish updates the counters for a task that finished with err; on a
// worker (cx not nil) the worker counts the completion itself.
func (s *Scheduler) countFinish(cx *future.Context, err error) {
	if w := s.localWorker(cx); w != nil {
		w.ctr.completed++
	}
	if err == nil {
		return
	}
	// An abort whose Cancel panicked counts as both.
	if panicOf(err) != nil {
		s.panicked.Add(1)
	}
	if errors.Is(err, ErrCancelled) {
		s.cancelled.Add(1)
	}
}

// Shutdown stops the scheduler. First, if some tasks are in a shield
// (Shield), it cancels them and lets the scheduler run on, spawns
// included, until their shields end (they then end cancelled) or the ctx
// of Shutdown's first call ends; those still shielded then are cut as the
// other tasks are, counted in Stats().ShieldsCut and in the error
// Shutdown returns. Then spawning is refused
// from now on (the JoinHandle of a later Spawn resolves with ErrShutdown), the
// workers finish the poll they are in and exit, then every task that did not
// finish (queued, in a LIFO slot, idle on a waker, woken too late) is
// cancelled: its future's Cancel runs and its JoinHandle resolves with
// ErrShutdown. Shutdown returns nil once all of that is done and every
// goroutine the scheduler started has returned. If ctx ends first (a task
// whose poll never returns keeps its worker), it returns an error wrapping
// ctx's, and the shutdown goes on in the background; calling Shutdown again
// waits for it. Any goroutine may call it, any number of times. A task may
// call it to start the shutdown but cannot wait for it (its own worker
// would never exit): on a worker, Shutdown starts the shutdown and returns
// an error wrapping ErrBlockingInTask at once.
func (s *Scheduler) Shutdown(ctx context.Context) error {
	if s.driven != nil {
		s.shutdownDriven()
		if s.driven.closeAfterStep && s.driven.stepping {
			return fmt.Errorf("scheduler: shutdown started, finished after this poll: %w", ErrBlockingInTask)
		}
		if n := s.shields.cut.Load(); n > 0 {
			return fmt.Errorf("scheduler: shutdown of a driven scheduler, %d shielded task(s) cut: %w", n, ErrShutdown)
		}
		return nil
	}
	s.shutdownOnce.Do(func() {
		if s.shieldedTasks() == 0 && !OnWorker() {
			s.shields.once.Do(func() { close(s.shields.graceOver) }) // nothing to wait for
		}
		go func() {
			s.AwaitShields(ctx)
			s.stopWorkers()
			s.finishShutdown()
		}()
	})
	select {
	case <-s.done:
		return s.finishedErr(ctx) // done wins over an ended ctx
	default:
	}
	if OnWorker() {
		return fmt.Errorf("scheduler: shutdown started, not waited for: %w", ErrBlockingInTask)
	}
	select {
	case <-s.done:
		return s.finishedErr(ctx)
	case <-ctx.Done():
		select {
		case <-s.shields.graceOver:
		case <-time.After(10 * shieldPollEvery): // the grace notices an ended ctx within a tick
			return fmt.Errorf("scheduler: shutdown not finished, waiting for shielded tasks: %w", context.Cause(ctx))
		}
		if n := s.shields.cut.Load(); n > 0 {
			return fmt.Errorf("scheduler: shutdown not finished, %d shielded task(s) cut: %w", n, context.Cause(ctx))
		}
		return fmt.Errorf("scheduler: shutdown not finished: %w", context.Cause(ctx))
	}
}

// finishedErr is Shutdown's answer once the shutdown has finished: nil,
// unless the grace cut shielded tasks when ctx ended (ctx is then the
// first call's, or ended with it): that error does not depend on whether
// the call saw the end of its ctx or the end of the shutdown first.
func (s *Scheduler) finishedErr(ctx context.Context) error {
	if n := s.shields.cut.Load(); n > 0 && ctx.Err() != nil {
		return fmt.Errorf("scheduler: shutdown finished, %d shielded task(s) cut: %w", n, context.Cause(ctx))
	}
	return nil
}

// stopWorkers refuses spawns from now on and makes the workers leave their
// loops.
func (s *Scheduler) stopWorkers() {
	s.closing.Store(true)
	s.idle.Close()
}

// finishShutdown waits for the workers to exit, finishes the tasks left
// and marks the shutdown done. Run once, on a goroutine of its own.
func (s *Scheduler) finishShutdown() {
	s.wg.Wait()
	s.drain()
	close(s.done)
}

// Done returns a channel closed when the shutdown has finished.
func (s *Scheduler) Done() <-chan struct{} { return s.done }

// drain finishes every task left once the workers have exited: the queues
// first, then the owned list for tasks in none. Called once, by the
// shutdown goroutine, after wg.Wait (which hands it the workers' queues).
func (s *Scheduler) drain() {
	s.global.Close()
	for _, w := range s.workers {
		w.drain(s.shutdownTask)
	}
	s.snapMu.Lock() // a snapshot holding the global queue's tasks puts them back first
	for h := s.global.Pop(); h != nil; h = s.global.Pop() {
		s.shutdownTask(h)
	}
	s.snapMu.Unlock()
	s.owned.closeAndPop(func(t *taskBase) { s.shutdownTask(&t.Header) })
}

// shutdownTask claims h for the shutdown and aborts it with ErrShutdown.
// A task that is complete, or that another sweep step already claimed,
// is left alone.
func (s *Scheduler) shutdownTask(h *header.Header) {
	if h.TransitionToShutdown() {
		h.Task().Abort(ErrShutdown)
	}
}
