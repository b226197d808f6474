package timerwheel_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/blitz-go/blitz/timerwheel"
)

// TestTimebaseRounding checks the conversions that make "never early, at
// most one tick late" hold for a clock-driven wheel: a deadline's tick
// starts at or after the deadline and less than one tick after it, and the
// tick of the present contains it.
func TestTimebaseRounding(t *testing.T) {
	origin := time.Now()
	r := rand.New(rand.NewPCG(3, 4))
	for _, tick := range []time.Duration{time.Nanosecond, time.Microsecond, time.Millisecond, 7 * time.Millisecond, time.Second} {
		tb := timerwheel.NewTimebase(origin, tick)
		if got := tb.Tick(); got != tick {
			t.Fatalf("Tick() = %v, want %v", got, tick)
		}
		for range 10_000 {
			at := origin.Add(time.Duration(r.Int64N(int64(1000 * time.Hour))))
			dl := tb.DeadlineTick(at)
			if tb.Time(dl).Before(at) {
				t.Error("deadline tick starts before the deadline")
			}
			if got := tb.Time(dl).Sub(at); got >= tick {
				t.Errorf("deadline tick starts a tick or more late: tb.Time(dl).Sub(at) = %v, want < %v", got, tick)
			}
			now := tb.TickAt(at)
			if tb.Time(now).After(at) {
				t.Error("present's tick starts after the present")
			}
			if got := at.Sub(tb.Time(now)); got >= tick {
				t.Errorf("at.Sub(tb.Time(now)) = %v, want < %v", got, tick)
			}
			if got := dl - now; got > 1 {
				t.Errorf("deadline tick %d is %d ticks after the present's tick %d, want at most 1", dl, got, now)
			}
			d := time.Duration(r.Int64N(int64(time.Hour)))
			if got := time.Duration(tb.Ticks(d)) * tick; got < d {
				t.Errorf("time.Duration(tb.Ticks(d))*tick = %v, want >= %v", got, d)
			}
		}
	}
}

func TestTimebaseEdges(t *testing.T) {
	origin := time.Now()
	tb := timerwheel.NewTimebase(origin, 0)
	equal(t, tb.Tick(), timerwheel.DefaultTick)
	equal(t, tb.Origin(), origin)
	equal(t, tb.TickAt(origin.Add(-time.Hour)), uint64(0), "before the origin")
	equal(t, tb.DeadlineTick(origin.Add(-time.Hour)), uint64(0))
	equal(t, tb.Ticks(-time.Second), uint64(0))
	equal(t, tb.Ticks(0), uint64(0))
	equal(t, tb.Ticks(1), uint64(1))
	equal(t, tb.Ticks(time.Millisecond), uint64(1))
	equal(t, tb.Ticks(time.Millisecond+1), uint64(2))
	equal(t, tb.Time(1<<63), origin.Add(1<<63-1), "Time saturates")
	var zero timerwheel.Timebase
	equal(t, zero.Tick(), timerwheel.DefaultTick)
}
