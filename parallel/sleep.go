package parallel

import (
	"runtime"
)

// The sleep protocol: see the package doc, sections "The counters word",
// "Going to sleep", "Posting work" and "Latches and notification".

// Layout of the counters word.
const (
	sleepingShift = 0
	inactiveShift = 16
	jecShift      = 32

	oneSleeping = uint64(1) << sleepingShift
	oneInactive = uint64(1) << inactiveShift
	oneJEC      = uint64(1) << jecShift

	counterMask = 1<<16 - 1
)

// counters is a snapshot of Pool.counters; its accessors are pure.
type counters uint64

// sleeping is the number of workers blocked (or about to block) on their
// condition variables.
func (c counters) sleeping() int { return int(uint64(c) >> sleepingShift & counterMask) }

// inactive is the number of workers looking for work, sleeping included.
func (c counters) inactive() int { return int(uint64(c) >> inactiveShift & counterMask) }

// jec is the jobs event counter: even when some worker has announced that it
// is sleepy since the last new work, odd otherwise.
func (c counters) jec() uint32 { return uint32(uint64(c) >> jecShift) }

// sleepy reports whether the jec is even: a worker announced it is sleepy and
// no work was posted since.
func (c counters) sleepy() bool { return c.jec()&1 == 0 }

// awakeIdle is the number of workers looking for work and not asleep.
func (c counters) awakeIdle() int { return c.inactive() - c.sleeping() }

// States of a worker's sleep latch, Ctx.state (package doc, section "Going
// to sleep").
const (
	stateUnset    uint32 = iota // searching or working; no notification pending
	stateSleepy                 // about to sleep: past its last search
	stateSleeping               // holds its mutex and registers as sleeping
	stateSet                    // notified: re-check what it waits for
)

// idleState is a worker's progress towards sleep in one wait. Worker only.
type idleState struct {
	rounds int    // fruitless search rounds so far
	jec    uint32 // the jec returned by announceSleepy; valid once rounds > SleepyRounds
}

// startLooking counts the calling worker as inactive (step 1 of "Going to
// sleep"). Called by a worker about to search for work.
func (p *Pool) startLooking() idleState {
	p.counters.Add(oneInactive) // RMW; pairs with newJobs's read of awakeIdle
	return idleState{}
}

// workFound counts the calling worker as active again and wakes up to two
// sleepers: when an idle worker finds work there may be more (Rayon's
// heuristic, which ramps a pool up quickly when a tree of joins starts).
// Called by a worker that was looking.
func (p *Pool) workFound() {
	c := counters(p.counters.Add(^(oneInactive - 1))) // RMW; pairs with newJobs's read of awakeIdle
	if n := min(c.sleeping(), 2); n > 0 {
		p.wakeAny(n)
	}
}

// announceSleepy makes the jec even, if it is not already, and returns it
// (step 3 of "Going to sleep"). Called by a worker after SleepyRounds
// fruitless rounds.
func (p *Pool) announceSleepy() uint32 {
	for {
		c := counters(p.counters.Load()) // load; the CAS below decides
		if c.sleepy() {
			return c.jec()
		}
		if p.counters.CompareAndSwap(uint64(c), uint64(c)+oneJEC) { // CAS; pairs with newJobs's CAS and sleep's CAS
			return c.jec() + 1
		}
	}
}

// newJobs tells the sleep protocol that n jobs were just published (pushed
// on a deque or injected), and wakes sleepers if the awake idle workers are
// too few to take them. queueWasEmpty is whether the queue they went to held
// nothing before. See "Posting work". Called by whoever published the jobs,
// after publishing them.
func (p *Pool) newJobs(n int, queueWasEmpty bool) {
	c := counters(p.counters.Load()) // load; after the job's publication (seq-cst)
	// One test for the common case, no sleepy and no sleeping worker (an
	// odd jec, a zero sleeping count), small enough for newJobs to be
	// inlined into Join.
	if uint64(c)&(oneJEC|counterMask<<sleepingShift) != oneJEC {
		p.newJobsSlow(c, n, queueWasEmpty)
	}
}

// newJobsSlow is newJobs once its load c of the counters word found a
// sleepy or sleeping worker: the rest of "Posting work". Kept apart so that
// newJobs, which Join calls on every push, is inlined. Called by newJobs
// only.
func (p *Pool) newJobsSlow(c counters, n int, queueWasEmpty bool) {
	for c.sleepy() {
		// A worker announced it is sleepy: make the jec odd, so that its
		// snapshot no longer matches and it searches again.
		if p.counters.CompareAndSwap(uint64(c), uint64(c)+oneJEC) { // CAS; pairs with sleep's CAS on the same word
			c += counters(oneJEC)
			break
		}
		c = counters(p.counters.Load())
	}
	sleepers := c.sleeping()
	if sleepers == 0 {
		return
	}
	switch idle := c.awakeIdle(); {
	case !queueWasEmpty:
		p.wakeAny(min(n, sleepers))
	case idle < n:
		p.wakeAny(min(n-idle, sleepers))
	}
}

// noWorkFound advances the idle state after a fruitless search round: yield
// for SleepyRounds rounds, announce sleepiness, yield once more, then sleep.
// Called by the worker c.
func (c *Ctx) noWorkFound(idle *idleState) {
	rounds := c.pool.sleepyRounds
	switch {
	case idle.rounds < rounds:
		idle.rounds++
		runtime.Gosched()
	case idle.rounds == rounds:
		idle.jec = c.pool.announceSleepy()
		idle.rounds++
		runtime.Gosched()
	default:
		c.sleep(idle)
	}
}

// sleep is steps 4 to 8 of "Going to sleep": it blocks the worker on its
// condition variable unless it was notified, or new work was posted since
// idle.jec. It returns when the worker must search again. Called by the
// worker c, after at least one fruitless search since announceSleepy.
func (c *Ctx) sleep(idle *idleState) {
	p := c.pool
	if !c.state.CompareAndSwap(stateUnset, stateSleepy) { // CAS; fails if notify set SET, pairs with the swap in notify
		c.state.Store(stateUnset) // consume the notification; the caller re-checks its condition
		return
	}
	c.mu.Lock()
	if !c.state.CompareAndSwap(stateSleepy, stateSleeping) { // CAS; pairs with the swap in notify
		c.mu.Unlock()
		c.state.Store(stateUnset) // consume the notification
		return
	}
	for {
		w := counters(p.counters.Load()) // load; the CAS below decides
		if w.jec() != idle.jec {
			// Work was posted since we announced: search again, then
			// announce again (step 6).
			c.mu.Unlock()
			c.state.Store(stateUnset)
			idle.rounds = p.sleepyRounds
			return
		}
		if p.counters.CompareAndSwap(uint64(w), uint64(w)+oneSleeping) { // CAS; pairs with newJobs's CAS: one of the two sees the other
			break
		}
	}
	// Step 7: the injection queue is checked once more, against a jec that
	// wrapped around (2^32 posts while we were sleepy).
	if p.injected.n.Load() > 0 { // load; pairs with the n.Add in inject
		p.counters.Add(^(oneSleeping - 1)) // we wake ourselves, so we undo our own count
		c.mu.Unlock()
		c.state.Store(stateUnset)
		idle.rounds = 0
		return
	}
	// Step 8: block. Whoever clears blocked also removes us from the
	// sleeping count (wakeWorker).
	c.tally.sleeps++
	c.published.publish(&c.tally) // before blocked: who sees c blocked sees the sleep counted
	c.blocked = true
	for c.blocked {
		c.cond.Wait()
	}
	c.mu.Unlock()
	c.tally.wakeups++
	c.published.publish(&c.tally)
	c.state.Store(stateUnset) // consume any notification; the caller re-checks its condition
	idle.rounds = 0
}

// wakeWorker wakes c if it is blocked in sleep, and reports whether it was.
// Any goroutine may call it.
func (c *Ctx) wakeWorker() bool {
	c.mu.Lock()
	if !c.blocked {
		c.mu.Unlock()
		return false
	}
	c.blocked = false
	c.pool.counters.Add(^(oneSleeping - 1)) // RMW; the waker takes the sleeper off the count (section "Going to sleep")
	c.cond.Signal()
	c.mu.Unlock()
	return true
}

// wakeAny wakes up to n blocked workers. Any goroutine may call it.
func (p *Pool) wakeAny(n int) {
	ws := p.workers
	start := int(p.wakeStart.Add(1)) % len(ws) // spread the wakes; no partner
	for i := range ws {
		if ws[(start+i)%len(ws)].wakeWorker() {
			n--
			if n == 0 {
				return
			}
		}
	}
}

// notify tells worker c that something it may be waiting for was set (a
// stolen join frame finished, a latch it waits on was set, the pool stops),
// and wakes it if it sleeps. See "Latches and notification". Any goroutine
// may call it, after setting what c waits for.
func (c *Ctx) notify() {
	if c.state.Swap(stateSet) == stateSleeping { // swap; pairs with the CASes in sleep
		c.wakeWorker()
	}
}
