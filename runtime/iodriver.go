package runtime

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// completionBatch is how many completions one Wait collects at most.
const completionBatch = 256

// ioDriver connects the I/O backend to the scheduler (it is the runtime's
// scheduler.Blocker, through driver). Completions are collected in two
// places: by any worker at the start of a tick, without blocking, if no
// other worker is collecting (Maintain's TryLock on reap); and by the one
// parked worker that holds the blocker, which sleeps in the backend's Wait
// with the next timer deadline as the timeout. Each completion names its
// op, whose Owner is the ioWaiter that wakes the task waiting for it. See
// the package doc, "I/O".
type ioDriver struct {
	b backend.Backend
	// hmu guards holder and wakeBy: who sleeps in the backend, and until
	// when. Taken once per park (TryAcquire, Covers, Release) and by kick.
	hmu sync.Mutex
	// holder is the id of the worker that holds the blocker, -1 when none.
	// Written under hmu; also loaded without it by Unpark, which only needs
	// a recent value (a claim's token covers the rest, see Unpark).
	holder atomic.Int32
	// wakeBy is when the holder's Block will return at the latest: the
	// zero Time when it sleeps without limit.
	wakeBy time.Time
	// reap serializes the backend's Wait, which admits one caller at a
	// time: held by Maintain's non-blocking collect (TryLock) and by Block.
	reap sync.Mutex
	// out receives completions. Guarded by reap.
	out []backend.Completion
	// kicked is set when the timers got a deadline sooner than the one the
	// holder sleeps towards; Block returns true on it so that the worker
	// recomputes its timeout. Set by kick (any goroutine), swapped by Block.
	kicked atomic.Bool
	// unparked is set by Unpark before its Wake, and swapped by Block once
	// it holds reap (see Block).
	unparked atomic.Bool
	// native is the backend's CapNativeCompletions (see netFD.trySend).
	// Immutable.
	native bool
	// pool is the buffer group of pooled reads, registered on first use.
	pool readPool
	// errs counts Wait errors other than ErrClosed (they are not expected;
	// the count is in Stats so that they are not silent).
	errs atomic.Uint64
}

// ioWaiter is what a submitted op's Owner must be: the driver hands it the
// op's completions, with the Context of the worker that collected them.
type ioWaiter interface {
	complete(cx *future.Context, c *backend.Completion)
}

func newIODriver(b backend.Backend) *ioDriver {
	d := &ioDriver{b: b, out: make([]backend.Completion, completionBatch), native: b.Caps().Has(backend.CapNativeCompletions)}
	d.holder.Store(-1)
	return d
}

// collect waits up to timeout for completions, dispatches them and
// returns how many there were. Called with reap held.
func (d *ioDriver) collect(cx *future.Context, timeout time.Duration) int {
	n, err := d.b.Wait(d.out, timeout)
	if err != nil && !errors.Is(err, backend.ErrClosed) {
		d.errs.Add(1)
	}
	for i := range n {
		c := &d.out[i]
		if w, ok := c.Op.Owner.(ioWaiter); ok {
			w.complete(cx, c)
		}
		d.out[i] = backend.Completion{} // drop the references for the GC
	}
	return n
}

// poll collects what is ready without blocking, unless another worker is
// collecting or holds the blocker. Called by Maintain at every tick. A full
// batch may mean more are ready; a few rounds at most keep the tick short.
func (d *ioDriver) poll(cx *future.Context) {
	if !d.reap.TryLock() {
		return
	}
	for range 4 {
		if d.collect(cx, 0) < len(d.out) {
			break
		}
	}
	d.reap.Unlock()
}

// TryAcquire makes worker id the holder, sleeping for up to timeout, if
// nobody is.
func (d *ioDriver) TryAcquire(id int, timeout time.Duration) bool {
	d.hmu.Lock()
	defer d.hmu.Unlock()
	if d.holder.Load() >= 0 {
		return false
	}
	d.holder.Store(int32(id))
	d.wakeBy = time.Time{}
	if timeout >= 0 {
		d.wakeBy = time.Now().Add(timeout)
	}
	return true
}

// Covers reports whether the holder wakes within timeout; if it would sleep
// longer it is kicked, so that it recomputes its timeout from the timers
// (which hold the caller's deadline too) and the caller may sleep without
// one. With no holder (it just released) the caller keeps its timeout.
func (d *ioDriver) Covers(timeout time.Duration) bool {
	if timeout < 0 {
		return true
	}
	d.hmu.Lock()
	defer d.hmu.Unlock()
	if d.holder.Load() < 0 {
		return false
	}
	if !d.wakeBy.IsZero() && !d.wakeBy.After(time.Now().Add(timeout)) {
		return true
	}
	d.kickLocked()
	return true
}

// Release gives the blocker up.
func (d *ioDriver) Release(int) {
	d.hmu.Lock()
	d.holder.Store(-1)
	d.hmu.Unlock()
}

// Block sleeps in the backend's Wait for up to timeout and reports whether
// it woke a task or was kicked by the timers.
//
// The backend's Wake is sticky only until the next Wait, and the next Wait
// may be another worker's non-blocking poll (Maintain), which would swallow
// a Wake meant for the holder while the holder waits for reap. So Unpark
// and kick also leave flags, which Block checks once it holds reap: a Wake
// that comes after that check finds nobody but the holder to consume it.
func (d *ioDriver) Block(cx *future.Context, timeout time.Duration) bool {
	d.reap.Lock()
	if d.unparked.Swap(false) || d.kicked.Load() {
		d.reap.Unlock()
		return d.kicked.Swap(false)
	}
	got := d.collect(cx, timeout) > 0
	d.reap.Unlock()
	d.unparked.Store(false) // a claim's token is in the worker's channel; ParkWith looks there next
	return d.kicked.Swap(false) || got
}

// Unpark wakes the backend's Wait if worker id holds the blocker.
func (d *ioDriver) Unpark(id int) {
	if d.holder.Load() == int32(id) {
		d.unparked.Store(true)
		_ = d.b.Wake() // an error means closed: nobody to wake
	}
}

// kick tells the holder, if any, that a timer is due sooner than it thinks,
// and reports whether there was a holder to tell.
func (d *ioDriver) kick() bool {
	d.hmu.Lock()
	defer d.hmu.Unlock()
	if d.holder.Load() < 0 {
		return false
	}
	d.kickLocked()
	return true
}

// kickLocked makes the holder's Block return true (now, or at once if it is
// not in the backend's Wait yet: the flag and the backend's Wake are both
// sticky). Its wakeBy becomes "now", so that Covers calls until it has
// parked again do not kick it twice. Called with hmu held.
func (d *ioDriver) kickLocked() {
	d.kicked.Store(true)
	d.wakeBy = time.Now()
	_ = d.b.Wake()
}

// blockingDriver is the scheduler's Driver when the runtime has I/O: the
// timers and the I/O driver, and the Blocker that parks a worker in the
// backend's Wait.
type blockingDriver struct {
	*timerDriver
	*ioDriver
}

// Maintain fires due timers and collects ready completions.
func (d blockingDriver) Maintain(cx *future.Context) time.Duration {
	next := d.timerDriver.Maintain(cx)
	d.ioDriver.poll(cx)
	return next
}

// close closes the backend after the workers stopped: the ops still in
// flight (those of tasks the shutdown cancelled) are cancelled by the
// backend, and their completions are collected here, so that what they hold
// (an accepted socket, a group buffer) is released and their tasks' futures,
// already cancelled, are not woken.
func (d *ioDriver) close() {
	_ = d.b.Close()
	d.reap.Lock()
	defer d.reap.Unlock()
	var cx future.Context
	cx.Reset(waker.Waker{}, nil, nil, future.NoWorker)
	for d.collect(&cx, 0) > 0 { // after the drain, Wait returns ErrClosed with none
	}
}
