package parallel

import "sync/atomic"

// A pool's figures: see the package doc, sections "Metrics" and "Counting".

// Metrics are a pool's figures at one moment: each worker's counters, their
// totals, and the pool's gauges. Counters count from NewPool and never
// decrease; gauges are the value when Metrics read them. One worker's
// counters agree with each other (JobsStolen+JobsInjected <= JobsExecuted,
// Wakeups <= Sleeps), but they, the workers and the gauges are read one
// after another, not as one atomic snapshot. Work that has finished is
// counted exactly: once a call from outside the pool (Pool.Run, Pool.Join,
// Pool.Scope, a loop on a *Pool) has returned, every job it made is in the
// figures.
type Metrics struct {
	// Workers holds each worker's figures, by worker index
	// (Ctx.WorkerIndex).
	Workers []WorkerMetrics
	// Total is the sum of Workers, field by field.
	Total WorkerMetrics
	// Idle is the number of workers looking for work, asleep or not, and
	// Sleeping the number of those asleep.
	Idle, Sleeping int
	// InjectionQueue is the number of jobs submitted from outside the pool
	// that wait for a worker to take them.
	InjectionQueue int
}

// WorkerMetrics are one worker's figures. The counters are published by the
// worker itself: when it finishes a job it took from a queue (its deque,
// another worker's, the injection queue) and when it goes to sleep. Until
// then a long job's own joins may be missing from them.
type WorkerMetrics struct {
	// JobsExecuted counts the jobs the worker ran: the second function of
	// every Join, whether the worker that pushed it popped it back or
	// another stole it (the first function runs as a call inside the Join,
	// as the body of a Scope does), every job spawned into a Scope, and every
	// job submitted from outside the pool (Pool.Run, and Join, Scope and the
	// loops on a *Pool: one job each).
	JobsExecuted uint64
	// JobsStolen counts the jobs of JobsExecuted that the worker took from
	// another worker's deque.
	JobsStolen uint64
	// JobsInjected counts the jobs of JobsExecuted that were submitted from
	// outside the pool, which the worker took from the injection queue.
	JobsInjected uint64
	// Sleeps counts the times the worker, finding no work, went to sleep,
	// and Wakeups the times it was woken since. Wakeups is read first, so
	// Sleeps-Wakeups is at least 0; it is 1 while the worker sleeps and 0
	// while it works, but may be more in a reading taken as the worker
	// sleeps and wakes.
	Sleeps, Wakeups uint64
	// Queued is the number of jobs in the worker's deque, which the worker
	// will run unless others steal them.
	Queued int
}

// add adds w's fields to t's. Any goroutine may call it.
func (t *WorkerMetrics) add(w WorkerMetrics) {
	t.JobsExecuted += w.JobsExecuted
	t.JobsStolen += w.JobsStolen
	t.JobsInjected += w.JobsInjected
	t.Sleeps += w.Sleeps
	t.Wakeups += w.Wakeups
	t.Queued += w.Queued
}

// Metrics returns the pool's figures. It reads each worker's published
// counters and the pool's gauges, locking nothing and writing nothing the
// workers read. Any goroutine may call it, also a job, and also after Close.
func (p *Pool) Metrics() Metrics {
	m := Metrics{Workers: make([]WorkerMetrics, len(p.workers))}
	for i, c := range p.workers {
		w := c.published.load()
		w.Queued = c.stealer.Len()
		m.Workers[i] = w
		m.Total.add(w)
	}
	cw := counters(p.counters.Load()) // load; a gauge, no partner
	m.Idle, m.Sleeping = cw.inactive(), cw.sleeping()
	m.InjectionQueue = int(p.injected.n.Load()) // load; a gauge, no partner
	return m
}

// tally is a worker's counters as the worker keeps them: plain fields,
// which it increments where the events happen, the Join fast path among
// them, at the cost of an increment of a field on a cache line it owns
// (section "Counting"). Owner only: written and read by the worker's
// goroutine alone (and by its replacement after a Goexit, which the go
// statement orders after it). publish copies them for everyone else.
type tally struct {
	// executed counts the jobs the worker started: a Join's b popped back
	// (joinFrame) and every job run by execute.
	executed uint64
	// stolen and injected count the jobs found by steal and in the
	// injection queue (findWork). Each such job is counted in executed
	// too, by execute, with no publish in between: at every publish,
	// stolen+injected <= executed.
	stolen, injected uint64
	// sleeps counts the blocks in sleep (step 8 of "Going to sleep"),
	// wakeups the returns from them: at every publish, wakeups <= sleeps.
	sleeps, wakeups uint64
}

// published is a worker's tally as other goroutines see it (section
// "Counting"). Each field is written by the worker only, with atomic stores
// in publish, and read by any goroutine with atomic loads in load; the
// stores and loads are in opposite orders so that a reader never sees a
// subset count above its whole. The fields only grow, since the tally
// does.
type published struct {
	executed, stolen, injected, sleeps, wakeups atomic.Uint64
}

// publish makes t visible to load. A field is stored only if it changed, so
// that a publish costs one atomic store (a locked instruction on amd64) for
// the usual job, not five; the loads of the worker's own fields are plain
// reads. executed is stored before stolen and injected, sleeps before
// wakeups: the reverse of load's order. Called by the owning worker only:
// from finish, before the job's waiter is signalled, and from sleep.
func (pc *published) publish(t *tally) {
	if t.executed != pc.executed.Load() { // load; own field
		pc.executed.Store(t.executed) // store; before stolen and injected, pairs with load's last load
	}
	if t.stolen != pc.stolen.Load() { // load; own field
		pc.stolen.Store(t.stolen) // store; pairs with load's load of stolen
	}
	if t.injected != pc.injected.Load() { // load; own field
		pc.injected.Store(t.injected) // store; pairs with load's load of injected
	}
	if t.sleeps != pc.sleeps.Load() { // load; own field
		pc.sleeps.Store(t.sleeps) // store; before wakeups, pairs with load's load of sleeps
	}
	if t.wakeups != pc.wakeups.Load() { // load; own field
		pc.wakeups.Store(t.wakeups) // store; pairs with load's first load
	}
}

// load returns the published counters. A subset count is loaded before its
// whole (wakeups before sleeps, stolen and injected before executed), so a
// value seen of the first was published with a whole at least as large,
// which the later load sees or exceeds. Any goroutine may call it.
func (pc *published) load() WorkerMetrics {
	var w WorkerMetrics
	w.Wakeups = pc.wakeups.Load()       // load-acquire; pairs with publish's store of wakeups, after sleeps
	w.Sleeps = pc.sleeps.Load()         // load-acquire; pairs with publish's store of sleeps
	w.JobsInjected = pc.injected.Load() // load-acquire; pairs with publish's store of injected, after executed
	w.JobsStolen = pc.stolen.Load()     // load-acquire; pairs with publish's store of stolen, after executed
	w.JobsExecuted = pc.executed.Load() // load-acquire; pairs with publish's store of executed
	return w
}
