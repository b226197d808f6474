package timerdriver

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/internal/contain"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/timerwheel"
	"github.com/blitz-go/blitz/waker"
)

// Driver is the runtime's time: one timer wheel per worker (a shard),
// each under its own mutex, all counting ticks of one Timebase. A sleep
// inserts into a shard chosen by its address, so that the same sleep always
// finds its shard again, and sleeps of different tasks rarely share a lock.
// Every worker runs the driver (scheduler.Driver) at each tick and before it
// parks: it fires the due entries of any shard whose lock it can take and
// returns the time to the next deadline, which becomes its park timeout. See
// the package doc, "Protocol".
type Driver struct {
	base   timerwheel.Timebase
	shards []timerShard
	// scratch holds, per worker, the Wakers of the sleeps it fired, woken
	// after the shard's lock is released. scratch[i] is owned by worker i.
	scratch [][]waker.Waker
	// spareScratch is a scratch for a caller without a worker of its own
	// (a simulation's driving goroutine, a Context of no worker): fire
	// takes it (Swap) for the time it uses it and puts it back (Store), so
	// that such a caller allocates nothing per fire; one that finds none
	// (another holds it) makes one.
	spareScratch atomic.Pointer[[]waker.Waker]
	// wakeAt is the earliest deadline tick that the driver's last run saw,
	// which is when a worker that parked after it will wake at the latest;
	// math.MaxUint64 when it saw none. Stored by Maintain and by arm (a
	// sooner deadline), loaded by arm: a sleep due before wakeAt notifies an
	// idle worker, one due after it does not (see the package doc, "Protocol").
	// Pairs with the shards' next: arm stores next then loads wakeAt,
	// Maintain stores wakeAt then loads next again, so no sleep is missed by
	// both (see Maintain).
	wakeAt atomic.Uint64
	// lastNow is a tick known to be in the past, so that a deadline at or
	// before it is due without reading the clock again. Stored by Maintain
	// (any worker) after its clock read, loaded by blitz.SleepFuture.Poll
	// (LastNow). Two Maintains racing may store out of order and lower it by
	// a tick; every value stored was a past tick, so it stays a lower bound
	// of now, which is all Poll relies on.
	lastNow atomic.Uint64
	// never is the deadline tick of every instant math.MaxInt64 or more
	// after the origin (Timebase.DeadlineTick saturates there): a sleep
	// due at it or later is never armed, so it costs no wheel entry (an
	// overflow-list entry costs a scan of that list at every change to its
	// wheel while the levels are empty) and never fires. Read-only.
	never uint64
	// notify wakes an idle worker; set once by SetNotify, before the
	// scheduler starts (the scheduler's Notify, or a kick of the I/O driver).
	notify func()
	// closed is set by Close when the shutdown begins: sleeps first polled afterwards
	// use the fallback timer (see blitz.SleepFuture) rather than wheels that no
	// worker will drive again.
	closed atomic.Bool
}

// timerShard is one wheel.
type timerShard struct {
	_  [128]byte
	mu sync.Mutex
	// wheel holds the pending sleeps. Guarded by mu.
	wheel timerwheel.Wheel[*SleepState]
	// next is the earliest deadline tick in wheel, math.MaxUint64 when it is
	// empty. Stored under mu after every change; loaded lock-free by the
	// driver to skip shards with nothing due, and again after it publishes
	// wakeAt (arm stores next before it loads wakeAt; see publishWakeAt).
	next atomic.Uint64
	// fireFn is onFire as a func value, made once so that Advance does not
	// allocate a closure per call. Read-only after New.
	fireFn func(*timerwheel.Entry[*SleepState])
	// out collects the Wakers of the entries fired by the Advance in
	// progress. Set and cleared under mu by fire.
	out *[]waker.Waker
	// firedAt is the time of the Advance in progress, since the timebase's
	// origin, for the lateness of what it fires. Set under mu by fire.
	firedAt time.Duration
	// fired counts the sleeps fired and lateness how long after their
	// deadline, for Metrics. Guarded by mu.
	fired    uint64
	lateness scheduler.Histogram
	// tick is the wheel's tick. Read-only after New.
	tick time.Duration
	_    [128]byte
}

// New makes n shards (one per worker) counting ticks of tick from now.
func New(n int, tick time.Duration) *Driver {
	d := &Driver{base: timerwheel.NewTimebase(time.Now(), tick)}
	d.never = d.base.Ticks(math.MaxInt64)
	d.shards = make([]timerShard, n)
	for i := range d.shards {
		sh := &d.shards[i]
		sh.next.Store(math.MaxUint64)
		sh.fireFn = sh.onFire
		sh.tick = tick
	}
	d.wakeAt.Store(math.MaxUint64)
	d.scratch = make([][]waker.Waker, n)
	return d
}

// SetNotify sets the function that wakes an idle worker when a sleep is
// armed sooner than any worker expects to run the driver. Called once, by
// the runtime's constructor, before the scheduler runs the driver.
func (d *Driver) SetNotify(notify func()) { d.notify = notify }

// Close marks the shutdown's start: sleeps first polled afterwards use the
// fallback timer (Closed reports true). Any goroutine.
func (d *Driver) Close() { d.closed.Store(true) } // store: loaded by Closed

// Closed reports whether Close was called. Any goroutine.
func (d *Driver) Closed() bool { return d.closed.Load() } // load: pairs with Close's store

// DeadlineTick returns the tick at or after t, the deadline tick of a sleep
// until t (Timebase.DeadlineTick). Any goroutine.
func (d *Driver) DeadlineTick(t time.Time) uint64 { return d.base.DeadlineTick(t) }

// LastNow returns a tick known to be in the past: a deadline at or before
// it is due without reading the clock. Any goroutine.
func (d *Driver) LastNow() uint64 { return d.lastNow.Load() } // load: a lower bound of now; see lastNow

// Never returns the deadline tick from which a sleep never comes and is
// never armed. Any goroutine.
func (d *Driver) Never() uint64 { return d.never }

// Base returns the driver's timebase. Any goroutine.
func (d *Driver) Base() timerwheel.Timebase { return d.base }

// shardFor picks the shard of a sleep by hashing its address (the address
// is only hashed, never turned back into a pointer).
func (d *Driver) shardFor(s *SleepState) *timerShard {
	a := uintptr(unsafe.Pointer(s))
	return &d.shards[(a>>6^a>>12)%uintptr(len(d.shards))]
}

// SleepState is the part of a sleep the wheel refers to; the sleep's future
// holds it by value, and its zero value is an unarmed sleep. Its fields are
// guarded by the mutex of the shard the sleep is in.
type SleepState struct {
	entry timerwheel.Entry[*SleepState]
	// wk is the Waker to wake when the deadline passes.
	wk waker.Waker
	// fired is set by the driver when the deadline passed.
	fired bool
}

// InWheel reports whether s is in a wheel. It reads s without its shard's
// mutex, so only for a sleep that no Arm, Disarm or Maintain can touch
// meanwhile: the task owning it, between its own calls (tests).
func (s *SleepState) InWheel() bool { return s.entry.Pending() }

// Arm inserts s with deadline tick dl, or refreshes its Waker if it is
// already pending, and reports whether it has already fired. A sleep that
// became the shard's earliest deadline notifies an idle worker, so that some
// parked worker recomputes its timeout. Called by the task polling the
// sleep (blitz.SleepFuture.Poll).
func (d *Driver) Arm(s *SleepState, dl uint64, wk waker.Waker) (fired bool) {
	sh := d.shardFor(s)
	sh.mu.Lock()
	if s.fired {
		sh.mu.Unlock()
		return true
	}
	if !s.wk.WillWake(wk) {
		s.wk = wk
	}
	inserted := false
	if !s.entry.Pending() {
		s.entry.Value = s
		sh.wheel.Insert(&s.entry, dl)
		if dl < sh.next.Load() {
			sh.next.Store(dl)
		}
		inserted = true
	}
	sh.mu.Unlock()
	if inserted && dl < d.wakeAt.Load() {
		// Sooner than any worker expects to run the driver: make one look.
		d.wakeAt.Store(dl)
		if d.notify != nil {
			d.notify()
		}
	}
	return false
}

// Disarm removes s from its wheel if it is pending, and forgets its Waker
// and whether it fired, so that it can be armed again. Called by the task
// owning the sleep (its completion, Cancel or Reset).
func (d *Driver) Disarm(s *SleepState) {
	sh := d.shardFor(s)
	sh.mu.Lock()
	if s.entry.Pending() {
		sh.wheel.Cancel(&s.entry)
		sh.refreshNext()
	}
	s.wk, s.fired = waker.Waker{}, false
	sh.mu.Unlock()
}

// refreshNext recomputes next from the wheel. Called with mu held.
func (sh *timerShard) refreshNext() {
	if t, ok := sh.wheel.NextExpiry(); ok {
		sh.next.Store(t)
	} else {
		sh.next.Store(math.MaxUint64)
	}
}

// Maintain fires every due sleep and returns the time until the next
// deadline (negative if none). It makes *Driver a scheduler.Driver;
// the workers call it with their Context, and the wakes go through cx.Wake
// so that a woken task runs on the worker that fired it (contained: a
// Waker that panics is reported, see contain.Wake).
func (d *Driver) Maintain(cx *future.Context) time.Duration {
	now := d.NowTick()
	if now > d.lastNow.Load() {
		d.lastNow.Store(now)
	}
	earliest := d.publishWakeAt(d.fireDue(cx, now))
	return d.timeoutUntil(earliest, now)
}

// fireDue fires the due sleeps of every shard whose lock it can take and
// returns the earliest deadline tick left in any shard. A shard whose lock
// another holds keeps its due deadline, so the result is at most now and
// the caller comes back at once.
func (d *Driver) fireDue(cx *future.Context, now uint64) uint64 {
	earliest := uint64(math.MaxUint64)
	for i := range d.shards {
		sh := &d.shards[i]
		next := sh.next.Load()
		if next <= now && sh.mu.TryLock() {
			d.fire(cx, sh, now)
			next = sh.next.Load()
		}
		earliest = min(earliest, next)
	}
	return earliest
}

// publishWakeAt stores earliest, the earliest deadline that fireDue saw, as
// wakeAt, and returns the deadline the caller must wake for: earliest, or a
// sooner one armed meanwhile. Whoever parks next sleeps until wakeAt, and arm
// notifies for anything sooner; but a sleep armed after fireDue read its
// shard may have loaded the old wakeAt, found no need to notify, and be
// missing from earliest. So the shards are read again after the store: arm
// stores its shard's next before it loads wakeAt, and all four accesses are
// sequentially consistent, so either that arm loads this store (and
// notifies if it is sooner) or the second look sees its deadline.
func (d *Driver) publishWakeAt(earliest uint64) uint64 {
	d.wakeAt.Store(earliest)
	if again := d.earliestNext(); again < earliest {
		earliest = again
		d.wakeAt.Store(earliest)
	}
	return earliest
}

// timeoutUntil converts the deadline tick earliest into a park timeout, now
// being the tick read before: negative for none (math.MaxUint64), zero for
// a deadline already due. The clock moves on after now was read, so a
// deadline that passes meanwhile is also a zero timeout, never a negative
// one, which would park the worker without limit.
func (d *Driver) timeoutUntil(earliest, now uint64) time.Duration {
	switch {
	case earliest == math.MaxUint64:
		return -1
	case earliest <= now:
		return 0
	}
	return max(time.Until(d.base.Time(earliest)), 0)
}

// earliestNext returns the earliest deadline tick of any shard,
// math.MaxUint64 if every shard is empty.
func (d *Driver) earliestNext() uint64 {
	earliest := uint64(math.MaxUint64)
	for i := range d.shards {
		earliest = min(earliest, d.shards[i].next.Load())
	}
	return earliest
}

// fire advances sh to now and wakes the fired sleeps outside the lock,
// through cx so that they run on this worker. Called with sh.mu held; returns
// with it released.
func (d *Driver) fire(cx *future.Context, sh *timerShard, now uint64) {
	var out *[]waker.Waker
	spare := false
	if id := cx.Worker(); id >= 0 && id < len(d.scratch) {
		out = &d.scratch[id]
	} else if out, spare = d.spareScratch.Swap(nil), true; out == nil { // acquire: pairs with the Store below
		out = new([]waker.Waker)
	}
	sh.out = out
	sh.firedAt = time.Since(d.base.Origin())
	sh.wheel.Advance(now, sh.fireFn)
	sh.out = nil
	sh.refreshNext()
	sh.mu.Unlock()
	for i, wk := range *out {
		contain.Wake(cx, wk, contain.OfTimerDriver)
		(*out)[i] = waker.Waker{}
	}
	*out = (*out)[:0]
	if spare {
		d.spareScratch.Store(out) // release: pairs with the Swap above
	}
}

// onFire is the wheel's fire callback (fireFn): it marks the sleep fired and
// collects its Waker. Called by Advance with mu held.
func (sh *timerShard) onFire(e *timerwheel.Entry[*SleepState]) {
	s := e.Value
	s.fired = true
	sh.fired++
	sh.lateness.Observe(max(sh.firedAt-time.Duration(e.Deadline())*sh.tick, 0))
	*sh.out = append(*sh.out, s.wk)
	s.wk = waker.Waker{}
}

// NowTick returns the current tick, reading only the monotonic clock.
func (d *Driver) NowTick() uint64 {
	return uint64(time.Since(d.base.Origin()) / d.base.Tick())
}

// FiredStats returns the sleeps fired and the histogram of their lateness,
// over every shard.
func (d *Driver) FiredStats() (fired uint64, lateness scheduler.Histogram) {
	for i := range d.shards {
		sh := &d.shards[i]
		sh.mu.Lock()
		fired += sh.fired
		if sh.lateness.Counts != nil {
			if lateness.Counts == nil {
				lateness = sh.lateness.Clone()
			} else {
				for j, c := range sh.lateness.Counts {
					lateness.Counts[j] += c
				}
				lateness.Sum += sh.lateness.Sum
			}
		}
		sh.mu.Unlock()
	}
	return fired, lateness
}

// Pending returns how many sleeps are in the wheels.
func (d *Driver) Pending() int {
	n := 0
	for i := range d.shards {
		sh := &d.shards[i]
		sh.mu.Lock()
		n += sh.wheel.Len()
		sh.mu.Unlock()
	}
	return n
}
