package channels_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// pollWaiting polls f once with a Context that keeps a WaitSlot, as a
// task's poll does, expects it pending, and returns the wait it recorded;
// it then cancels f.
func pollWaiting[T any](t *testing.T, f future.Future[T]) string {
	t.Helper()
	var slot future.WaitSlot
	cx := future.NewContext(waker.Noop())
	cx.SetWaitSlot(&slot, 3)
	_, ok := f.Poll(cx)
	require.False(t, ok, "the future completed: nothing to wait for")
	w := slot.Load()
	require.Equal(t, uint8(3), w.Seq(), "recorded by this poll")
	future.Cancel(f)
	return w.String()
}

// TestPendingRecordsWait: every waiting future of the package records
// what it waits on when it returns not-ready, for a task dump.
func TestPendingRecordsWait(t *testing.T) {
	b := channels.NewBounded[int](1)
	rf := b.Recv()
	recv := pollWaiting[future.Result[int]](t, rf)
	require.Regexp(t, `^Bounded.Recv \d+$`, recv, "which channel")
	require.NoError(t, b.TrySend(1))
	sf := b.Send(2)
	send := pollWaiting[error](t, sf)
	require.Equal(t, "Bounded.Send"+strings.TrimPrefix(recv, "Bounded.Recv"), send, "the same channel, the same number")
	other := channels.NewBounded[int](1).Recv()
	require.NotEqual(t, recv, pollWaiting[future.Result[int]](t, other), "another channel, another number")

	u := channels.NewUnbounded[int]()
	uf := u.Recv()
	require.Regexp(t, `^Unbounded\.Recv \d+$`, pollWaiting[future.Result[int]](t, uf))

	tx, rx := channels.NewOneshot[int]()
	of := rx.Recv()
	require.Regexp(t, `^Oneshot\.Recv \d+$`, pollWaiting[future.Result[int]](t, of))
	_ = tx

	bc := channels.NewBroadcast[int](4)
	bf := bc.Subscribe().Recv()
	require.Regexp(t, `^Broadcast\.Recv \d+$`, pollWaiting[future.Result[int]](t, bf))

	w := channels.NewWatch(0)
	r := w.Subscribe()
	cf := r.Changed()
	watched := pollWaiting[error](t, cf)
	require.Regexp(t, `^Watch\.Changed \d+$`, watched)
	require.Equal(t, watched, pollWaiting[error](t, r.Changed()), "one channel, one number at every wait")
}
