package timerwheel

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Service is the ready-to-use concurrent front end: AfterFunc, Timer.Stop and
// Timer.Reset in the spirit of the time package, on top of sharded Wheels
// that their own driver goroutines advance with the clock. See "The Service"
// and "The driver protocol" in the package doc.
//
// Build one with NewService and Close it when done; a zero Service is not
// usable. All methods are safe for concurrent use.
type Service struct {
	// tb converts between the clock and ticks. Written by NewService,
	// read-only after.
	tb Timebase
	// shards are the independent wheels. Written by NewService, read-only
	// after; each shard guards its own state.
	shards []*shard
	// inline says f runs on the driver goroutine instead of its own.
	// Written by NewService, read-only after.
	inline bool
	// closed is set once by the first Close. Written by Close (CAS), read
	// by Close.
	closed atomic.Bool
	// quit is closed by Close, after every shard is marked closed, to stop
	// the drivers. Drivers receive from it.
	quit chan struct{}
	// drivers counts running driver goroutines. Add by NewService, Done by
	// each driver, Wait by Close.
	drivers sync.WaitGroup
	// callbacks counts f goroutines started by the drivers and not yet
	// returned. Add by drivers, Done by the f goroutine, Wait by Close after
	// drivers.Wait.
	callbacks sync.WaitGroup
	// hints hands out shard choices with P affinity (see pick). Its New
	// reads nextHint. Safe for concurrent use.
	hints sync.Pool
	// nextHint numbers the hints that hints.New makes, round robin over the
	// shards. Add by hints.New only; no partner.
	nextHint atomic.Uint32
}

// shardHint is a shard choice cached in Service.hints.
type shardHint struct{ s *shard }

// shard is one Wheel with the lock that guards it, the runtime timer its
// driver sleeps on, and the driver's batch.
type shard struct {
	// mu guards wheel, armed, rt and closed.
	mu sync.Mutex
	// wheel holds the pending Timers of this shard. Under mu.
	wheel Wheel[*Timer]
	// armed is the tick rt is set to fire at, math.MaxUint64 when rt is
	// stopped. Written under mu by the driver (step 2) and by schedule;
	// read under mu.
	armed uint64
	// rt is the one runtime timer the driver sleeps on. Reset and Stop
	// under mu; the driver receives from rt.C without the lock.
	rt *time.Timer
	// closed is set by Close. Under mu.
	closed bool
	// tb is the Service's Timebase. Read-only.
	tb Timebase
	// svc is the owning Service. Read-only.
	svc *Service
	// fire appends a fired entry's Timer to batch; bound once so Advance
	// gets a func value without allocating. Read-only.
	fire func(*Entry[*Timer])
	// batch holds the Timers fired by the last Advance until the driver
	// runs them. Driver only (fire appends under mu, run drains without).
	batch []*Timer
	// wakes counts the driver's loop iterations, for tests of "never
	// busy-polls". Add by the driver; Load by anyone.
	wakes atomic.Uint64
	// The blank field keeps the next shard's lock off this shard's last
	// cache line.
	_ [64]byte
}

// Option configures a Service.
type Option func(*config)

// config collects the Options; NewService owns it.
type config struct {
	tick   time.Duration // WithTick
	shards int           // WithShards
	inline bool          // WithInlineCallbacks
}

// WithTick sets the tick length of the Service's wheels (default
// DefaultTick, 1 ms): timers fire up to one tick after their deadline, and a
// driver with pending timers wakes at most once per tick.
// Anyone may call it.
func WithTick(d time.Duration) Option { return func(c *config) { c.tick = d } }

// WithShards sets the number of independent wheels, each with its own lock,
// runtime timer and driver goroutine. n <= 0 means the default,
// runtime.GOMAXPROCS(0) at NewService. See "Sharding" for the measurements.
// Anyone may call it.
func WithShards(n int) Option { return func(c *config) { c.shards = n } }

// WithInlineCallbacks makes every f run on its shard's driver goroutine
// instead of in a goroutine of its own. It saves a goroutine start per fired
// timer, but an f that blocks or runs long delays every other timer of the
// shard. See "Where f runs".
// Anyone may call it.
func WithInlineCallbacks() Option { return func(c *config) { c.inline = true } }

// NewService starts a Service: one driver goroutine per shard, each asleep
// until a timer is pending. Close stops them.
// Anyone may call it.
func NewService(opts ...Option) *Service {
	cfg := config{}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.shards <= 0 {
		cfg.shards = runtime.GOMAXPROCS(0)
	}
	svc := &Service{
		tb:     NewTimebase(time.Now(), cfg.tick),
		inline: cfg.inline,
		quit:   make(chan struct{}),
		shards: make([]*shard, cfg.shards),
	}
	for i := range svc.shards {
		svc.shards[i] = newShard(svc)
	}
	svc.hints.New = func() any {
		i := svc.nextHint.Add(1) // round robin; no partner
		return &shardHint{s: svc.shards[int(i)%len(svc.shards)]}
	}
	svc.drivers.Add(len(svc.shards))
	for _, s := range svc.shards {
		go s.drive()
	}
	return svc
}

// newShard returns an empty shard of svc with its runtime timer stopped.
// NewService calls it.
func newShard(svc *Service) *shard {
	s := &shard{tb: svc.tb, svc: svc, armed: math.MaxUint64}
	s.rt = time.NewTimer(math.MaxInt64)
	s.rt.Stop()
	s.fire = s.collectLocked
	return s
}

// Tick returns the tick length of the Service.
// Safe for concurrent use.
func (svc *Service) Tick() time.Duration { return svc.tb.Tick() }

// Shards returns the number of shards of the Service.
// Safe for concurrent use.
func (svc *Service) Shards() int { return len(svc.shards) }

// Pending returns the number of timers scheduled and neither fired nor
// stopped. It locks each shard in turn, so under concurrent use it is a
// snapshot of no single instant.
// Safe for concurrent use.
func (svc *Service) Pending() int {
	svc.checkInit()
	n := 0
	for _, s := range svc.shards {
		s.mu.Lock()
		n += s.wheel.Len()
		s.mu.Unlock()
	}
	return n
}

// Close stops the Service. Every pending timer is discarded: its f never
// runs, and a later Stop or Reset of it returns false. Timers that had already
// expired when Close began still have their f run. Close returns after every
// driver goroutine has exited and every f the Service started has returned,
// so f must not call Close (it would wait for itself). After Close, AfterFunc
// returns a Timer that never fires and Reset schedules nothing.
//
// The first Close returns nil; later calls return ErrClosed at once without
// waiting.
// Safe for concurrent use, except from inside f.
func (svc *Service) Close() error {
	svc.checkInit()
	if !svc.closed.CompareAndSwap(false, true) { // CAS: the one winner runs the shutdown; partner: later Close calls
		return ErrClosed
	}
	for _, s := range svc.shards {
		s.close()
	}
	close(svc.quit)
	svc.drivers.Wait()
	svc.callbacks.Wait()
	return nil
}

// checkInit panics with ErrUninitializedService unless NewService built svc.
// Safe for concurrent use.
func (svc *Service) checkInit() {
	if len(svc.shards) == 0 {
		panic(ErrUninitializedService)
	}
}

// pick returns the shard for a new Timer. The choice comes from a sync.Pool,
// whose Get and Put use the current P's private cache: goroutines running on
// one P keep getting that P's hint, so callers on different Ps tend to use
// different shards and rarely meet on a lock. (A random shard per call makes
// every caller visit every lock; see "Sharding" for both measured.) A hint
// the GC drops is remade by New with the next shard in turn.
// Safe for concurrent use.
func (svc *Service) pick() *shard {
	if len(svc.shards) == 1 {
		return svc.shards[0]
	}
	h := svc.hints.Get().(*shardHint)
	s := h.s
	svc.hints.Put(h)
	return s
}

// run calls f on the driver goroutine or starts it in its own, per the
// Service's option. The driver calls it with no lock held.
func (svc *Service) run(f func()) {
	if svc.inline {
		f()
		return
	}
	svc.callbacks.Add(1)
	go svc.runAsync(f)
}

// runAsync is the body of an f goroutine.
// Started by run only.
func (svc *Service) runAsync(f func()) {
	defer svc.callbacks.Done()
	f()
}

// drive is the driver goroutine of s: it follows "The driver protocol".
// Started by NewService only.
func (s *shard) drive() {
	defer s.svc.drivers.Done()
	for {
		s.wakes.Add(1) // statistics only; partner: the Load in DriverWakes (export_test.go)
		s.advance()    // steps 1-3
		s.runBatch()   // step 4
		select {       // step 5
		case <-s.rt.C:
		case <-s.svc.quit:
			return
		}
	}
}

// advance locks s, advances its wheel to the clock, collects the fired
// Timers into batch, and arms rt for the next expiry (steps 1-3 of "The
// driver protocol").
// The driver of s calls it.
func (s *shard) advance() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	elapsed := time.Since(s.tb.origin)
	s.wheel.Advance(s.tb.floorTicks(elapsed), s.fire)
	next, ok := s.wheel.NextExpiry()
	if !ok {
		s.armed = math.MaxUint64
		s.rt.Stop()
		return
	}
	s.armLocked(next, elapsed)
}

// collectLocked is the fire callback of the driver's Advance.
// s.mu must be held; the driver of s calls it through Advance.
func (s *shard) collectLocked(e *Entry[*Timer]) {
	s.batch = append(s.batch, e.Value)
}

// runBatch runs f of every Timer the last advance fired, with no lock held,
// and empties the batch (step 4).
// The driver of s calls it.
func (s *shard) runBatch() {
	for i, t := range s.batch {
		s.batch[i] = nil
		s.svc.run(t.f)
	}
	s.batch = s.batch[:0]
	if cap(s.batch) > maxKeptBatch {
		s.batch = nil // let a burst's backing array go
	}
}

// maxKeptBatch is the largest batch capacity a driver keeps between wakes.
const maxKeptBatch = 1 << 12

// armLocked sets rt to fire at the start of tick next, given elapsed, the
// time since the origin that the caller read, and records it in armed.
// s.mu must be held.
func (s *shard) armLocked(next uint64, elapsed time.Duration) {
	s.armed = next
	s.rt.Reset(s.tb.sinceOrigin(next) - elapsed)
}

// schedule (re)inserts t to fire d from now and reports whether it was
// pending; on a closed shard it does nothing and returns false (the "Inserts"
// steps of "The driver protocol").
// Anyone may call it; it takes s.mu.
func (s *shard) schedule(t *Timer, d time.Duration) bool {
	elapsed := time.Since(s.tb.origin)
	deadline := s.tb.deadlineAfter(elapsed, d)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.wheel.Len() == 0 {
		// Bring an empty wheel up to the clock (it fires nothing) so the
		// new entry is filed at the level its distance calls for.
		s.wheel.Advance(s.tb.floorTicks(elapsed), nil)
	}
	wasPending := s.wheel.Reset(&t.entry, deadline)
	if deadline < s.armed {
		s.armLocked(deadline, elapsed)
	}
	return wasPending
}

// cancel removes t from s and reports whether it was pending.
// Anyone may call it; it takes s.mu.
func (s *shard) cancel(t *Timer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wheel.Cancel(&t.entry)
}

// close marks s closed, discards its pending timers and stops rt.
// Close calls it.
func (s *shard) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.wheel.CancelAll(nil)
	s.armed = math.MaxUint64
	s.rt.Stop()
}
