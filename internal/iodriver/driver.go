package iodriver

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// completionBatch is how many completions one Wait collects at most;
// firstBatch is where a ring's batch starts. A ring's batch doubles
// each time a Wait fills it, up to completionBatch, and never shrinks: a
// busy ring reaches the full batch within its first few Waits and keeps
// it, while a runtime that does little I/O (a simulation makes many) pays
// for a small array only, not for 256 completions per ring.
const (
	completionBatch = 256
	firstBatch      = 16
)

// Driver connects the I/O backend to the scheduler (it is the runtime's
// scheduler.Blocker, through package blitz's blockingDriver). It runs one or more rings:
// instances of the backend, each served by the workers whose id maps to it
// (worker w serves rings[w % len(rings)]). With io_uring and epoll there is
// one ring per worker, so that each worker submits to and reaps from a ring
// of its own and the kernel work of the operations (a loopback send runs the
// receiver's TCP stack inside io_uring_enter) is spread over every core;
// kqueue, poll and IOCP run one ring.
//
// A socket is homed on one ring for its life (package blitz's netFD.ring,
// chosen round-robin by Home when it is made): all its operations, its
// close and its pooled-read buffers go to that ring, whichever worker or goroutine submits them, so
// that the per-descriptor rules of a backend (one op per direction, a close
// that cancels the descriptor's ops first) hold inside one instance.
//
// A ring's completions are collected in two places: by a worker of the ring
// at the start of each tick, without blocking, if no other worker is
// collecting it (poll, TryLock on reap); and by the parked worker that holds
// the ring, which sleeps in the ring's Wait. Each completion names its op,
// whose Owner is the Waiter that wakes the task waiting for it.
//
// Timers: of the parked holders, those whose deadline another holder's
// covers sleep without a limit (see TryAcquire), so that a deadline wakes
// one worker, not every ring's.
//
// Panics: a Waker that panics when a completion wakes it is contained there
// (contain.Wake): the completion is stored, the panic is reported through
// the scheduler (blitz.Config.OnPanic, or the log) and counted, and the rest of
// the batch is delivered; the worker goes on. A crash, as time.AfterFunc's
// goroutine would, was rejected: the Waker is the waiter's code, not the
// driver's, and one bad Waker would take every task of the process down.
type Driver struct {
	rings []*Ring
	// armed is the delivery of an armed receive's completion (one without
	// an Op: see backend.RecvArmer), package blitz's, whose sockets and
	// armed receives they are. Set once by SetArmed before any socket
	// exists; read-only afterwards.
	armed func(r *Ring, cx *future.Context, c *backend.Completion)
	// hmu guards the rings' holder, wakeBy and the decisions made from
	// them (TryAcquire, Covers, Release, kick).
	hmu sync.Mutex
	// next picks the home ring of the next socket. Any goroutine.
	next atomic.Uint32
	// native is the backend's CapNativeCompletions (see package blitz's netFD.trySend).
	// Immutable.
	native bool
	// poolCount and poolSize shape each ring's read pool: Config's count
	// split over the rings, Config's size. Immutable.
	poolCount, poolSize int
	// sched is the runtime's scheduler, to report a Waker's panic that a
	// goroutine without a Context contained (contain.WakeReported), and to
	// notify a worker of a ring (watch). Written once by SetScheduler
	// before any socket or file exists; read-only after.
	sched *scheduler.Scheduler
	// errs counts Wait errors other than ErrClosed (they are not expected;
	// the count is in Stats so that they are not silent).
	errs atomic.Uint64
	// acceptSkips counts the connections an accept skipped because they
	// failed before it took them (package blitz's connLevelAcceptError):
	// added to by the task polling the AcceptFuture (SkipAccept), loaded by
	// Metrics (AcceptsSkipped).
	acceptSkips atomic.Uint64
	// workers is the scheduler's worker count: ring i is served by workers
	// i, i+len(rings), ... Immutable.
	workers int
}

// Ring is one backend instance and who sleeps in it.
type Ring struct {
	b backend.Backend
	// d is the driver and index the ring's place in its rings. Immutable.
	d     *Driver
	index int
	// inflight counts the ops submitted to the ring whose final completion
	// has not been dispatched: raised by submit, lowered by collect. A
	// worker parks in the ring only while it is positive (TryAcquire);
	// otherwise on its channel, and the submit that raises it from zero
	// brings a worker back (watch). The pairing: the
	// submitter raises it and then loads holder and the workers' parked
	// bits; a parking worker sets its parked bit and then loads inflight.
	inflight atomic.Int64
	// ops counts the ring's operations by kind, for Metrics: submit adds
	// to submitted, collect to completed.
	ops OpCounters
	// trimmer is b as a backend.Trimmer, nil if it is not one. Immutable.
	trimmer backend.Trimmer
	// poller waits for the ring's completions in Go's poller, nil when the
	// backend cannot be polled so (then Block sleeps in its Wait).
	// Immutable after New.
	poller *ringPoller
	// holder is the id of the worker that holds the ring (sleeps in its
	// Wait), -1 when none. Written under the driver's hmu; also loaded
	// without it by Unpark, which only needs a recent value (a claim's
	// token covers the rest, see Unpark).
	holder atomic.Int32
	// wakeBy is when the holder's Block returns at the latest: the zero
	// Time when it sleeps without limit. Guarded by hmu.
	wakeBy time.Time
	// covered is set by TryAcquire when another holder wakes before this
	// one's deadline: this holder's Block then sleeps without a limit.
	// Written under hmu by the worker taking the ring (TryAcquire) or giving
	// it up (Release); read without it by that holder's Block, which runs
	// between the two on the same goroutine.
	covered bool
	// reap serializes the backend's Wait, which admits one caller at a
	// time: held by poll's non-blocking collect (TryLock) and by Block.
	reap sync.Mutex
	// out receives completions: firstBatch of them at first, doubled by
	// collect when a Wait fills it, up to completionBatch. Guarded by
	// reap.
	out []backend.Completion
	// kicked is set when the timers got a deadline sooner than the one the
	// holder sleeps towards; Block returns true on it so that the worker
	// recomputes its timeout. Set by kickLocked (any goroutine), swapped by
	// Block.
	kicked atomic.Bool
	// unparked is set by Unpark before its Wake, and swapped by Block once
	// it holds reap (see Block).
	unparked atomic.Bool
	// looking is set by the holder while it collects in its poller's look,
	// which reads unparked and kicked after it: an Unpark or a kick that
	// finds it set needs no Wake (a system call, and a readiness that
	// would end the holder's next wait for nothing), since the holder
	// will see its flag. Typically the holder's own collection woke a task
	// and the scheduler notified the holder itself. The pairing: the
	// waker stores its flag, then loads looking; the holder clears
	// looking, then loads the flags (all sequentially consistent).
	looking atomic.Bool
	// pool is the ring's buffer group of pooled reads, registered on first
	// use.
	pool readPool
}

// Waiter is what a submitted op's Owner must be: the driver hands it the
// op's completions, with the Context of the worker that collected them.
type Waiter interface {
	Complete(cx *future.Context, c *backend.Completion)
}

// New makes the driver of the backend instances bs (at least one,
// all of one kind). count and size are the read pool's in all.
func New(bs []backend.Backend, workers, count, size int) *Driver {
	d := &Driver{native: bs[0].Caps().Has(backend.CapNativeCompletions), poolSize: size, workers: workers}
	// Each ring's share of the pool, a power of two (buffer rings need one).
	d.poolCount = 1
	for d.poolCount*2 <= count/len(bs) {
		d.poolCount *= 2
	}
	for i, b := range bs {
		r := &Ring{b: b, d: d, index: i, out: make([]backend.Completion, firstBatch)}
		r.trimmer, _ = b.(backend.Trimmer)
		r.holder.Store(-1)
		r.poller = newRingPoller(r)
		d.rings = append(d.rings, r)
	}
	return d
}

// SetScheduler gives the driver the runtime's scheduler. Called once by
// package blitz's New, before the scheduler runs and before any socket or
// file exists.
func (d *Driver) SetScheduler(s *scheduler.Scheduler) { d.sched = s }

// Scheduler returns the runtime's scheduler (nil before SetScheduler), to
// report a Waker's panic to (contain.WakeReported). Any goroutine.
func (d *Driver) Scheduler() *scheduler.Scheduler { return d.sched }

// SetArmed sets the delivery of armed receives' completions (see armed).
// Called once by package blitz's New, before any socket exists.
func (d *Driver) SetArmed(f func(r *Ring, cx *future.Context, c *backend.Completion)) {
	d.armed = f
}

// Rings returns the rings, in index order. The slice is the driver's:
// read-only. Any goroutine.
func (d *Driver) Rings() []*Ring { return d.rings }

// Native reports the backend's CapNativeCompletions (see package blitz's
// netFD.trySend). Any goroutine.
func (d *Driver) Native() bool { return d.native }

// WaitErrors returns the count of Wait errors other than ErrClosed. Any
// goroutine.
func (d *Driver) WaitErrors() uint64 { return d.errs.Load() }

// SkipAccept counts a connection an accept skipped. Called by the task
// polling an AcceptFuture.
func (d *Driver) SkipAccept() { d.acceptSkips.Add(1) }

// AcceptsSkipped returns the count of SkipAccept. Any goroutine.
func (d *Driver) AcceptsSkipped() uint64 { return d.acceptSkips.Load() }

// Backend returns r's backend instance. Immutable; any goroutine.
func (r *Ring) Backend() backend.Backend { return r.b }

// Driver returns the driver r belongs to. Any goroutine.
func (r *Ring) Driver() *Driver { return r.d }

// Index returns r's place in the driver's Rings. Any goroutine.
func (r *Ring) Index() int { return r.index }

// InFlight returns the ops submitted to r whose final completion has not
// been dispatched, never negative. Any goroutine (Metrics).
func (r *Ring) InFlight() int64 { return max(r.inflight.Load(), 0) }

// Ops returns r's counters of operations by kind. Any goroutine.
func (r *Ring) Ops() *OpCounters { return &r.ops }

// StartArmed counts an armed receive about to be armed on r as an op in
// flight, as Submit counts an op, and brings a worker to wait in r if it
// is r's first (watch). Called by the pooled read that arms, before
// backend.RecvArmer.ArmRecv.
func (r *Ring) StartArmed() {
	if r.inflight.Add(1) == 1 { // as Submit: pairs with TryAcquire's load
		r.d.watch(r)
	}
	r.ops.submit(backend.KindRecv)
}

// UnstartArmed undoes StartArmed for a receive the backend refused to arm.
// Called by the pooled read whose ArmRecv failed.
func (r *Ring) UnstartArmed() {
	r.inflight.Add(-1)
	r.ops.complete(backend.KindRecv)
}

// Submit submits op to r, counted in flight until its final completion is
// dispatched: every op, with an owner or not (a close, a cancel), so that a
// ring with any op in flight has a worker waiting in it, which is also what
// pushes a queued submission to the kernel. The first op of a ring nobody
// waits in brings one of its parked workers back to wait there (watch).
// The count goes up before the Submit, so that collect's decrement cannot
// come first.
func (r *Ring) Submit(op *backend.Op) error {
	if r.inflight.Add(1) == 1 { // add: pairs with TryAcquire's load, after the parker's bit was set
		r.d.watch(r)
	}
	r.ops.submit(op.Kind) // before the op can complete, so completed never passes submitted
	if err := r.b.Submit(op); err != nil {
		r.inflight.Add(-1)
		r.ops.complete(op.Kind)
		return err
	}
	return nil
}

// watch wakes a parked worker of r if none holds r: one that parked on its
// channel because r had nothing in flight. A worker that is running polls r
// at each tick and looks at inflight before it parks again.
func (d *Driver) watch(r *Ring) {
	if r.holder.Load() >= 0 || d.sched == nil {
		return
	}
	for id := r.index; id < d.workers; id += len(d.rings) {
		if d.sched.NotifyWorker(id) {
			return
		}
	}
}

// Home picks the ring of a new socket, round-robin. Any goroutine.
func (d *Driver) Home() *Ring {
	if len(d.rings) == 1 {
		return d.rings[0]
	}
	return d.rings[(d.next.Add(1)-1)%uint32(len(d.rings))]
}

// RingOf is the ring worker id serves; a goroutine (NoWorker) gets ring 0.
// Any goroutine.
func (d *Driver) RingOf(id int) *Ring {
	if id < 0 {
		return d.rings[0]
	}
	return d.rings[id%len(d.rings)]
}

// collect waits up to timeout for completions of r, dispatches them and
// returns how many there were; full reports that they filled the batch
// (more may be ready), which then grows for the next Wait if it is not at
// its largest. Called with r.reap held.
func (d *Driver) collect(r *Ring, cx *future.Context, timeout time.Duration) (n int, full bool) {
	n, err := r.b.Wait(r.out, timeout)
	if err != nil && !errors.Is(err, backend.ErrClosed) {
		d.errs.Add(1)
	}
	for i := range n {
		c := &r.out[i]
		kind := backend.KindRecv // an armed receive's completion has no Op (see package blitz's recvArm)
		if c.Op != nil {
			kind = c.Op.Kind
		}
		if !c.More() {
			r.inflight.Add(-1)
			r.ops.complete(kind)
		}
		if c.Op == nil {
			d.armed(r, cx, c)
		} else if w, ok := c.Op.Owner.(Waiter); ok {
			w.Complete(cx, c)
		}
		r.out[i] = backend.Completion{} // drop the references for the GC
	}
	full = n == len(r.out)
	if full && len(r.out) < completionBatch {
		r.out = make([]backend.Completion, min(2*len(r.out), completionBatch))
	}
	return n, full
}

// Poll collects what is ready in the ring of cx's worker without blocking,
// unless another worker is collecting it or holds it. Called by Maintain at
// every tick. A full batch may mean more are ready; a few rounds at most
// keep the tick short.
func (d *Driver) Poll(cx *future.Context) {
	r := d.RingOf(cx.Worker())
	if r.inflight.Load() == 0 {
		// Nothing in flight, so nothing to collect and nothing queued
		// (every submission is counted): a yield on an idle ring costs an
		// atomic load, not a system call.
		return
	}
	if !r.reap.TryLock() {
		return
	}
	for range 4 {
		if _, full := d.collect(r, cx, 0); !full {
			break
		}
	}
	r.reap.Unlock()
}

// TryAcquire makes worker id the holder of its ring, sleeping for up to
// timeout, if the ring has an op in flight or a timer to sleep towards
// (timeout >= 0) and nobody holds it. If another holder wakes within
// timeout, it covers this one's deadline (the timers are shared, so it will
// fire this worker's timers too), and this one sleeps without a limit.
//
// With neither I/O in flight nor a timer the worker parks on its channel,
// which a spawn or a wake reaches for the price of a channel send, not a
// ring wake; the submit that gives the ring an op brings it back (watch). A
// timer is slept towards in the ring even without I/O: the ring's wait
// ends within microseconds of its timeout, where a Go timer behind a
// channel park ends up to a millisecond late (an idle Go runtime sleeps in
// epoll_wait, whose timeout counts whole milliseconds).
func (d *Driver) TryAcquire(id int, timeout time.Duration) bool {
	r := d.RingOf(id)
	if timeout < 0 && r.inflight.Load() == 0 { // load: after PrepareToPark set our parked bit; pairs with submit's add
		return false
	}
	d.hmu.Lock()
	defer d.hmu.Unlock()
	if r.holder.Load() >= 0 {
		return false
	}
	r.holder.Store(int32(id))
	r.wakeBy, r.covered = time.Time{}, false
	if timeout < 0 {
		return true
	}
	by := time.Now().Add(timeout)
	if d.coveredLocked(by) {
		r.covered = true
		return true
	}
	r.wakeBy = by
	return true
}

// coveredLocked reports whether some holder wakes by the time by. Called
// with hmu held.
func (d *Driver) coveredLocked(by time.Time) bool {
	for _, o := range d.rings {
		if o.holder.Load() >= 0 && !o.wakeBy.IsZero() && !o.wakeBy.After(by) {
			return true
		}
	}
	return false
}

// Covers reports whether a holder wakes within timeout; if none does, the
// caller keeps its timeout (a timer of Go's on its channel park, which
// costs nothing unless it fires). Kicking a holder awake to recompute its
// timeout instead cost an eventfd write and a wake of the holder's thread
// at every such park (at every request of a lone connection with a read
// timeout), for a deadline that is usually reset before it comes. Called
// by a worker whose TryAcquire failed (its ring has nothing in flight, or
// another holder).
func (d *Driver) Covers(timeout time.Duration) bool {
	if timeout < 0 {
		return true
	}
	d.hmu.Lock()
	defer d.hmu.Unlock()
	return d.coveredLocked(time.Now().Add(timeout))
}

// Release gives worker id's ring up.
func (d *Driver) Release(id int) {
	r := d.RingOf(id)
	d.hmu.Lock()
	r.holder.Store(-1)
	r.wakeBy, r.covered = time.Time{}, false
	d.hmu.Unlock()
}

// Block sleeps in the Wait of the ring of cx's worker (its holder) for up to
// timeout, or without a limit when another holder covers it, and reports
// whether it woke a task or was kicked by the timers.
//
// The backend's Wake is sticky only until the next Wait, and the next Wait
// may be another worker's non-blocking poll (Maintain), which would swallow
// a Wake meant for the holder while the holder waits for reap. So Unpark
// and kick also leave flags, which Block checks once it holds reap: a Wake
// that comes after that check finds nobody but the holder to consume it.
func (d *Driver) Block(cx *future.Context, timeout time.Duration) bool {
	r := d.RingOf(cx.Worker())
	if r.covered {
		timeout = -1
	}
	r.reap.Lock()
	if r.unparked.Swap(false) || r.kicked.Load() {
		r.reap.Unlock()
		return r.kicked.Swap(false)
	}
	if r.trimmer != nil {
		// Memory the backend holds for bursts goes back while the worker
		// sleeps; if some must wait longer first, the sleep ends then.
		if d := r.trimmer.TrimIdle(); d > 0 && (timeout < 0 || d < timeout) {
			timeout = d
		}
	}
	var got bool
	if r.poller != nil {
		got = r.poller.wait(cx, timeout)
	} else {
		n, _ := d.collect(r, cx, timeout)
		got = n > 0
	}
	r.reap.Unlock()
	r.unparked.Store(false) // a claim's token is in the worker's channel; ParkWith looks there next
	return r.kicked.Swap(false) || got
}

// Unpark wakes the backend's Wait if worker id holds its ring.
func (d *Driver) Unpark(id int) {
	r := d.RingOf(id)
	if r.holder.Load() == int32(id) {
		r.unparked.Store(true) // store: before the load of looking; pairs with look's clear, then load
		if !r.looking.Load() {
			_ = r.b.Wake() // an error means closed: nobody to wake
		}
	}
}

// Kick tells a holder that a timer is due sooner than it thinks, and
// reports whether there was a holder to tell.
func (d *Driver) Kick() bool {
	d.hmu.Lock()
	defer d.hmu.Unlock()
	return d.kickLocked()
}

// kickLocked makes one holder's Block return true (now, or at once if it is
// not in the backend's Wait yet: the flag and the backend's Wake are both
// sticky), so that its worker recomputes its timeout from the timers: the
// holder that wakes soonest, else any. Its wakeBy becomes "now", so that
// Covers calls until it has parked again do not kick a second one. It
// reports false when no worker holds a ring. Called with hmu held.
func (d *Driver) kickLocked() bool {
	var pick *Ring
	for _, r := range d.rings {
		if r.holder.Load() < 0 {
			continue
		}
		if pick == nil || (!r.wakeBy.IsZero() && (pick.wakeBy.IsZero() || r.wakeBy.Before(pick.wakeBy))) {
			pick = r
		}
	}
	if pick == nil {
		return false
	}
	pick.kicked.Store(true) // store: before the load of looking, as in Unpark
	pick.wakeBy = time.Now()
	if !pick.looking.Load() {
		_ = pick.b.Wake()
	}
	return true
}

// Close closes the rings after the workers stopped: the ops still in flight
// (those of tasks the shutdown cancelled) are cancelled by the backend, and
// their completions are collected here, so that what they hold (an accepted
// socket, a group buffer) is released and their tasks' futures, already
// cancelled, are not woken; a goroutine waiting for an op (the net.Conn
// adapter) is woken with its cancellation. s is the runtime's scheduler,
// stopped: the Context's executor, for a Waker's panic to be reported to.
func (d *Driver) Close(s *scheduler.Scheduler) {
	var cx future.Context
	cx.Reset(waker.Waker{}, s, nil, future.NoWorker)
	for _, r := range d.rings {
		if r.poller != nil {
			r.poller.close()
		}
		_ = r.b.Close()
		r.reap.Lock()
		for n, _ := d.collect(r, &cx, 0); n > 0; n, _ = d.collect(r, &cx, 0) { // after the drain, Wait returns ErrClosed with none
		}
		r.reap.Unlock()
	}
}

// CloseBackends closes the rings of a driver that never ran.
func (d *Driver) CloseBackends() {
	for _, r := range d.rings {
		if r.poller != nil {
			r.poller.close()
		}
		_ = r.b.Close()
	}
}

// Dispose releases what a completion nobody will read holds: the socket an
// accept made, the file an openat opened, the group buffer a recv filled.
// Called by whoever drops the completion (an abandoned or closed op's
// owner), holding no lock of the op.
func (r *Ring) Dispose(c *backend.Completion) {
	if c.Err != nil {
		return
	}
	if c.Op != nil && (c.Op.Kind == backend.KindAccept || c.Op.Kind == backend.KindOpenAt) && c.FD != backend.InvalidFD {
		_ = r.b.CloseFD(c.FD)
	}
	if c.Flags&backend.HasBuffer != 0 {
		_ = r.b.ReleaseBuffer(c.Op.BufferGroup, c.BufferID)
	}
}
