package blocking

// The pool: Submit, the worker loop, the idle list and Shutdown. The
// protocol is in doc.go; comments cite its sections by name.

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// States of Task.state. Task.state is read and written only with Pool.mu
// held, by Submit, by the worker that takes the task, and by Shutdown.
const (
	taskIdle    uint8 = iota // the submitter owns the task
	taskQueued               // in the pool's queue
	taskRunning              // handed to a worker that has not yet called Run
)

// Pool runs blocking work on goroutines started on demand, at most
// Config.MaxThreads at a time, queueing the rest. The zero Pool is not
// usable: use New. A Pool is safe for concurrent use. See the package doc
// for the protocol.
type Pool struct {
	// Set by New, read-only afterwards.
	maxThreads  int
	idleTimeout time.Duration
	// exited is closed, once, when the pool is closed and its last worker
	// has exited ("Shutdown", step 4). Made by New.
	exited chan struct{}
	// hook, when set (by tests, before the pool is shared), is called at
	// the pause points of hook.go.
	hook func(hookPoint)

	// mu guards every field below, the idle list (worker.prev, .next,
	// .parked), and the next and state fields of every Task submitted to
	// this pool. It is never held while Run, Panicked or Reject runs.
	mu sync.Mutex
	// head and tail are the queue, linked through Task.next (FIFO: Submit
	// appends at tail, workers take from head). pending is its length.
	head, tail *Task
	pending    int
	// idle is the top of the stack of parked workers, linked through
	// worker.next; nIdle is its depth ("Idle workers").
	idle  *worker
	nIdle int
	// threads counts the workers alive: incremented by Submit when it
	// starts one, decremented by a worker in the critical section in which
	// it decides to exit.
	threads int
	// closed is set by the first Shutdown; Submit then fails.
	closed bool
	// Counters of Stats and Report, written by workers and Shutdown.
	started, ran, panics uint64
	report               Report
}

// worker is the state of one worker goroutine that others touch.
type worker struct {
	// wake carries one task (or nil: exit) to the parked worker. Buffered
	// 1; sent to, under mu, only by whoever pops the worker off the idle
	// list, so the send never blocks ("Idle workers", rule 1). Made once
	// per worker.
	wake chan *Task
	// prev and next link the idle list; parked says the worker is on it.
	// Guarded by Pool.mu.
	prev, next *worker
	parked     bool
	// timer measures the idle timeout; while timerArmed it will fire, maybe
	// for an earlier park ("The idle timer"). Made, stopped, with the
	// worker. Owned by the worker goroutine.
	timer      *time.Timer
	timerArmed bool
}

// newWorker makes the record of a worker about to start: everything a
// worker allocates, it allocates here.
//
// Executed by Submit and abandon.
func newWorker() *worker {
	w := &worker{wake: make(chan *Task, 1), timer: time.NewTimer(time.Hour)}
	w.timer.Stop()
	return w
}

// New returns a pool shaped by cfg; zero fields take the defaults. It
// returns an error wrapping ErrConfig for a negative MaxThreads or
// IdleTimeout. It starts no goroutine.
func New(cfg Config) (*Pool, error) {
	if cfg.MaxThreads < 0 {
		return nil, fmt.Errorf("%w: MaxThreads %d is negative", ErrConfig, cfg.MaxThreads)
	}
	if cfg.IdleTimeout < 0 {
		return nil, fmt.Errorf("%w: IdleTimeout %v is negative", ErrConfig, cfg.IdleTimeout)
	}
	if cfg.MaxThreads == 0 {
		cfg.MaxThreads = DefaultMaxThreads
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	return &Pool{
		maxThreads:  cfg.MaxThreads,
		idleTimeout: cfg.IdleTimeout,
		exited:      make(chan struct{}),
	}, nil
}

// Submit hands t to an idle worker, or starts a worker for it if fewer than
// MaxThreads are alive, or else queues it ("Starting workers"). It returns
// an error wrapping ErrNilTask if t or t.Run is nil, ErrClosed once Shutdown
// has begun, and ErrQueued if t was submitted and its Run or Reject has not
// been called yet. On success the pool owns t until it calls t.Run or
// t.Reject ("Ownership of a Task"). Submit never blocks on the work and,
// unless it starts a worker, allocates nothing.
//
// Any goroutine may call Submit, including a Run.
func (p *Pool) Submit(t *Task) error {
	if t == nil || t.Run == nil {
		return fmt.Errorf("%w: Run is nil", ErrNilTask)
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return fmt.Errorf("%w: submit after Shutdown", ErrClosed)
	}
	if t.state != taskIdle {
		p.mu.Unlock()
		return fmt.Errorf("%w: its Run has not been called yet", ErrQueued)
	}
	if w := p.popIdleLocked(); w != nil {
		t.state = taskRunning
		p.handOffLocked(w, t)
		p.mu.Unlock()
		return nil
	}
	if p.threads < p.maxThreads {
		t.state = taskRunning
		p.threads++
		p.started++
		p.mu.Unlock()
		go p.work(newWorker(), t)
		return nil
	}
	t.state = taskQueued
	if p.tail == nil {
		p.head = t
	} else {
		p.tail.next = t
	}
	p.tail = t
	p.pending++
	p.mu.Unlock()
	return nil
}

// Go submits a Task, allocated here, that runs fn; a panic of fn is not
// recovered. Errors are those of Submit.
//
// Any goroutine may call Go.
func (p *Pool) Go(fn func()) error {
	if fn == nil {
		return fmt.Errorf("%w: fn is nil", ErrNilTask)
	}
	return p.Submit(&Task{Run: fn})
}

// Stats returns the pool's counters, read together under the pool's lock.
//
// Any goroutine may call Stats.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{
		Threads: p.threads,
		Idle:    p.nIdle,
		Pending: p.pending,
		Started: p.started,
		Ran:     p.ran,
		Panics:  p.panics,
	}
}

// Shutdown closes the pool: Submit fails with ErrClosed from now on, idle
// workers exit at once, and the tasks still queued run (RunQueued) or are
// rejected (RejectQueued) ("Shutdown"). Reject functions are called on the
// calling goroutine before Shutdown waits. Shutdown then waits until every
// worker has exited and returns what Shutdown did so far, counted from the
// first call. If ctx ends first it returns that Report and an error
// wrapping context.Cause(ctx); the workers still finish their tasks (and,
// under RunQueued, the queue) and exit later, and Shutdown may be called
// again to wait for them. A later call with RejectQueued rejects what is
// still queued then.
//
// Any goroutine but a worker of this pool may call Shutdown: a Run that
// calls it waits for itself until ctx ends.
func (p *Pool) Shutdown(ctx context.Context, policy Policy) (Report, error) {
	if policy != RunQueued && policy != RejectQueued {
		panic(fmt.Sprintf("blocking: Shutdown with unknown policy %d", policy))
	}
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		for w := p.popIdleLocked(); w != nil; w = p.popIdleLocked() {
			p.handOffLocked(w, nil) // exit
		}
		if p.threads == 0 {
			close(p.exited)
		}
	}
	var rejected *Task
	if policy == RejectQueued {
		rejected = p.head
		p.report.Rejected += p.pending
		p.head, p.tail, p.pending = nil, nil, 0
	}
	// Detach each task under mu, then call its Reject without it.
	var rejects []func(error)
	for t := rejected; t != nil; {
		next := t.next
		t.next, t.state = nil, taskIdle
		if t.Reject != nil {
			rejects = append(rejects, t.Reject)
		}
		t = next
	}
	p.mu.Unlock()
	for _, reject := range rejects {
		reject(ErrClosed)
	}

	select {
	case <-p.exited:
		return p.reportNow(), nil
	default:
	}
	select {
	case <-p.exited:
		return p.reportNow(), nil
	case <-ctx.Done():
		p.mu.Lock()
		r, n := p.report, p.threads
		p.mu.Unlock()
		return r, fmt.Errorf("blocking: shutdown: %d worker(s) still running: %w", n, context.Cause(ctx))
	}
}

// reportNow returns the Report under the lock.
//
// Any goroutine may call reportNow.
func (p *Pool) reportNow() Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.report
}

// work is the body of the worker goroutine w; first is the task it was
// started for, in state taskRunning (from Submit) or taskQueued (from
// abandon). It runs tasks until it finds none
// for idleTimeout, or finds none after Shutdown.
//
// Executed only by w's goroutine.
func (p *Pool) work(w *worker, first *Task) {
	normal := false
	defer func() {
		if !normal { // Run called runtime.Goexit, or panicked unrecovered
			p.abandon()
		}
	}()
	t := first
	p.mu.Lock()
	for t != nil {
		// Take t: from here on the submitter owns it again ("Ownership of
		// a Task"), so read what the worker needs first.
		run, panicked := t.Run, t.Panicked
		// A task taken from the queue after Shutdown: Shutdown let it run.
		inReport := t.state == taskQueued && p.closed
		t.state = taskIdle
		p.mu.Unlock()
		ok := call(run, panicked)
		p.mu.Lock()
		p.ran++
		if !ok {
			p.panics++
		}
		if inReport {
			p.report.Ran++
		}
		t = p.nextLocked(w)
	}
	p.exitLocked()
	p.mu.Unlock()
	normal = true
}

// nextLocked returns w's next task, in state taskQueued or taskRunning, or
// nil when w must exit: the queue's head if there is one; else, unless the
// pool is closed, a task handed to w while it is parked on the idle list
// ("Idle workers"). It returns with mu held, but releases it while parked.
//
// Executed only by w's goroutine; p.mu must be held.
func (p *Pool) nextLocked(w *worker) *Task {
	if t := p.head; t != nil {
		p.head, t.next = t.next, nil
		if p.head == nil {
			p.tail = nil
		}
		p.pending--
		return t
	}
	if p.closed {
		return nil
	}
	p.pushIdleLocked(w)
	p.mu.Unlock()

	// The timer stays armed across parks and is re-armed only when it has
	// fired ("The idle timer").
	parkedAt := time.Now()
	if !w.timerArmed {
		w.timer.Reset(p.idleTimeout)
		w.timerArmed = true
	}
	for {
		select {
		case t := <-w.wake:
			p.mu.Lock()
			return t
		case <-w.timer.C:
		}
		w.timerArmed = false
		rest := p.idleTimeout - time.Since(parkedAt)
		if rest <= 0 {
			break
		}
		w.timer.Reset(rest) // it fired for an earlier park
		w.timerArmed = true
	}
	if p.hook != nil {
		p.hook(hookIdleTimedOut)
	}
	p.mu.Lock()
	if w.parked { // nobody chose w: leave, still under mu (rule 2)
		p.removeIdleLocked(w)
		return nil
	}
	// Submit or Shutdown popped w after the timer fired and before w took
	// mu; its send is already buffered (rule 1).
	select {
	case t := <-w.wake:
		return t
	default:
		panic("blocking: nextLocked: popped off the idle list without a wake-up")
	}
}

// exitLocked counts a worker out and, if it was the last one after
// Shutdown, releases the goroutines waiting in Shutdown.
//
// Executed by an exiting worker; p.mu must be held.
func (p *Pool) exitLocked() {
	p.threads--
	if p.closed && p.threads == 0 {
		close(p.exited)
	}
}

// abandon accounts for a worker whose Run ended its goroutine (by
// runtime.Goexit, or by a panic that will end the program). The task counts
// as ran. If tasks are queued, a replacement worker takes the oldest, since
// the remaining workers may all be blocked and no Submit may come.
//
// Executed only by a worker goroutine that is ending, without p.mu.
func (p *Pool) abandon() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ran++
	if t := p.head; t != nil {
		p.head, t.next = t.next, nil
		if p.head == nil {
			p.tail = nil
		}
		p.pending--
		if !p.closed {
			t.state = taskRunning // not one that Shutdown let run
		}
		p.started++
		go p.work(newWorker(), t)
		return
	}
	p.exitLocked()
}

// call runs run and reports whether it returned normally. If panicked is
// set, a panic of run is recovered and passed to it with the stack;
// otherwise it goes on up and ends the program.
//
// Executed only by a worker goroutine, without p.mu.
func call(run func(), panicked func(value any, stack []byte)) (ok bool) {
	if panicked == nil {
		run()
		return true
	}
	returned := false
	defer func() {
		if returned {
			return
		}
		// recover returns nil during runtime.Goexit, which goes on; a
		// panic (panic(nil) included, since Go 1.21) is stopped here.
		if v := recover(); v != nil {
			panicked(v, debug.Stack())
		}
	}()
	run()
	returned = true
	return true
}

// handOffLocked gives t (nil: exit) to w, just popped off the idle list.
//
// Executed by Submit and Shutdown; p.mu must be held.
func (p *Pool) handOffLocked(w *worker, t *Task) {
	select {
	case w.wake <- t: // rule 1: received by w in nextLocked
	default:
		panic("blocking: handOffLocked: idle worker has a pending wake-up")
	}
}

// pushIdleLocked parks w on top of the idle stack.
//
// Executed only by w's goroutine; p.mu must be held.
func (p *Pool) pushIdleLocked(w *worker) {
	w.prev, w.next, w.parked = nil, p.idle, true
	if p.idle != nil {
		p.idle.prev = w
	}
	p.idle = w
	p.nIdle++
}

// popIdleLocked takes the most recently parked worker off the idle stack,
// or returns nil if none is parked.
//
// p.mu must be held.
func (p *Pool) popIdleLocked() *worker {
	w := p.idle
	if w == nil {
		return nil
	}
	p.removeIdleLocked(w)
	return w
}

// removeIdleLocked unlinks w, which is parked, from the idle stack.
//
// p.mu must be held.
func (p *Pool) removeIdleLocked(w *worker) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		p.idle = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	}
	w.prev, w.next, w.parked = nil, nil, false
	p.nIdle--
}
