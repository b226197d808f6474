package blitz

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/blitz-go/blitz/future"
)

// MissedTickBehavior says what an Interval does when it is polled late,
// after one or more ticks should already have happened.
type MissedTickBehavior uint8

const (
	// Burst delivers every missed tick, back to back, until it has caught
	// up; the schedule stays start + k*period.
	Burst MissedTickBehavior = iota
	// Delay restarts the schedule from the late tick: the next tick is one
	// period after the moment the late one was delivered.
	Delay
	// Skip drops the missed ticks: the next tick is the first one of the
	// original schedule (start + k*period) that is still in the future.
	Skip
)

// String names the behaviour.
func (b MissedTickBehavior) String() string {
	switch b {
	case Burst:
		return "burst"
	case Delay:
		return "delay"
	case Skip:
		return "skip"
	}
	return fmt.Sprintf("MissedTickBehavior(%d)", uint8(b))
}

// Interval ticks every period, as Tokio's interval: each time it completes
// a poll it delivers one tick (the time the tick was scheduled for) and is
// ready to be polled for the next. The first tick is delivered at the first
// poll when its time has come (at once for NewInterval). A tick due about
// 292 years (math.MaxInt64 nanoseconds) or more after the runtime started
// never comes, like a Sleep that long. It is owned by the task that polls it.
type Interval struct {
	period time.Duration
	missed MissedTickBehavior
	// sleep waits for the next tick; its deadline is that tick's time.
	sleep SleepFuture
}

// NewInterval returns an Interval whose first tick is now, delivered at its
// first poll, and whose next ticks follow every period, with missed as its
// behaviour when polled late. A period <= 0 or an unknown behaviour returns
// an error wrapping ErrConfig.
func NewInterval(period time.Duration, missed MissedTickBehavior) (*Interval, error) {
	return NewIntervalAt(time.Now(), period, missed)
}

// NewIntervalAt is NewInterval with its first tick at start: delivered at
// the first poll if start has passed, else once it comes.
func NewIntervalAt(start time.Time, period time.Duration, missed MissedTickBehavior) (*Interval, error) {
	if period <= 0 {
		return nil, fmt.Errorf("%w: interval period %v, want > 0", ErrConfig, period)
	}
	if missed > Skip {
		return nil, fmt.Errorf("%w: %v", ErrConfig, missed)
	}
	return &Interval{period: period, missed: missed, sleep: SleepFuture{deadline: start}}, nil
}

// NewTicker returns an Interval shaped as Go's time.NewTicker: its first
// tick comes one period from now, and a tick missed by a task polling late
// is skipped (Skip), as a Ticker drops ticks for a slow receiver. Like
// time.NewTicker, it panics if period <= 0 (with an error wrapping
// ErrConfig). Cancel it when done with it, as a Ticker is stopped.
func NewTicker(period time.Duration) *Interval {
	iv, err := NewIntervalAt(time.Now().Add(period), period, Skip)
	if err != nil {
		panic(err)
	}
	return iv
}

// Period returns the interval's period.
func (iv *Interval) Period() time.Duration { return iv.period }

// Poll completes with the scheduled time of the next tick once it has come,
// and then waits for the one after. Polling after Cancel panics with
// future.ErrPolledAfterCancel.
func (iv *Interval) Poll(cx *future.Context) (time.Time, bool) {
	if _, ok := iv.sleep.Poll(cx); !ok {
		return time.Time{}, false
	}
	tick := iv.sleep.deadline
	iv.sleep.Reset(iv.nextAfter(tick, time.Now()))
	return tick, true
}

// nextAfter returns the tick after tick, delivered at now. No arithmetic
// here overflows: time.Time.Add saturates, and Skip's remainder is counted
// exactly however far apart tick and now are (see lateRem).
func (iv *Interval) nextAfter(tick, now time.Time) time.Time {
	next := tick.Add(iv.period)
	if !now.After(next) {
		return next // on time: every behaviour agrees
	}
	switch iv.missed {
	case Delay:
		return now.Add(iv.period)
	case Skip:
		// tick + k*period for the first k that puts it after now: now
		// minus what it is late by into its current period, plus a period.
		return now.Add(iv.period - lateRem(now, tick, iv.period))
	default:
		return next
	}
}

// lateRem returns (now - tick) mod period, for now after tick. When they
// are more than a time.Duration apart (now.Sub saturates: a schedule that
// began some 292 years ago or more), it counts the nanoseconds between them
// in 128 bits.
func lateRem(now, tick time.Time, period time.Duration) time.Duration {
	if late := now.Sub(tick); late < math.MaxInt64 {
		return late % period
	}
	// Unix seconds fit an int64 for every time.Time that time.Unix or
	// time.Date makes, so their difference fits a uint64.
	sec := uint64(now.Unix()) - uint64(tick.Unix())
	nsec := int64(now.Nanosecond()) - int64(tick.Nanosecond())
	if nsec < 0 {
		sec--
		nsec += int64(time.Second)
	}
	hi, lo := bits.Mul64(sec, uint64(time.Second))
	lo, carry := bits.Add64(lo, uint64(nsec), 0)
	return time.Duration(bits.Rem64(hi+carry, lo, uint64(period)))
}

// Cancel removes the pending tick's timer from the wheel; it makes Interval
// a future.Canceler. Idempotent.
func (iv *Interval) Cancel() { iv.sleep.Cancel() }
