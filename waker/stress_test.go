package waker_test

// Stress tests of the blocking tier: goroutines waiting in one List with a
// Signal each, woken by other goroutines, under -race. A lost wakeup shows
// as a waiter whose safety-net deadline expires while it is still linked.

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/waker"
)

// lostWakeupTimeout is the safety net: a waiter still linked after this long
// was never woken.
const lostWakeupTimeout = 20 * time.Second

// TestWakeAllWakesEveryRegisteredWaiter runs rounds in which a set of
// goroutines register in one event, then several goroutines call notifyAll
// at once while some waiters are being cancelled and stray wakes hit their
// reused Signals. Every waiter registered before the notifyAll calls must
// return, each either woken or removed by its own cancel, and the wakes
// counted by notifyAll must equal the waiters that report being woken.
func TestWakeAllWakesEveryRegisteredWaiter(t *testing.T) {
	const waiters, wakers = 40, 3 // more than WakeListCap: both wake paths of notifyAll
	rounds := 2000
	if testing.Short() {
		rounds = 200
	}
	var e event
	sigs := make([]waker.Signal, waiters) // reused across rounds
	r := rand.New(rand.NewPCG(7, 11))
	var totalWoken, totalRemoved int64
	defer func() { t.Logf("%d rounds: %d woken, %d removed by cancel", rounds, totalWoken, totalRemoved) }()
	for round := range rounds {
		var registered, finished sync.WaitGroup
		var woken, removed, lost, notified atomic.Int64
		ws := make([]waker.Waiter[struct{}], waiters)
		cancels := make([]context.CancelFunc, waiters)
		registered.Add(waiters)
		for i := range waiters {
			ctx, cancel := context.WithTimeout(context.Background(), lostWakeupTimeout)
			cancels[i] = cancel
			finished.Go(func() {
				defer cancel()
				e.mu.Lock()
				e.waiters.PushBack(&ws[i], waker.New(&sigs[i]))
				e.mu.Unlock()
				registered.Done()
				ok, err := e.block(ctx, &ws[i], &sigs[i])
				switch {
				case ok:
					woken.Add(1)
				case err == context.Canceled:
					removed.Add(1)
				default:
					lost.Add(1)
				}
			})
		}
		registered.Wait()
		var wakersDone sync.WaitGroup
		for range wakers {
			wakersDone.Go(func() { notified.Add(int64(e.notifyAll())) })
		}
		// Cancel a few waiters and send stray wakes while notifyAll runs.
		for range 3 {
			cancels[r.IntN(waiters)]()
			sigs[r.IntN(waiters)].Wake()
		}
		wakersDone.Wait()
		finished.Wait()
		require.Zero(t, lost.Load(), "round %d: lost wakeups", round)
		require.Equal(t, int64(waiters), woken.Load()+removed.Load(), "round %d", round)
		require.Equal(t, notified.Load(), woken.Load(), "round %d: a wake per woken waiter", round)
		totalWoken += woken.Load()
		totalRemoved += removed.Load()
		e.mu.Lock()
		require.True(t, e.waiters.IsEmpty(), "round %d", round)
		e.mu.Unlock()
	}
}

// TestNotifyOneHandsEachNotificationToOneWaiter runs free: waiters wait
// again and again (consuming a stored permit when there is one) while
// notifiers call notifyOne a fixed number of times. Every notification is
// consumed exactly once, so the waiters finish exactly the notifications
// sent and nobody is left waiting: a lost wakeup would hang a waiter until
// its safety net.
func TestNotifyOneHandsEachNotificationToOneWaiter(t *testing.T) {
	const waiters, notifiers = 8, 4
	perNotifier := 20000
	if testing.Short() {
		perNotifier = 2000
	}
	total := int64(notifiers * perNotifier)
	var e event
	var consumed atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), lostWakeupTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for range waiters {
		wg.Go(func() {
			var sig waker.Signal
			var w waker.Waiter[struct{}]
			for consumed.Load() < total {
				ok, err := e.wait(ctx, &w, &sig, true)
				if err != nil {
					return // the safety net, or the end below
				}
				if ok {
					consumed.Add(1)
				}
			}
		})
	}
	for range notifiers {
		wg.Go(func() {
			for range perNotifier {
				e.notifyOne()
			}
		})
	}
	// Wait until every notification is consumed, then release the
	// waiters that are waiting for more.
	for consumed.Load() < total && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, ctx.Err(), "consumed %d of %d notifications", consumed.Load(), total)
	cancel()
	wg.Wait()
	assert.Equal(t, total, consumed.Load())
	e.mu.Lock()
	assert.Zero(t, e.permits, "no permit left over")
	e.mu.Unlock()
}
