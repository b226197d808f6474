package blitz

import (
	"math"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/internal/timerdriver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkAfter checks after(d) against the clock read just before the call:
// for d >= 0 the deadline is never sooner than that reading plus d (so it
// is never before now), for d < 0 it is not in the future; and the timer
// driver's tick for it never lies before the current tick.
func checkAfter(t *testing.T, drv *timerdriver.Driver, d time.Duration) {
	t.Helper()
	before := time.Now()
	up := ClockUptime() // before after(d): its own reading is this one or later
	nowTick := drv.NowTick()
	got := after(d)
	if d < 0 {
		require.False(t, got.After(time.Now()), "after(%d) = %v is in the future", d, got)
		return
	}
	require.False(t, got.Before(before), "after(%d) = %v is before now (%v)", d, got, before)
	require.GreaterOrEqual(t, got.Sub(before), d, "after(%d) = %v is sooner than now + d", d, got)
	dl := drv.Base().DeadlineTick(got)
	require.GreaterOrEqual(t, dl, nowTick, "after(%d): deadline tick %d before the current tick", d, dl)
	if d > math.MaxInt64-up {
		// Too far for the clock to count (at the uptime read before the
		// call, and so at after's own reading, which is no sooner): the
		// driver must see it as never. Reading the uptime after the call
		// instead counted a d at the limit as too far once the clock had
		// moved past it meanwhile (under Wine, whose clock moves in steps).
		require.GreaterOrEqual(t, dl, drv.Never(), "after(%d): tick %d is not never", d, dl)
	}
}

// afterCases are durations around the limits, with the process's uptime
// (the clock's reading) taken into account.
func afterCases() []time.Duration {
	up := ClockUptime()
	ds := []time.Duration{
		0, 1, -1, time.Millisecond, time.Hour, 1 << 62, -1 << 62,
		math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, math.MinInt64 + 1,
		math.MaxInt64 / 2, math.MaxInt64/2 + 1,
	}
	for _, k := range []time.Duration{-time.Second, -time.Millisecond, -1, 0, 1, time.Millisecond, time.Second} {
		ds = append(ds, math.MaxInt64-up+k)
	}
	return ds
}

// TestAfterNeverBeforeNow is the table of after's arithmetic at the limits.
func TestAfterNeverBeforeNow(t *testing.T) {
	drv := timerdriver.New(1, time.Millisecond)
	for _, d := range afterCases() {
		checkAfter(t, drv, d)
	}
}

// FuzzAfter checks after(d) for any d.
func FuzzAfter(f *testing.F) {
	for _, d := range afterCases() {
		f.Add(int64(d))
	}
	drv := timerdriver.New(1, time.Millisecond)
	f.Fuzz(func(t *testing.T, d int64) { checkAfter(t, drv, time.Duration(d)) })
}

// TestDeadlineTickFarFuture: the driver's tick for a far-future time does not
// wrap to a near tick; anything past what a time.Duration counts from the
// driver's origin is its never tick, which no wheel holds.
func TestDeadlineTickFarFuture(t *testing.T) {
	for _, tick := range []time.Duration{time.Nanosecond, time.Microsecond, time.Millisecond, 7 * time.Millisecond, time.Hour} {
		drv := timerdriver.New(1, tick)
		now := drv.NowTick()
		year := 365 * 24 * time.Hour
		for name, at := range map[string]time.Time{
			"year 9999":       time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC),
			"Unix(1<<62)":     time.Unix(1<<62, 0),
			"forever":         forever,
			"now+MaxInt64":    time.Now().Add(math.MaxInt64),
			"origin+MaxInt64": drv.Base().Origin().Add(math.MaxInt64),
		} {
			assert.GreaterOrEqual(t, drv.Base().DeadlineTick(at), drv.Never(), "tick %v: %s", tick, name)
		}
		// 200 years ahead is far, but the wheel can count it.
		far := drv.Base().DeadlineTick(time.Now().Add(200 * year))
		assert.Greater(t, far, now+drv.Base().Ticks(199*year), "tick %v", tick)
		assert.Less(t, far, drv.Never(), "tick %v", tick)
	}
}

// TestSleepNeverArmsNothing: a sleep that never ends does not arm the wheel,
// and one ready at its first poll neither; both leave the SleepFuture
// without a wheel entry.
func TestSleepNeverArmsNothing(t *testing.T) {
	rt, err := New(Config{Workers: 1})
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Shutdown(t.Context())) }()
	var s SleepFuture
	_, err = BlockOn(t.Context(), rt.Handle(), future.PollFn(func(cx *future.Context) (struct{}, bool) {
		for _, d := range []time.Duration{math.MaxInt64, 0, -1} {
			s.ResetAfter(d)
			_, ready := s.Poll(cx)
			assert.Equal(t, d <= 0, ready, "ResetAfter(%d)", d)
			assert.False(t, s.armed, "ResetAfter(%d) armed the wheel", d)
			assert.False(t, s.st.InWheel(), "ResetAfter(%d) is in a wheel", d)
			assert.Zero(t, rt.timers.Pending())
		}
		return struct{}{}, true
	}))
	require.NoError(t, err)
	s.Cancel()
}
