package parallel

// Join runs a and b, possibly in parallel, and returns when both have
// returned (package doc, section "Join"). b is pushed on the worker's deque,
// where other workers may steal it, and a runs at once on this worker; then
// b is popped back and run here unless it was stolen, in which case the
// worker runs other work until b's thief has finished it. Join allocates
// nothing: b's job frame comes from the worker's frame stack.
//
// If a or b panics, Join re-panics, after both have returned, with the
// *PanicError of a's panic if a panicked, else of b's (package doc, section
// "Panics").
//
// Called by the job c was passed to, on its goroutine.
func (c *Ctx) Join(a, b func(*Ctx)) {
	// Take the frame of this depth, fill it with b and push it: written
	// out here, not a call, as every instruction of it is paid per join.
	d := uint(c.depth)
	if d >= uint(len(c.frames)) {
		c.growFrames()
	}
	f := c.frames[d]
	c.depth = int(d) + 1
	f.fn = b // published by the deque push
	q := c.deque
	wasEmpty := q.IsEmpty()
	q.Push(f)
	c.pool.newJobs(1, wasEmpty) // as push does

	pa, pb, j := c.joinInline(a, f)
	if j != f {
		// The slow path: a panicked before the pop (j is nil), b was
		// stolen (the pop found nothing), or the pop found a job pushed
		// after f and left behind (Scope.SpawnFrom does that).
		if pa != nil {
			j = c.deque.Pop()
		}
		pb = c.joinFrameFrom(f, j)
	}
	c.depth--
	rethrow(pa)
	rethrow(pb)
}

// growFrames adds a frame to the frame stack, which is full: Join reaches
// this depth for the first time. Kept out of Join, a cold path. Called by
// the worker c.
//
//go:noinline
func (c *Ctx) growFrames() {
	c.frames = append(c.frames, &job{kind: kindJoin, owner: c})
}

// Progress of joinInline, which its deferred function reads to tell whose
// panic or Goexit it sees.
const (
	joinInA      uint8 = iota // a runs
	joinPopping               // a returned; the deque is popped (no user code)
	joinInB                   // b, popped back, runs
	joinReturned              // done: no panic, no Goexit
)

// joinInline is the fast path of Join: it runs a, pops the deque and, if
// the pop returns f, runs f's function, all in one call level (section
// "Join"), so that the join pays for one deferred call, not one per side.
// It returns a's panic pa (then j is nil: the deque was not popped), or
// the job j the pop returned: f once b ran here, with b's panic pb, else
// nil (f was stolen) or a job pushed after f, which Join hands to
// joinFrameFrom.
//
// The deferred function tells a's panic or Goexit from b's by the
// progress: for a Goexit it unwinds the level a's run would have (frames
// from the Join's own, depth d-1) or the level of b popped back
// (releaseFrame, depth d), exactly as run would for either (section
// "Goexit in a job"). Called by the worker c, from Join only.
func (c *Ctx) joinInline(a func(*Ctx), f *job) (pa, pb *PanicError, j *job) {
	d := c.depth
	st := joinInA
	defer func() {
		if st == joinReturned {
			return // both returned: the common case costs this test
		}
		if r := recover(); r != nil {
			pe := toPanicError(r)
			if !goexitPending() {
				switch st {
				case joinInA:
					pa = pe // Join closes f
				case joinInB:
					pb = pe // j is f, released when it was popped
				default:
					panic(r) // the deque's own invariant panic: not the user's
				}
				return
			}
			// Deferred code of a or b panicked while it was exiting
			// through Goexit: as in run, the Goexit goes on.
		}
		if st == joinInB {
			c.unwindGoexit(d, releaseFrame)
		} else {
			c.unwindGoexit(d-1, nil)
		}
	}()
	a(c)
	st = joinPopping
	j = c.deque.Pop()
	if j != f {
		st = joinReturned
		return nil, nil, j
	}
	fn := f.fn
	f.fn = nil
	c.tally.executed++ // a plain increment: the fast path has no atomic for the count (section "Counting")
	st = joinInB
	fn(c)
	st = joinReturned
	return nil, nil, f
}

// joinFrame is the second half of Join: run f here if it is still on the
// deque, else wait for its thief; it returns f's panic, and leaves f free
// (fn nil, done false). Called by the worker c, once the frames pushed after
// f are gone from its deque or finished: by the unwinding of a job that
// called runtime.Goexit (section "Goexit in a job"); Join calls
// joinFrameFrom.
func (c *Ctx) joinFrame(f *job) *PanicError { return c.joinFrameFrom(f, c.deque.Pop()) }

// joinFrameFrom is joinFrame with the deque popped already, giving j.
// Called by the worker c, from joinFrame and Join.
func (c *Ctx) joinFrameFrom(f, j *job) *PanicError {
	for ; ; j = c.deque.Pop() {
		if j == f {
			fn := f.fn
			f.fn = nil
			c.tally.executed++ // a plain increment: the fast path has no atomic for the count (section "Counting")
			return c.run(fn, c.depth, releaseFrame)
		}
		if j == nil {
			break // f was stolen
		}
		// A job pushed after f and left behind (Scope.SpawnFrom does
		// that): run it, f is below.
		c.execute(j)
	}
	c.waitUntil(&f.done)
	pe := f.panic
	f.fn, f.panic = nil, nil
	f.done.Store(false) // the thief is done with f; no partner
	return pe
}

// JoinValues is Join for two functions with results: it returns a's and b's
// results. Unlike Join, it allocates: b's result escapes to the heap with
// the closure that stores it. Called by the job c was passed to, on its
// goroutine.
func JoinValues[A, B any](c *Ctx, a func(*Ctx) A, b func(*Ctx) B) (A, B) {
	var ra A
	var rb B
	c.Join(func(c *Ctx) { ra = a(c) }, func(c *Ctx) { rb = b(c) })
	return ra, rb
}
