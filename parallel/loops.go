package parallel

// The parallel loops: see the package doc, section "Loops".

const (
	// autoMinGrain is the sequential cut-off of automatic grain: a range is
	// split only into halves of at least this many elements, so a loop over
	// fewer than 2*autoMinGrain elements runs sequentially on the calling
	// goroutine, without touching a pool. Pass Grain for loops whose body
	// is expensive per element.
	autoMinGrain = 32
	// splitsPerWorker is k in the automatic splitter's initial budget of
	// k*workers splits: a loop that nobody steals from ends up in about
	// 2*k*workers pieces.
	splitsPerWorker = 2
)

// Executor says where a loop runs: a *Pool (the loop is submitted to it
// from outside, or runs at once if called from one of its workers) or a *Ctx
// (the loop runs on that worker, inside the calling job). The interface is
// sealed: only those two types implement it.
type Executor interface {
	// exec runs f in the executor and returns when it has returned,
	// re-panicking its panic as a *PanicError.
	exec(f func(*Ctx))
	// workerCount is the number of workers of the executor's pool.
	workerCount() int
}

// exec runs f with Run. Any goroutine may call it.
func (p *Pool) exec(f func(*Ctx)) { p.Run(f) }

// workerCount returns the pool's worker count. Any goroutine may call it.
func (p *Pool) workerCount() int { return len(p.workers) }

// exec runs f on c. Called by the job c was passed to.
func (c *Ctx) exec(f func(*Ctx)) { rethrow(c.call(f)) }

// workerCount returns the worker count of c's pool. Any goroutine may call it.
func (c *Ctx) workerCount() int { return len(c.pool.workers) }

// Option configures a loop: On and Grain.
type Option func(*loopConfig)

// loopConfig is what the Options of one loop set.
type loopConfig struct {
	on    Executor // nil: Default()
	grain int      // 0: automatic
}

// On runs the loop in e: a *Pool, or the *Ctx of the calling job. Without
// it a loop runs in the Default pool. A job must pass its Ctx, not its
// pool: that is both faster and correct when called from a job.
func On(e Executor) Option {
	if e == nil {
		panic(msgNilExecutor)
	}
	return func(c *loopConfig) { c.on = e }
}

// Grain makes the loop split its range into pieces of at most n elements,
// whether or not workers steal them, instead of the automatic splitting;
// a loop of at most n elements runs sequentially on the calling goroutine.
// n must be at least 1.
func Grain(n int) Option {
	if n < 1 {
		panic(msgGrain)
	}
	return func(c *loopConfig) { c.grain = n }
}

// newLoopConfig applies opts. Any goroutine may call it.
func newLoopConfig(opts []Option) loopConfig {
	var c loopConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}

// sequential reports whether a loop of n elements runs sequentially on the
// calling goroutine. Any goroutine may call it.
func (c *loopConfig) sequential(n int) bool {
	if c.grain > 0 {
		return n <= c.grain
	}
	return n < 2*autoMinGrain
}

// executor returns where the loop runs. Any goroutine may call it.
func (c *loopConfig) executor() Executor {
	if c.on == nil {
		return Default()
	}
	return c.on
}

// splitter returns the root splitter for a loop in e.
func (c *loopConfig) splitter(e Executor) splitter {
	w := e.workerCount()
	return splitter{splits: splitsPerWorker * w, workers: w, grain: c.grain}
}

// splitter decides whether a range is split in two: Rayon's adaptive
// splitter. The budget halves at each split; a range whose job was stolen
// (it runs on another worker than the one that split it) gets its budget
// back up to the worker count, because a steal shows that another worker
// is idle (section "Loops"). A splitter is a value, copied into each half.
type splitter struct {
	splits  int // adaptive budget
	workers int // the pool's worker count
	grain   int // > 0: explicit grain, the budget is ignored
}

// trySplit reports whether a range of n elements is split, and updates the
// budget for its halves. migrated tells whether the range's job was
// stolen. Called by the worker running the range.
func (s *splitter) trySplit(n int, migrated bool) bool {
	if s.grain > 0 {
		return n > s.grain
	}
	if n < 2*autoMinGrain {
		return false
	}
	switch {
	case migrated:
		s.splits = max(s.workers, s.splits/2)
		return true
	case s.splits > 0:
		s.splits /= 2
		return true
	}
	return false
}

// forRange runs body over [lo, hi), splitting it with Join as sp decides.
// Called by the worker c.
func forRange(c *Ctx, lo, hi int, sp splitter, migrated bool, body func(lo, hi int)) {
	if !sp.trySplit(hi-lo, migrated) {
		body(lo, hi)
		return
	}
	mid := lo + (hi-lo)/2
	c.Join(
		func(c *Ctx) { forRange(c, lo, mid, sp, false, body) },
		func(c2 *Ctx) { forRange(c2, mid, hi, sp, c2 != c, body) },
	)
}

// reduceRange reduces [lo, hi) with leaf and combine, splitting it with Join
// as sp decides; combine sees its arguments in index order. Called by the
// worker c.
func reduceRange[T any](c *Ctx, lo, hi int, sp splitter, migrated bool, leaf func(lo, hi int) T, combine func(x, y T) T) T {
	if !sp.trySplit(hi-lo, migrated) {
		return leaf(lo, hi)
	}
	mid := lo + (hi-lo)/2
	var x, y T
	c.Join(
		func(c *Ctx) { x = reduceRange(c, lo, mid, sp, false, leaf, combine) },
		func(c2 *Ctx) { y = reduceRange(c2, mid, hi, sp, c2 != c, leaf, combine) },
	)
	return combine(x, y)
}

// runSequential runs f on the calling goroutine, re-panicking a panic as a
// *PanicError, as a loop run in a pool would. Any goroutine may call it.
func runSequential(f func()) { rethrow(catch(f)) }

// For calls body on consecutive ranges [lo, hi) that together cover [0, n)
// once, in parallel, and returns when all calls have returned. With
// automatic grain (the default) the range is split adaptively, about
// 2*k*workers pieces plus more where workers steal; with Grain(g) into
// pieces of at most g. A panic in body is re-raised as a *PanicError after
// all pieces finished. Any goroutine may call it; a job passes On(c).
func For(n int, body func(lo, hi int), opts ...Option) {
	if n <= 0 {
		return
	}
	cfg := newLoopConfig(opts)
	if cfg.sequential(n) {
		runSequential(func() { body(0, n) })
		return
	}
	e := cfg.executor()
	sp := cfg.splitter(e)
	e.exec(func(c *Ctx) { forRange(c, 0, n, sp, false, body) })
}

// Reduce reduces [0, n) in parallel: leaf reduces a range [lo, hi) on its
// own, combine merges the results of two adjacent ranges, left first. It
// returns identity for n <= 0 (and never passes identity to combine, so
// combine need only be associative). Splitting, options and panics are as
// in For. Any goroutine may call it; a job passes On(c).
func Reduce[T any](n int, identity T, leaf func(lo, hi int) T, combine func(x, y T) T, opts ...Option) T {
	if n <= 0 {
		return identity
	}
	cfg := newLoopConfig(opts)
	var r T
	if cfg.sequential(n) {
		runSequential(func() { r = leaf(0, n) })
		return r
	}
	e := cfg.executor()
	sp := cfg.splitter(e)
	e.exec(func(c *Ctx) { r = reduceRange(c, 0, n, sp, false, leaf, combine) })
	return r
}

// MapReduce returns combine(f(0), f(1), ..., f(n-1)), combined in parallel
// in index order (combine must be associative), or identity for n <= 0.
// Splitting, options and panics are as in For. Any goroutine may call it; a
// job passes On(c).
func MapReduce[T any](n int, identity T, f func(i int) T, combine func(x, y T) T, opts ...Option) T {
	leaf := func(lo, hi int) T {
		acc := f(lo)
		for i := lo + 1; i < hi; i++ {
			acc = combine(acc, f(i))
		}
		return acc
	}
	return Reduce(n, identity, leaf, combine, opts...)
}

// Collect returns the slice [f(0), f(1), ..., f(n-1)], computed in
// parallel; nil for n <= 0. Splitting, options and panics are as in For.
// Any goroutine may call it; a job passes On(c).
func Collect[T any](n int, f func(i int) T, opts ...Option) []T {
	if n <= 0 {
		return nil
	}
	out := make([]T, n)
	For(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = f(i)
		}
	}, opts...)
	return out
}

// MapInPlace replaces each element e of s with f(e), in parallel.
// Splitting, options and panics are as in For. Any goroutine may call it; a
// job passes On(c).
func MapInPlace[T any](s []T, f func(T) T, opts ...Option) {
	For(len(s), func(lo, hi int) {
		part := s[lo:hi]
		for i := range part {
			part[i] = f(part[i])
		}
	}, opts...)
}
