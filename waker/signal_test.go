package waker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/waker"
)

func TestSignalWakeBeforeWaitReturnsAtOnce(t *testing.T) {
	var s waker.Signal
	s.Wake()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.NoError(t, s.Wait(ctx), "a pending wake wins over a done ctx")
	assert.ErrorIs(t, s.Wait(ctx), context.Canceled, "the wake was consumed")
}

func TestSignalWakesCoalesce(t *testing.T) {
	var s waker.Signal
	for range 100 {
		s.Wake()
	}
	assert.True(t, s.TryWait())
	assert.False(t, s.TryWait(), "100 wakes leave one pending wakeup")
}

func TestSignalWaitReturnsCtxErrorAsIs(t *testing.T) {
	var s waker.Signal
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	err := s.Wait(ctx)
	assert.True(t, err == context.Canceled, "got %v", err)

	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err = s.Wait(ctx)
	assert.True(t, err == context.DeadlineExceeded, "got %v", err)
}

func TestSignalWakeAfterCtxErrorStaysPending(t *testing.T) {
	var s waker.Signal
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, s.Wait(ctx), context.Canceled)
	s.Wake()
	assert.True(t, s.TryWait())
}

func TestSignalWaitIsWokenByAnotherGoroutine(t *testing.T) {
	var s waker.Signal
	wk := waker.New(&s)
	done := make(chan error)
	go func() { done <- s.Wait(context.Background()) }()
	time.Sleep(5 * time.Millisecond) // usually blocked by now; either order must work
	wk.Wake()
	assert.NoError(t, <-done)
}

func TestSignalChanDeliversTheWake(t *testing.T) {
	var s waker.Signal
	s.Wake()
	select {
	case <-s.Chan():
	default:
		t.Fatal("no pending wake on Chan")
	}
	assert.False(t, s.TryWait(), "the receive consumed it")
}

// TestSignalFirstUseRaceAgreesOnOneChannel: several goroutines make the
// zero Signal's channel at once; run it with -race. All must get the same
// channel, so no wake lands in a channel that nobody waits on.
func TestSignalFirstUseRaceAgreesOnOneChannel(t *testing.T) {
	rounds := 200
	if testing.Short() {
		rounds = 50
	}
	for range rounds {
		var s waker.Signal
		var wg sync.WaitGroup
		chs := make([]<-chan struct{}, 4)
		for i := range chs {
			wg.Go(func() {
				chs[i] = s.Chan()
				s.Wake()
			})
		}
		wg.Wait()
		for _, ch := range chs {
			require.Equal(t, s.Chan(), ch)
		}
		require.NoError(t, s.Wait(context.Background()))
		assert.False(t, s.TryWait(), "four wakes coalesced into one")
	}
}
