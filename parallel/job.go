package parallel

import "sync/atomic"

// jobKind says how a job is run and how its completion is signalled.
type jobKind uint8

const (
	// kindJoin: side b of a Join, a frame of its owner's frame stack
	// (package doc, section "Join").
	kindJoin jobKind = iota + 1
	// kindScope: a job spawned into a Scope.
	kindScope
	// kindInjected: a job submitted from outside the pool (Pool.Run); the
	// submitting goroutine waits on ch.
	kindInjected
	// kindScopeBody: a scope's body, Scope.body. Never queued: it tells
	// the unwinding of a Goexit in the body which scope to finish (section
	// "Goexit in a job").
	kindScopeBody
)

// job is the unit a deque or the injection queue holds. One struct serves
// the three kinds, so that a deque holds one pointer type and running a job
// is a switch, not an interface call.
type job struct {
	kind jobKind
	// fn is the work. Written by the submitter before the job is published
	// (deque push, injection), read by whoever runs it; cleared by the owner
	// of a join frame when the frame is free again.
	fn func(*Ctx)

	// owner is the worker whose frame stack holds this join frame; it is
	// the one that waits for done. Set when the frame is made; kindJoin only.
	owner *Ctx
	// done is the frame's once-latch. Set by the worker that ran a stolen
	// frame (store-release; pairs with the owner's load in waitUntil);
	// reset to false by the owner once it has seen it set, so a free frame
	// always has done == false. kindJoin only.
	done atomic.Bool
	// panic is the runner's recovered panic. Written by the runner before
	// done (or before the send on ch), read by the waiter after it; kindJoin
	// and kindInjected.
	panic *PanicError

	// scope is the Scope the job was spawned into (kindScope), or whose
	// body it stands for (kindScopeBody). Set when the job is made.
	scope *Scope

	// ch receives one value when an injected job has run; capacity 1, so
	// the runner never blocks. kindInjected only.
	ch chan struct{}
	// next links the injection queue. Guarded by injector.mu.
	next *job
}

// execute runs j on worker c and signals its completion to whoever waits for
// it. After the signal c does not touch j again: the owner may reuse it at
// once. Called by the worker c.
func (c *Ctx) execute(j *job) {
	c.tally.executed++
	c.finish(j, c.run(j.fn, c.depth, j))
}

// finish signals the completion of j, which ran on c with panic pe, to
// whoever waits for it. Called by the worker c: from execute, or from the
// unwinding of a job that called runtime.Goexit (package doc, section
// "Goexit in a job"). It publishes c's counters first, so that whoever
// waits for j finds j and everything j ran counted (section "Counting").
func (c *Ctx) finish(j *job, pe *PanicError) {
	c.published.publish(&c.tally)
	switch j.kind {
	case kindJoin:
		owner := j.owner // read first: j is the owner's again after done is set
		j.panic = pe
		j.done.Store(true) // store-release; pairs with the done load in the owner's waitUntil
		if owner != c {
			owner.notify() // the owner may sleep waiting for done (section "Latches and notification")
		}
	case kindScope:
		s := j.scope
		s.record(pe)
		s.latch.CountDown() // sets the latch at zero, which notifies the scope's owner
	case kindInjected:
		p := c.pool
		j.panic = pe
		ch := j.ch
		p.pending.Done() // before the send: Close may then find pending at zero only once the job ran
		ch <- struct{}{} // the submitter owns j again after this
	default:
		panic("parallel: finish: job of unknown kind")
	}
}

// call runs f on c, and returns its panic as a *PanicError, or nil. If f
// calls runtime.Goexit, the join frames opened inside f are closed before
// the goroutine goes on exiting (section "Goexit in a job"). Called by the
// worker c.
func (c *Ctx) call(f func(*Ctx)) *PanicError { return c.run(f, c.depth, nil) }

// run is call for a call level that starts at frame stack height d0 and
// owes its waiter what lj says (see levelOf) if f calls runtime.Goexit: the
// deferred function then sees neither a normal return (pe is still
// goexitMark) nor a panic, and unwinds the level (unwindGoexit) before the
// goroutine goes on exiting. Called by the worker c.
func (c *Ctx) run(f func(*Ctx), d0 int, lj *job) (pe *PanicError) {
	pe = goexitMark // the return below clears it
	defer func() {
		if pe == nil {
			return // f returned: no recover call on the common path
		}
		if r := recover(); r != nil {
			pe = toPanicError(r)
			if !goexitPending() {
				return
			}
			// f's deferred code panicked while f was exiting through
			// Goexit: the recover does not stop the Goexit, and run
			// will not return to its caller.
		}
		c.unwindGoexit(d0, lj)
	}()
	f(c)
	return nil
}
