package parallel

import "sync/atomic"

// Scope collects a dynamic number of jobs that all finish before the Scope
// call that made it returns (package doc, section "Scopes"). A *Scope is
// valid only until that call returns.
type Scope struct {
	// owner is the worker that runs the scope's body and waits for its
	// jobs. Read-only.
	owner *Ctx
	// latch counts the body and every spawned job not yet finished.
	latch CountLatch
	// panic is the first panic recorded, by the body or a job (CAS from
	// nil; load after latch is set).
	panic atomic.Pointer[PanicError]
	// body stands for the scope's body and wait in the unwinding of a
	// Goexit (kindScopeBody); never queued. Set by Scope before the body
	// runs.
	body job
	// bodyCounted is set once the body's count is given back: by Scope,
	// or by the unwinding of a Goexit in the body. Owner only.
	bodyCounted bool
}

// Scope runs body with a new Scope, and returns once body and every job
// spawned into the scope have returned. The jobs may run on any worker,
// including this one, which runs them while it waits. If the body or a job
// panics, Scope re-panics once all have finished, with the *PanicError of
// the first panic recorded. Called by the job c was passed to, on its
// goroutine.
func (c *Ctx) Scope(body func(*Scope)) {
	s := &Scope{owner: c}
	s.latch.count.Store(1) // the body's count; s is not shared yet
	s.body.kind, s.body.scope = kindScopeBody, s
	// Both the body and the wait run in a level that, if a Goexit ends the
	// goroutine in either, still waits for the scope's jobs (section
	// "Goexit in a job").
	s.record(c.run(func(*Ctx) { body(s) }, c.depth, &s.body))
	s.bodyCounted = true
	s.latch.CountDown()
	c.run(s.wait, c.depth, &s.body) // no panic: the jobs run meanwhile recover theirs
	rethrow(s.panic.Load())         // load; after the latch, which every recorder counted down after recording
}

// wait waits for the scope's jobs, running other work meanwhile. Called by
// the owner, once the body's count is given back.
func (s *Scope) wait(c *Ctx) { s.latch.WaitCtx(c) }

// Ctx returns the worker running the scope's body: the Ctx to use for Join
// and loops inside the body. Called by the scope's body.
func (s *Scope) Ctx() *Ctx { return s.owner }

// Spawn adds f to the scope: it is pushed on the deque of the worker running
// the body, runs on some worker, and finishes before Scope returns. Called
// by the scope's body, on its goroutine; a spawned job that spawns more uses
// SpawnFrom with its own Ctx.
func (s *Scope) Spawn(f func(*Ctx)) { s.SpawnFrom(s.owner, f) }

// SpawnFrom is Spawn for a job of the scope (or of a Join inside it) that
// runs on c: f is pushed on c's deque. It panics if the scope has finished.
// Called by the job c was passed to, on its goroutine, while the scope runs.
func (s *Scope) SpawnFrom(c *Ctx, f func(*Ctx)) {
	if s.latch.Probe() {
		panic(msgSpawnFinished)
	}
	s.latch.Add(1)
	c.push(&job{kind: kindScope, fn: f, scope: s})
}

// record keeps pe if it is the scope's first panic. Any worker may call it.
func (s *Scope) record(pe *PanicError) {
	if pe != nil {
		s.panic.CompareAndSwap(nil, pe) // CAS; the first wins, later ones are dropped
	}
}
