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
	f := c.pushFrame(b)
	pa := c.run(a, c.depth-1, nil) // on Goexit, f is closed too
	pb := c.joinFrame(f)
	c.depth--
	rethrow(pa)
	rethrow(pb)
}

// pushFrame takes the frame for the current depth, fills it with fn and
// pushes it on the deque. Called by the worker c.
func (c *Ctx) pushFrame(fn func(*Ctx)) *job {
	if c.depth == len(c.frames) {
		c.frames = append(c.frames, &job{kind: kindJoin, owner: c})
	}
	f := c.frames[c.depth]
	c.depth++
	f.fn = fn // published by the deque push
	c.push(f)
	return f
}

// joinFrame is the second half of Join: run f here if it is still on the
// deque, else wait for its thief; it returns f's panic, and leaves f free
// (fn nil, done false). Called by the worker c, once the frames pushed after
// f are gone from its deque or finished: by Join, and by the unwinding of a
// job that called runtime.Goexit (section "Goexit in a job").
func (c *Ctx) joinFrame(f *job) *PanicError {
	for {
		j := c.deque.Pop()
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
