package parallel

import (
	"reflect"
	"runtime"
	"time"
)

// CloseDefault closes the Default pool, if it was started, and forgets it,
// so that TestMain can check for leaked goroutines.
func CloseDefault() {
	defaultMu.Lock()
	defer defaultMu.Unlock()
	if p := defaultPool.Load(); p != nil {
		p.close()
		defaultPool.Store(nil)
	}
}

// Counters returns a snapshot of p's counters word.
func Counters(p *Pool) (sleeping, inactive int, jec uint32) {
	c := counters(p.counters.Load())
	return c.sleeping(), c.inactive(), c.jec()
}

// BlockedWorkers returns how many of p's workers are blocked on their
// condition variables.
func BlockedWorkers(p *Pool) int {
	n := 0
	for _, c := range p.workers {
		c.mu.Lock()
		if c.blocked {
			n++
		}
		c.mu.Unlock()
	}
	return n
}

// WaitAllAsleep waits until every worker of p is blocked and counted as
// sleeping, and reports whether that happened within timeout.
func WaitAllAsleep(p *Pool, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for i := 0; ; i++ {
		s, _, _ := Counters(p)
		if s == len(p.workers) && BlockedWorkers(p) == len(p.workers) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		if i < 1000 {
			runtime.Gosched() // the workers fall asleep within microseconds
		} else {
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// FrameDepth returns the number of join frames c has allocated.
func FrameDepth(c *Ctx) int { return len(c.frames) }

// AutoMinGrain is the sequential cut-off of automatic grain.
const AutoMinGrain = autoMinGrain

// IsWorkerGoroutine reports whether the caller is a worker of p.
func IsWorkerGoroutine(p *Pool) bool { return p.workerOf() != nil }

// CurGoid exposes curGoid.
var CurGoid = curGoid

// QueuedInjected is how many jobs submitted from outside p wait in its
// injection queue.
func QueuedInjected(p *Pool) int64 { return p.injected.n.Load() }

// RunFuncNameMatches reports whether goexitPending's names for Ctx.run and
// Ctx.joinInline are the ones tracebacks show.
func RunFuncNameMatches() bool {
	return runtime.FuncForPC(reflect.ValueOf((*Ctx).run).Pointer()).Name() == runFunc &&
		runtime.FuncForPC(reflect.ValueOf((*Ctx).joinInline).Pointer()).Name() == joinInlineFunc
}

// CounterCell is a worker's tally and its published copy, for the test of
// the order of publish and load.
type CounterCell struct {
	t tally
	p published
}

// StealOne counts a stolen job, as a worker does, and publishes. Called by
// one goroutine only, the cell's owner.
func (c *CounterCell) StealOne() {
	c.t.stolen++
	c.t.executed++
	c.p.publish(&c.t)
}

// SleepOnce counts a sleep and its wakeup, publishing each, as a worker
// does. Called by the cell's owner only.
func (c *CounterCell) SleepOnce() {
	c.t.sleeps++
	c.p.publish(&c.t)
	c.t.wakeups++
	c.p.publish(&c.t)
}

// Load returns the published counters. Any goroutine may call it.
func (c *CounterCell) Load() WorkerMetrics { return c.p.load() }
