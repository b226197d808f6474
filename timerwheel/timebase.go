package timerwheel

import (
	"math"
	"time"
)

// DefaultTick is the tick length NewTimebase and NewService use when given
// none.
const DefaultTick = time.Millisecond

// Timebase converts between wall-clock time and the ticks a Wheel counts:
// tick k starts at Origin + k*Tick. Deadlines round up (a timer never fires
// early) and the present rounds down (the wheel never runs ahead of the
// clock), so a timer that Advance fires as soon as the clock reaches its
// deadline tick fires less than one tick after its deadline: see "Time and
// ticks" in the package doc.
//
// Build one with NewTimebase; the zero Timebase has the zero time as its
// origin, which time.Time.Sub cannot reach from today. A Timebase is a value
// and safe for concurrent use.
type Timebase struct {
	origin time.Time
	tick   time.Duration
}

// NewTimebase returns a Timebase whose tick 0 starts at origin and whose ticks
// last tick; a tick of zero or less means DefaultTick. Pass time.Now() as the
// origin so that conversions use the monotonic clock.
// Anyone may call it.
func NewTimebase(origin time.Time, tick time.Duration) Timebase {
	if tick <= 0 {
		tick = DefaultTick
	}
	return Timebase{origin: origin, tick: tick}
}

// Origin returns the start of tick 0.
// Safe for concurrent use.
func (tb Timebase) Origin() time.Time { return tb.origin }

// Tick returns the length of a tick.
// Safe for concurrent use.
func (tb Timebase) Tick() time.Duration {
	if tb.tick <= 0 {
		return DefaultTick
	}
	return tb.tick
}

// TickAt returns the tick that contains t (rounding down): the tick to pass
// to Advance when the clock reads t. Times before the origin map to 0.
// Safe for concurrent use.
func (tb Timebase) TickAt(t time.Time) uint64 {
	return tb.floorTicks(t.Sub(tb.origin))
}

// DeadlineTick returns the first tick that starts at or after t (rounding
// up): the tick to Insert a timer for that must not fire before t. Times
// before the origin map to 0.
// Safe for concurrent use.
func (tb Timebase) DeadlineTick(t time.Time) uint64 {
	return tb.ceilTicks(t.Sub(tb.origin))
}

// Ticks returns d in ticks, rounded up; zero or less is 0. Now()+Ticks(d) is
// a deadline that never fires before d has passed.
// Safe for concurrent use.
func (tb Timebase) Ticks(d time.Duration) uint64 {
	return tb.ceilTicks(d)
}

// Time returns the start of tick k, saturating at the largest time.Duration
// after the origin.
// Safe for concurrent use.
func (tb Timebase) Time(k uint64) time.Time {
	return tb.origin.Add(tb.sinceOrigin(k))
}

// floorTicks returns the whole ticks in d; 0 if d is negative.
// Safe for concurrent use.
func (tb Timebase) floorTicks(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64(d / tb.Tick())
}

// ceilTicks returns d in ticks rounded up; 0 if d is zero or negative.
// Safe for concurrent use.
func (tb Timebase) ceilTicks(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	tick := tb.Tick()
	k := uint64(d / tick)
	if d%tick != 0 {
		k++
	}
	return k
}

// sinceOrigin returns the offset of the start of tick k from the origin,
// saturating at math.MaxInt64 nanoseconds.
// Safe for concurrent use.
func (tb Timebase) sinceOrigin(k uint64) time.Duration {
	tick := uint64(tb.Tick())
	if k > uint64(math.MaxInt64)/tick {
		return math.MaxInt64
	}
	return time.Duration(k * tick)
}

// deadlineAfter returns the deadline tick of a timer of duration d started
// when elapsed had passed since the origin, saturating instead of
// overflowing.
// Safe for concurrent use.
func (tb Timebase) deadlineAfter(elapsed, d time.Duration) uint64 {
	if d > 0 && elapsed > math.MaxInt64-d {
		return tb.ceilTicks(math.MaxInt64)
	}
	return tb.ceilTicks(elapsed + d)
}
