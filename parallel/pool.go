package parallel

import (
	"sync"
	"sync/atomic"
)

// Pool is a fork-join pool: worker goroutines with a Chase-Lev deque each,
// an injection queue for work submitted from outside, and the sleep
// protocol of the package doc. Several pools may coexist; Default is the
// one the package-level functions use. A Pool is safe for concurrent use.
type Pool struct {
	// workers are the pool's workers, indexed by Ctx.index. Set by NewPool,
	// read-only after.
	workers []*Ctx
	// byGoid maps each worker goroutine's id to its worker. The map is never
	// modified once stored: NewPool stores the first before it returns, and
	// a replacement worker (section "Goexit in a job") stores a modified copy
	// under goidMu (registerGoid). Loaded by workerOf.
	byGoid atomic.Pointer[map[uint64]*Ctx]
	goidMu sync.Mutex
	// sleepyRounds is Config.SleepyRounds. Read-only.
	sleepyRounds int
	// isDefault marks the pool of Default, which Close leaves running.
	isDefault bool

	// injected holds jobs submitted from outside the pool.
	injected injector
	// pending counts injected jobs not yet run: Add under injected.mu
	// while the pool is open, Done by the worker that ran the job. Close
	// waits for it.
	pending sync.WaitGroup
	// running counts live worker goroutines; Close waits for it.
	running   sync.WaitGroup
	closeOnce sync.Once

	_ pad
	// counters is the packed counters word: sleeping, inactive, jec
	// (package doc, section "The counters word"). Every access is an
	// atomic load, add or CAS; see the callers in sleep.go for partners.
	counters atomic.Uint64
	_        pad
	// wakeStart rotates the first worker wakeAny tries. Any goroutine; RMW.
	wakeStart atomic.Uint32
	// stop is set by Close once no injected job is pending; the workers'
	// main wait ends on it (store-release by Close, notified; load-acquire
	// in waitUntil).
	stop atomic.Bool
	_    pad
}

// injector is the injection queue: a FIFO list under a mutex, with an
// atomic length so that idle workers look at it without locking (section
// "The injection queue").
type injector struct {
	mu         sync.Mutex
	head, tail *job // guarded by mu
	closed     bool // guarded by mu; set by Close
	// n is the queue's length: written under mu, read without it by
	// searching and sleeping workers (load; pairs with the Add in inject).
	n atomic.Int64
}

// pop removes and returns the oldest injected job, or nil. Called by a
// worker.
func (q *injector) pop() *job {
	if q.n.Load() == 0 { // load; a stale zero is caught by the sleep protocol's jec
		return nil
	}
	q.mu.Lock()
	j := q.head
	if j != nil {
		q.head = j.next
		if q.head == nil {
			q.tail = nil
		}
		j.next = nil
		q.n.Add(-1)
	}
	q.mu.Unlock()
	return j
}

// NewPool starts a pool configured by cfg and returns it once every worker
// runs. The error wraps ErrWorkers or ErrSleepyRounds for an invalid cfg.
// Close stops the workers. Any goroutine may call it.
func NewPool(cfg Config) (*Pool, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Pool{sleepyRounds: cfg.SleepyRounds}
	p.workers = make([]*Ctx, cfg.Workers)
	for i := range p.workers {
		p.workers[i] = newCtx(p, i)
	}
	var started sync.WaitGroup
	started.Add(len(p.workers))
	p.running.Add(len(p.workers))
	for _, c := range p.workers {
		go c.main(&started)
	}
	started.Wait() // every goid is written
	m := make(map[uint64]*Ctx, len(p.workers))
	for _, c := range p.workers {
		m[c.goid] = c
	}
	p.byGoid.Store(&m) // store-release; pairs with the loads in workerOf and registerGoid
	return p, nil
}

// Workers returns the number of workers. Any goroutine may call it.
func (p *Pool) Workers() int { return len(p.workers) }

var (
	// defaultPool is the pool of Default: nil until first use, then set
	// once (store under defaultMu; load on the fast path).
	defaultPool atomic.Pointer[Pool]
	defaultMu   sync.Mutex
)

// Default returns the default pool, with GOMAXPROCS workers, starting it on
// first use. Close on it does nothing: it lives as long as the process. Any
// goroutine may call it.
func Default() *Pool {
	if p := defaultPool.Load(); p != nil {
		return p
	}
	defaultMu.Lock()
	defer defaultMu.Unlock()
	if p := defaultPool.Load(); p != nil {
		return p
	}
	p, err := NewPool(Config{})
	if err != nil {
		panic("parallel: Default: " + err.Error()) // the zero Config is valid
	}
	p.isDefault = true
	defaultPool.Store(p)
	return p
}

// Close waits for the work submitted to the pool to finish, then stops the
// workers and waits for their goroutines to exit. Work submitted after Close
// began panics with ErrClosed. Close is idempotent; on the Default pool it
// does nothing. It must not be called from a job of the pool (it panics if
// it is, rather than wait for itself forever). Any goroutine may call it.
func (p *Pool) Close() {
	if p.isDefault {
		return
	}
	p.close()
}

// close is Close without the Default guard: the steps of the package doc,
// section "Close". Any goroutine but the pool's workers may call it.
func (p *Pool) close() {
	if p.workerOf() != nil {
		panic(msgCloseFromWorker)
	}
	p.closeOnce.Do(func() {
		p.injected.mu.Lock()
		p.injected.closed = true
		p.injected.mu.Unlock()
		p.pending.Wait()
		p.stop.Store(true) // store-release; pairs with the stop load in waitUntil
		for _, c := range p.workers {
			c.notify()
		}
		p.running.Wait()
	})
}

// workerOf returns the worker whose goroutine is calling, or nil if the
// caller is not one of p's workers (section "Calls from a worker without
// its Ctx"). Any goroutine may call it.
func (p *Pool) workerOf() *Ctx {
	// A worker running user code is never counted inactive, so if every
	// worker is, the caller is not one: skip the goroutine id.
	if counters(p.counters.Load()).inactive() == len(p.workers) { // load; see above
		return nil
	}
	return (*p.byGoid.Load())[curGoid()] // load-acquire; pairs with the stores of NewPool and registerGoid
}

// injectedJobs recycles the jobs of Run, with their channels.
var injectedJobs = sync.Pool{New: func() any {
	return &job{kind: kindInjected, ch: make(chan struct{}, 1)}
}}

// Run runs f in the pool and returns when it has returned; a panic in f (or
// in the work it waited for) is re-raised in the caller as a *PanicError.
// From outside the pool, f is injected and the caller blocks. From a
// worker of p that calls without its Ctx, f runs at once on that worker, as
// Ctx-level code would (section "Calls from a worker without its Ctx"). Any
// goroutine may call it.
func (p *Pool) Run(f func(*Ctx)) {
	if c := p.workerOf(); c != nil {
		rethrow(c.call(f))
		return
	}
	j := injectedJobs.Get().(*job)
	j.fn = f
	p.inject(j)
	<-j.ch // the worker's send happens after it wrote j.panic
	pe := j.panic
	j.fn, j.panic = nil, nil
	injectedJobs.Put(j)
	rethrow(pe)
}

// inject appends j to the injection queue and tells the sleep protocol. It
// panics with ErrClosed if Close has begun. Any goroutine may call it.
func (p *Pool) inject(j *job) {
	q := &p.injected
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		panic(ErrClosed)
	}
	p.pending.Add(1)
	if q.tail == nil {
		q.head = j
	} else {
		q.tail.next = j
	}
	q.tail = j
	wasEmpty := q.n.Add(1) == 1 // RMW; pairs with the n loads in pop and sleep
	q.mu.Unlock()
	p.newJobs(1, wasEmpty)
}

// Join runs a and b in the pool, possibly in parallel, and returns when
// both have; see Ctx.Join. Any goroutine may call it.
func (p *Pool) Join(a, b func(*Ctx)) {
	p.Run(func(c *Ctx) { c.Join(a, b) })
}

// Scope runs body in the pool with a new Scope and returns when body and
// every job spawned into the scope have; see Ctx.Scope. Any goroutine may
// call it.
func (p *Pool) Scope(body func(*Scope)) {
	p.Run(func(c *Ctx) { c.Scope(body) })
}

// Run runs f in the Default pool; see Pool.Run. Any goroutine may call it.
func Run(f func(*Ctx)) { Default().Run(f) }

// Join runs a and b in the Default pool; see Pool.Join. Any goroutine may
// call it.
func Join(a, b func(*Ctx)) { Default().Join(a, b) }

// Scoped runs body in the Default pool with a new Scope; see Pool.Scope.
// (It cannot be called Scope: that is the type.) Any goroutine may call it.
func Scoped(body func(*Scope)) { Default().Scope(body) }
