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

	// scope is the Scope the job was spawned into; kindScope only.
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
	switch j.kind {
	case kindJoin:
		owner := j.owner // read first: j is the owner's again after done is set
		j.panic = c.call(j.fn)
		j.done.Store(true) // store-release; pairs with the done load in the owner's waitUntil
		if owner != c {
			owner.notify() // the owner may sleep waiting for done (section "Latches and notification")
		}
	case kindScope:
		s := j.scope
		s.record(c.call(j.fn))
		s.latch.CountDown() // sets the latch at zero, which notifies the scope's owner
	case kindInjected:
		p := c.pool
		j.panic = c.call(j.fn)
		ch := j.ch
		p.pending.Done() // before the send: Close may then find pending at zero only once the job ran
		ch <- struct{}{} // the submitter owns j again after this
	default:
		panic("parallel: execute: job of unknown kind")
	}
}

// call runs f on c, and returns its panic as a *PanicError, or nil. Called by
// the worker c.
func (c *Ctx) call(f func(*Ctx)) (pe *PanicError) {
	defer func() {
		if r := recover(); r != nil {
			pe = toPanicError(r)
		}
	}()
	f(c)
	return nil
}
