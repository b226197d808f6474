package parallel

import (
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/wsqueue"
)

// Ctx is a worker of a pool, handed to every job it runs: Go has no
// thread-locals, so the job reaches its worker (its deque, its frame stack,
// its pool) through this value. A job may use its Ctx only on the goroutine
// that ran it and only until it returns; a Ctx must not be stored or handed
// to another goroutine. See the package doc, section "Contexts, not
// thread-locals".
type Ctx struct {
	// pool and index identify the worker. Set at creation, read-only after.
	pool  *Pool
	index int
	// deque is the worker's Chase-Lev deque: the worker pushes and pops at
	// the bottom (Owner only); thieves use stealer.
	deque   *wsqueue.DequeOwner[job]
	stealer *wsqueue.DequeStealer[job]
	// frames is the join frame stack and depth its height: Join at depth d
	// uses frames[d], allocated the first time the worker reaches that
	// depth and reused after (section "Join"). Owner only.
	frames []*job
	depth  int
	// rng picks steal victims (xorshift64). Owner only.
	rng uint64
	// goid is the id of the worker's goroutine, written by that goroutine
	// when it starts: before NewPool returns, and again by each replacement
	// of a goroutine that exited through Goexit (section "Goexit in a
	// job"). Owner only, but for NewPool's read after every worker started.
	goid uint64
	// tally is the worker's counters as it keeps them (section
	// "Counting"). Owner only.
	tally tally

	_ pad
	// state is the worker's sleep latch: UNSET, SLEEPY, SLEEPING or SET
	// (section "Going to sleep"). The worker moves it UNSET→SLEEPY→
	// SLEEPING and back to UNSET by CAS and store; notify swaps in SET from
	// any goroutine.
	state atomic.Uint32
	// mu guards blocked; cond (on mu) is what the worker blocks on. blocked
	// is set by the sleeping worker and cleared by its waker (wakeWorker).
	mu      sync.Mutex
	cond    sync.Cond
	blocked bool
	_       pad
	// published is the tally as Pool.Metrics reads it: written by the
	// worker only (publish), read by any goroutine (load). On its own
	// cache lines, away from the notifiers' writes to state.
	published published
	_         pad
}

// newCtx returns worker index of p, not yet started. Called by NewPool.
func newCtx(p *Pool, index int) *Ctx {
	c := &Ctx{pool: p, index: index, rng: uint64(index)*0x9e3779b97f4a7c15 + 1}
	c.deque, c.stealer = wsqueue.NewDeque[job](0)
	c.cond.L = &c.mu
	return c
}

// Pool returns the pool the worker belongs to. Called by the job c was
// passed to.
func (c *Ctx) Pool() *Pool { return c.pool }

// WorkerIndex returns the worker's index in its pool, 0 to Workers()-1.
// Called by the job c was passed to.
func (c *Ctx) WorkerIndex() int { return c.index }

// main is the worker goroutine: it runs jobs until the pool stops. If a job
// calls runtime.Goexit, the goroutine exits once every job on its stack is
// finished, and main starts a replacement (section "Goexit in a job"), which
// keeps the running count. Called once per worker, on its own goroutine, by
// NewPool with started, which it marks done once c.goid is written; and by
// replace with nil.
func (c *Ctx) main(started *sync.WaitGroup) {
	returned := false
	defer func() {
		if returned {
			c.pool.running.Done()
			return
		}
		c.replace() // exiting through Goexit
	}()
	old := c.goid
	c.goid = curGoid()
	if started != nil {
		started.Done()
	} else {
		c.pool.registerGoid(c, old, c.goid)
	}
	c.waitUntil(&c.pool.stop)
	returned = true
}

// push publishes j on the worker's deque and tells the sleep protocol.
// Join does the same, written out. Called by the worker c.
func (c *Ctx) push(j *job) {
	wasEmpty := c.deque.IsEmpty()
	c.deque.Push(j)
	c.pool.newJobs(1, wasEmpty)
}

// waitUntil runs other work until done is set: its own deque first, then
// stealing and the injection queue, and sleeps when there is none (package
// doc, section "Waiting"). Whoever sets done must notify c afterwards
// unless it is c. Called by the worker c.
func (c *Ctx) waitUntil(done *atomic.Bool) {
	for !done.Load() { // load-acquire; pairs with the setter's store
		if j := c.deque.Pop(); j != nil {
			c.execute(j)
			continue
		}
		c.waitIdle(done)
	}
}

// waitIdle searches for work as an inactive worker until it runs one job or
// done is set, and sleeps when the search keeps failing. Called by the
// worker c from waitUntil.
func (c *Ctx) waitIdle(done *atomic.Bool) {
	p := c.pool
	idle := p.startLooking()
	for !done.Load() { // load-acquire; pairs with the setter's store
		if j := c.findWork(); j != nil {
			p.workFound()
			c.execute(j)
			return
		}
		c.noWorkFound(&idle)
	}
	p.workFound()
}

// findWork returns a job from the worker's deque, another worker's, or the
// injection queue, or nil. Called by the worker c.
func (c *Ctx) findWork() *job {
	if j := c.deque.Pop(); j != nil {
		return j
	}
	if j := c.steal(); j != nil {
		return j
	}
	j := c.pool.injected.pop()
	if j != nil {
		c.tally.injected++ // execute counts it executed before any publish
	}
	return j
}

// steal takes the oldest job of another worker, starting at a random one.
// Called by the worker c.
func (c *Ctx) steal() *job {
	ws := c.pool.workers
	n := len(ws)
	if n == 1 {
		return nil
	}
	start := int(c.next() % uint64(n))
	for i := range n {
		v := ws[(start+i)%n]
		if v == c {
			continue
		}
		if j := v.stealer.StealLoop(); j != nil {
			c.tally.stolen++ // execute counts it executed before any publish
			return j
		}
	}
	return nil
}

// next returns the next pseudo-random number (xorshift64). Called by the
// worker c.
func (c *Ctx) next() uint64 {
	x := c.rng
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	c.rng = x
	return x
}
