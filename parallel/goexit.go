package parallel

import (
	"runtime"
	"runtime/debug"
)

// A job that calls runtime.Goexit: see the package doc, section "Goexit in a
// job".

// goexitMark is what run's result holds while its function runs: still
// there in the deferred function, it tells that the function neither
// returned nor panicked, so it called runtime.Goexit. Never reported.
var goexitMark = &PanicError{Value: ErrGoexit}

// releaseFrame is the level job (run's lj) of Join's b run inline by its
// owner. Never run or queued; only its address is used.
var releaseFrame = &job{}

// levelKind says what a call level owes its waiter, besides closing the join
// frames opened inside it, if its function calls runtime.Goexit.
type levelKind uint8

const (
	// levelPlain owes nothing more: Join's a, Run from a worker,
	// Ctx.exec. The enclosing level reports the Goexit.
	levelPlain levelKind = iota
	// levelJoinB is Join's b run inline by its owner: the Join's frame,
	// d0-1, popped back, is released.
	levelJoinB
	// levelJob is a job run by execute: it is finished with ErrGoexit, as
	// if it had panicked with it.
	levelJob
	// levelScope is a scope's body or its wait for its jobs: ErrGoexit is
	// recorded and the body's count given back, unless the body returned,
	// and the scope's jobs waited for, as Scope would.
	levelScope
)

// levelOf decodes run's level job lj: nil for levelPlain, releaseFrame for
// levelJoinB, a scope's body job for levelScope, and the job run otherwise.
// Any goroutine may call it.
func levelOf(lj *job) levelKind {
	switch {
	case lj == nil:
		return levelPlain
	case lj == releaseFrame:
		return levelJoinB
	case lj.kind == kindScopeBody:
		return levelScope
	}
	return levelJob
}

// unwinding is one level's unwinding: what it owes and its progress, in one
// record that a resumed unwinding (unwindResume) reads, so that it carries
// on where the interrupted one stopped. Owned by the dying worker goroutine.
type unwinding struct {
	// d0 is the frame stack height at which the level started: frames d0
	// and above, still open, were opened inside it. For Join's a it is the
	// Join's own frame.
	d0   int
	kind levelKind
	// j is the job to finish (levelJob) or the scope's body job
	// (levelScope).
	j *job
	// pe is the ErrGoexit *PanicError the level reports, made once.
	pe *PanicError
}

// unwindGoexit does what the level that run started at frame stack height d0
// with level job lj owes its waiter, its function having called
// runtime.Goexit, before the goroutine goes on exiting (package doc,
// section "Goexit in a job"): it closes the join frames opened inside the
// level, as Join would, and then finishes the level's job or scope, or
// releases its frame. Called by the worker c, from run's deferred function
// only. Not inlined, so that run's deferred function stays small: it runs
// on every call.
//
//go:noinline
func (c *Ctx) unwindGoexit(d0 int, lj *job) {
	c.unwindResume(&unwinding{d0: d0, kind: levelOf(lj), j: lj})
}

// unwindResume runs u's remaining steps. The steps run user code (a b popped
// back, jobs run while waiting), which may call Goexit too: the runtime then
// runs the deferred calls below it, which first close what that code opened
// (its own levels), and then abandons this function for the next deferred
// call, the one below, which starts unwindResume again. The state of the
// steps is in c.depth, the frames, the deque, u and the scope (bodyCounted),
// so the new run carries
// on where the interrupted one stopped, and does each step once. Called by
// the worker c, from unwindGoexit and from itself.
func (c *Ctx) unwindResume(u *unwinding) {
	finished := false
	defer func() {
		if finished {
			return
		}
		if r := recover(); r != nil {
			// The steps recover the panics of user code; this one is a
			// bug in the unwinding. Crash rather than lose a job.
			panic(r)
		}
		c.unwindResume(u) // interrupted by a nested Goexit: carry on
	}()
	c.unwindSteps(u)
	finished = true
}

// unwindSteps does u's steps that are not done yet. Each step either is done
// and recorded as such before the next begins, or is safe to repeat (a
// frame stays open until it is closed; waiting again for a set latch returns
// at once). Called by the worker c, from unwindResume.
func (c *Ctx) unwindSteps(u *unwinding) {
	// Close the frames opened inside the level, innermost first, exactly as
	// Join does after its a: pop b back and run it (run releases the frame
	// if b calls Goexit too), or wait for its thief, running other work
	// meanwhile (section "Waiting"). Their panics are dropped: the level
	// reports the Goexit.
	for c.depth > u.d0 {
		c.joinFrame(c.frames[c.depth-1])
		c.depth--
	}
	switch u.kind {
	case levelPlain:
	case levelJoinB:
		c.depth = u.d0 - 1 // the frame's fn was cleared when it was popped
	case levelJob:
		c.finish(u.j, u.goexitError())
	case levelScope:
		s := u.j.scope
		if !s.bodyCounted {
			s.record(u.goexitError())
			s.bodyCounted = true
			s.latch.CountDown()
		}
		s.wait(c)
	default:
		panic("parallel: unwindSteps: level of unknown kind")
	}
}

// goexitError returns the *PanicError with which u's level reports the
// Goexit, made on first use. Its Stack, taken during the unwinding, still
// holds the frames of the function that called Goexit. Called by the dying
// worker.
func (u *unwinding) goexitError() *PanicError {
	if u.pe == nil {
		u.pe = &PanicError{Value: ErrGoexit, Stack: debug.Stack()}
	}
	return u.pe
}

// goexitFunc, runFunc and joinInlineFunc are the names of runtime.Goexit,
// Ctx.run and Ctx.joinInline in a traceback.
const (
	goexitFunc     = "runtime.Goexit"
	runFunc        = "github.com/blitz-go/blitz/parallel.(*Ctx).run"
	joinInlineFunc = "github.com/blitz-go/blitz/parallel.(*Ctx).joinInline"
)

// goexitPending reports whether the panic that the deferred function of a
// call level (run, or Join's joinInline) has just recovered was raised by
// deferred code that a runtime.Goexit inside the level's function was
// running. The recover does not stop that Goexit: the level will not return
// to its caller (the runtime never unwinds past a pending Goexit), so it
// must unwind itself. That is so exactly when runtime.Goexit is on the stack
// between the deferred function and the nearest run or joinInline frame,
// which is the level being unwound: a level between the panic and it would
// have recovered the panic itself. Called from those deferred functions
// after a recover, a cold path.
func goexitPending() bool {
	pcs := make([]uintptr, 64)
	for {
		n := runtime.Callers(2, pcs) // skip Callers and goexitPending
		frames := runtime.CallersFrames(pcs[:n])
		for {
			f, more := frames.Next()
			switch f.Function {
			case goexitFunc:
				return true
			case runFunc, joinInlineFunc:
				return false
			}
			if !more {
				break
			}
		}
		if n < len(pcs) {
			// No level's frame: a name is stale (TestGoexitRunNameMatches
			// catches that). Take the panic for a plain one, as before
			// Goexit was handled.
			return false
		}
		pcs = make([]uintptr, 2*len(pcs))
	}
}

// replace starts a goroutine that carries on as worker c once c's goroutine
// is exiting through runtime.Goexit: the same Ctx, deque and index, a fresh
// frame stack, its own goroutine id. It takes over the pool's running count
// of the dying goroutine. Called by the worker c from its main's deferred
// function, once every level has been unwound.
func (c *Ctx) replace() {
	if c.depth != 0 {
		panic("parallel: replace: a worker exits through Goexit with open join frames")
	}
	// Every frame was closed by the unwinding, so no thief will write one
	// again; the replacement still gets its own, so that nothing of the
	// dying goroutine's joins is shared with it.
	c.frames = nil
	go c.main(nil) // the go statement publishes c's owner-only state to the replacement
}

// registerGoid records that worker c now runs on goroutine id, replacing its
// dying goroutine's id old (section "Calls from a worker without its Ctx").
// Called by a replacement worker before it runs any job.
func (p *Pool) registerGoid(c *Ctx, old, id uint64) {
	p.goidMu.Lock()
	defer p.goidMu.Unlock()
	cur := *p.byGoid.Load() // load; goidMu orders the writers
	m := make(map[uint64]*Ctx, len(cur))
	for g, w := range cur {
		if g != old {
			m[g] = w
		}
	}
	m[id] = c
	p.byGoid.Store(&m) // store-release; pairs with the load in workerOf
}
