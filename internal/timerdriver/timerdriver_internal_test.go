package timerdriver

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// TestTimeoutUntilNeverNegative: a deadline tick still ahead when now was
// read, but passed by the time the timeout is computed, is a zero timeout.
// A negative one would mean "no deadline" to the scheduler, which parked the
// worker without limit (the Wine CI failure of TestIntervalBehaviours, and
// a hang of one run in about 200 under -race here).
func TestTimeoutUntilNeverNegative(t *testing.T) {
	d := New(1, time.Millisecond)
	now := d.NowTick()
	time.Sleep(5 * time.Millisecond)
	assert.Equal(t, time.Duration(0), d.timeoutUntil(now+1, now), "a deadline that passed meanwhile")
	assert.Equal(t, time.Duration(0), d.timeoutUntil(now, now), "a due deadline")
	assert.Equal(t, time.Duration(-1), d.timeoutUntil(math.MaxUint64, now), "no deadline")
	later := d.NowTick() + 1000
	got := d.timeoutUntil(later, d.NowTick())
	assert.Greater(t, got, 900*time.Millisecond)
	assert.LessOrEqual(t, got, time.Second)
}

// TestPublishWakeAtSeesRacingArm plays, step by step, the interleaving that
// lost a sleep: the driver fires the only pending sleep and finds the
// shards empty; before it publishes that, a sleep is armed, loads the old
// wakeAt (the fired sleep's deadline, sooner than its own) and does not
// notify. The driver's second look must find the new sleep, or the worker
// would park without a deadline.
func TestPublishWakeAtSeesRacingArm(t *testing.T) {
	d := New(1, time.Millisecond)
	var notified atomic.Int32
	d.notify = func() { notified.Add(1) }
	var sig waker.Signal
	wk := waker.New(&sig)
	cx := future.NewContext(wk)

	now := d.NowTick()
	var first, second SleepState
	require.False(t, d.Arm(&first, now, wk))
	require.EqualValues(t, 1, notified.Load(), "the first sleep is sooner than anything seen")

	// The driver's scan fires the first sleep and sees nothing else...
	earliest := d.fireDue(cx, now)
	require.Equal(t, uint64(math.MaxUint64), earliest)
	require.True(t, first.fired)
	// ...a sleep is armed before the driver publishes what it saw...
	require.False(t, d.Arm(&second, now+50, wk))
	require.EqualValues(t, 1, notified.Load(), "the stale wakeAt made the arm skip its notify")
	// ...and the driver's publish must still wake for it.
	assert.Equal(t, now+50, d.publishWakeAt(earliest))
	assert.Equal(t, now+50, d.wakeAt.Load())
	d.Disarm(&second)
}
