package blitz

import (
	"math"
	"sync"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/internal/timerdriver"
	"github.com/blitz-go/blitz/waker"
)

// SleepFuture is the future of Sleep and SleepUntil: it completes once its
// deadline has passed, never before. A deadline already passed when it is
// first polled completes it at that poll, without a timer. Polled by a
// runtime's task (or its BlockOn), it waits in that runtime's timer wheel;
// polled with a Context of no runtime (future.Block), it falls back to a
// time.AfterFunc timer. Cancel removes it from the wheel at once.
//
// A deadline math.MaxInt64 nanoseconds (about 292 years) or more after the
// runtime started never comes: such a sleep stays pending for ever and takes
// no place in the wheel. Sleep(math.MaxInt64) is one.
//
// The zero SleepFuture has a deadline in the past. A SleepFuture can be
// embedded in a hand-written future and reused with Reset or ResetAfter,
// which allocate nothing. It is owned by the task that polls it and
// must not be copied after its first poll.
type SleepFuture struct {
	// deadline is when the sleep ends.
	deadline time.Time
	// st is what the wheel refers to; guarded by its shard's mutex.
	st timerdriver.SleepState
	// drv is the driver whose wheel st is armed in, nil before the first
	// poll in a runtime.
	drv *timerdriver.Driver
	// fb is the fallback timer outside a runtime, made at the first such
	// poll.
	fb *fallbackTimer
	// armed is set while st may be in the wheel (from an arm that inserted
	// it until a disarm), so that a sleep never armed costs no lock to
	// cancel or reset.
	armed bool
	// done is set when the sleep completed; cancelled by Cancel.
	done, cancelled bool
}

// Sleep returns a future that completes d after now: at its first poll for
// d <= 0, never for a d too long for the clock to count (now + d past the
// largest time.Duration since the process started, as with math.MaxInt64).
// It is a *SleepFuture; declare a SleepFuture and call ResetAfter instead to
// embed one in a hand-written future or reuse it.
func Sleep(d time.Duration) future.Future[struct{}] { return &SleepFuture{deadline: after(d)} }

// clockBase anchors after: a time.Time with a monotonic reading.
var clockBase = time.Now()

// forever is the deadline of a sleep too long for the clock to count: the
// latest instant a time.Time holds. It lies more than math.MaxInt64
// nanoseconds after any runtime's start, so the timer driver sees it as never
// (timerdriver.Driver.Never).
var forever = time.Unix(math.MaxInt64-unixToInternal, 999_999_999)

// unixToInternal is the seconds from year 1 to 1970, the offset time.Unix
// adds: forever's seconds then reach math.MaxInt64, time.Time's largest.
const unixToInternal = (1969*365 + 1969/4 - 1969/100 + 1969/400) * 24 * 60 * 60

// after returns now + d, saturating at forever when the sum would overflow
// the time.Duration it is counted in. It reads only the monotonic clock
// (time.Since), half the cost of time.Now, which reads the wall clock as
// well; the result carries a monotonic reading, which is all that deadlines
// are compared by, unless it lies past about year 2157, where time.Time
// drops the monotonic reading. Such a deadline is compared by the wall
// clock, so it is counted from the wall clock too: from the monotonic one,
// the drift between the two clocks could put it a little before now + d.
func after(d time.Duration) time.Time {
	now := time.Since(clockBase)
	if now < 0 {
		// A clock before the process started: a testing/synctest bubble
		// (a simulation), whose clock starts in 2000 and has no monotonic
		// reading to measure from clockBase.
		return time.Now().Add(d)
	}
	if d > math.MaxInt64-now {
		return forever
	}
	t := clockBase.Add(now + d)
	if t == t.Round(0) { // no monotonic reading (Round(0) strips one)
		return time.Now().Add(d)
	}
	return t
}

// SleepUntil returns a future that completes once t has passed. It is a
// *SleepFuture.
func SleepUntil(t time.Time) future.Future[struct{}] { return &SleepFuture{deadline: t} }

// Deadline returns when the sleep ends: for a Sleep or ResetAfter whose
// duration the clock cannot count, the latest instant a time.Time holds.
func (s *SleepFuture) Deadline() time.Time { return s.deadline }

// Reset cancels the sleep if it is pending and makes it end at t instead; it
// can then be polled again, whether it had completed, been cancelled, or
// neither, by a task of any runtime.
func (s *SleepFuture) Reset(t time.Time) {
	s.Cancel()
	// Out of any wheel now: the next poll takes the timers of the runtime
	// polling it, which may be another (a sleep kept in a pool). A sleep
	// that fell back to a timer outside any runtime keeps it.
	s.drv = nil
	s.deadline, s.done, s.cancelled = t, false, false
}

// ResetAfter is Reset(now + d), reading only the monotonic clock; d <= 0
// makes the sleep ready at its next poll, and a d too long for the clock to
// count makes it never end, as with Sleep.
func (s *SleepFuture) ResetAfter(d time.Duration) { s.Reset(after(d)) }

// Poll completes once the deadline has passed; until then it waits in the
// timer wheel of the runtime polling cx with cx's Waker. A deadline already
// passed at the first poll (after a Reset, the first poll since) completes
// it at once. Completing consumes a unit of the task's budget; with none
// left, Poll yields instead (see the future package, "The cooperative
// budget"); a sleep that already completed returns at once again. Polling
// after Cancel panics with future.ErrPolledAfterCancel.
func (s *SleepFuture) Poll(cx *future.Context) (struct{}, bool) {
	switch {
	case s.cancelled:
		panic(future.ErrPolledAfterCancel)
	case s.done:
		return struct{}{}, true
	}
	if !cx.Proceed() {
		return struct{}{}, false
	}
	_, ok := s.poll(cx)
	if ok {
		cx.Spend()
	} else {
		cx.Waiting(waitSleep, future.WaitDeadlineOf(s.deadline)) // for a task dump
	}
	return struct{}{}, ok
}

// waitSleep is what a task waiting in a sleep waits on, for a task dump
// (future.Context.Waiting). A Timeout's own timer records nothing: the
// inner future's wait is the one to show.
var waitSleep = future.NewWaitKind("Sleep", future.WaitDeadline)

// poll is Poll without the budget, for a sleep not yet done: Poll's, and a
// Timeout's look at its deadline, which must fire even when the inner future
// spends the whole budget in every poll.
func (s *SleepFuture) poll(cx *future.Context) (struct{}, bool) {
	if s.drv == nil && s.fb == nil {
		if rt, ok := cx.Services().(*Runtime); ok && !rt.timers.Closed() {
			s.drv = rt.timers
		} else {
			s.fb = &fallbackTimer{}
		}
	}
	if s.drv != nil {
		dl := s.drv.DeadlineTick(s.deadline)
		switch {
		case dl <= s.drv.LastNow():
			// Already past at the driver's last look: no clock read needed.
			s.complete()
			return struct{}{}, true
		case dl >= s.drv.Never():
			// Never comes: nothing to arm, and nothing will wake it.
			return struct{}{}, false
		case !s.armed && time.Since(s.deadline) >= 0:
			// Passed since, or within the current tick: a sleep of zero
			// (or one polled late) is ready now, not a tick later, and
			// takes no wheel entry. A sleep already armed waits for the
			// driver instead, saving a clock read on each poll.
			s.complete()
			return struct{}{}, true
		}
		s.armed = true
		if s.drv.Arm(&s.st, dl, cx.Waker()) {
			s.complete()
			return struct{}{}, true
		}
		return struct{}{}, false
	}
	if time.Since(s.deadline) >= 0 || s.fb.arm(s.deadline, cx.Waker()) {
		s.complete()
		return struct{}{}, true
	}
	return struct{}{}, false
}

// complete marks the sleep done and forgets its registration.
func (s *SleepFuture) complete() {
	s.done = true
	s.disarm()
}

// disarm takes the sleep out of its wheel or stops its fallback timer.
func (s *SleepFuture) disarm() {
	if s.armed {
		s.armed = false
		s.drv.Disarm(&s.st)
	}
	if s.fb != nil {
		s.fb.stop()
	}
}

// Cancel removes the sleep from the timer wheel (or stops its fallback
// timer) at once; it makes SleepFuture a future.Canceler. Idempotent.
func (s *SleepFuture) Cancel() {
	if s.cancelled {
		return
	}
	s.cancelled = true
	s.disarm()
}

// fallbackTimer drives a sleep polled outside any runtime with a
// time.AfterFunc timer.
type fallbackTimer struct {
	mu sync.Mutex
	// t is the timer, made at the first arm. Guarded by mu.
	t *time.Timer
	// wk is the Waker to wake; fired says the timer ran. Guarded by mu.
	wk    waker.Waker
	fired bool
}

// arm starts the timer for deadline if it is not running and records wk;
// it reports whether the timer already fired.
func (f *fallbackTimer) arm(deadline time.Time, wk waker.Waker) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fired {
		return true
	}
	f.wk = wk
	if f.t == nil {
		f.t = time.AfterFunc(time.Until(deadline), f.fire)
	}
	return false
}

// fire runs on the timer's goroutine.
func (f *fallbackTimer) fire() {
	f.mu.Lock()
	f.fired = true
	wk := f.wk
	f.wk = waker.Waker{}
	f.mu.Unlock()
	wk.Wake()
}

// stop stops the timer and resets the state for a later arm.
func (f *fallbackTimer) stop() {
	f.mu.Lock()
	if f.t != nil {
		f.t.Stop()
		f.t = nil
	}
	f.wk, f.fired = waker.Waker{}, false
	f.mu.Unlock()
}
