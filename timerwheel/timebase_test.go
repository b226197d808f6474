package timerwheel_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		require.Equal(t, tick, tb.Tick())
		for range 10_000 {
			at := origin.Add(time.Duration(r.Int64N(int64(1000 * time.Hour))))
			dl := tb.DeadlineTick(at)
			assert.False(t, tb.Time(dl).Before(at), "deadline tick starts before the deadline")
			assert.Less(t, tb.Time(dl).Sub(at), tick, "deadline tick starts a tick or more late")
			now := tb.TickAt(at)
			assert.False(t, tb.Time(now).After(at), "present's tick starts after the present")
			assert.Less(t, at.Sub(tb.Time(now)), tick)
			assert.LessOrEqual(t, dl-now, uint64(1))
			d := time.Duration(r.Int64N(int64(time.Hour)))
			assert.GreaterOrEqual(t, time.Duration(tb.Ticks(d))*tick, d)
		}
	}
}

func TestTimebaseEdges(t *testing.T) {
	origin := time.Now()
	tb := timerwheel.NewTimebase(origin, 0)
	assert.Equal(t, timerwheel.DefaultTick, tb.Tick())
	assert.Equal(t, origin, tb.Origin())
	assert.Equal(t, uint64(0), tb.TickAt(origin.Add(-time.Hour)), "before the origin")
	assert.Equal(t, uint64(0), tb.DeadlineTick(origin.Add(-time.Hour)))
	assert.Equal(t, uint64(0), tb.Ticks(-time.Second))
	assert.Equal(t, uint64(0), tb.Ticks(0))
	assert.Equal(t, uint64(1), tb.Ticks(1))
	assert.Equal(t, uint64(1), tb.Ticks(time.Millisecond))
	assert.Equal(t, uint64(2), tb.Ticks(time.Millisecond+1))
	assert.Equal(t, origin.Add(1<<63-1), tb.Time(1<<63), "Time saturates")
	var zero timerwheel.Timebase
	assert.Equal(t, timerwheel.DefaultTick, zero.Tick())
}
