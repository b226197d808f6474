package blitz_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// busyShare returns, per worker, the share of the time between two
// readings of rt's metrics around wait that the worker was busy, and
// checks the invariants of every reading: busy and parked time only grow,
// and they grow together by the time between the readings (give or take
// the readings' own cost).
func busyShare(t *testing.T, rt *blitz.Runtime, wait func()) []float64 {
	t.Helper()
	before := rt.Metrics()
	wait()
	after := rt.Metrics()
	shares := make([]float64, len(after.Workers))
	for i, w := range after.Workers {
		b, p := w.BusyTime-before.Workers[i].BusyTime, w.ParkedTime-before.Workers[i].ParkedTime
		require.GreaterOrEqual(t, b, time.Duration(0), "worker %d: busy time went down", i)
		require.GreaterOrEqual(t, p, time.Duration(0), "worker %d: parked time went down", i)
		require.LessOrEqual(t, b+p, after.Uptime-before.Uptime+10*time.Millisecond, "worker %d: busy and parked grew by more than the time", i)
		shares[i] = float64(b) / float64(b+p)
	}
	return shares
}

// TestBusyTimeOfAnIdleRuntime: workers with nothing to do are parked, the
// park in progress included, so their busy share is near zero (it was
// 100 %: the park in progress was counted only when it ended).
func TestBusyTimeOfAnIdleRuntime(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	time.Sleep(20 * time.Millisecond) // the workers start and park
	shares := busyShare(t, rt, func() { time.Sleep(300 * time.Millisecond) })
	t.Logf("idle: busy shares %.3f", shares)
	for i, s := range shares {
		assert.Less(t, s, 0.2, "worker %d", i)
	}
}

// TestBusyTimeOfASaturatedRuntime: tasks that never stop yielding keep
// every worker busy, whatever else the machine runs (a worker descheduled
// by the OS is still not parked).
func TestBusyTimeOfASaturatedRuntime(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		h := blitz.SpawnOn(rt.Handle(), future.PollFn(func(cx *future.Context) (int, bool) {
			if ctx.Err() != nil {
				return 0, true
			}
			cx.Waker().Wake() // runnable again at once: a spinning task
			return 0, false
		}))
		go func() { defer wg.Done(); _, _ = h.Wait(context.Background()) }()
	}
	time.Sleep(20 * time.Millisecond)
	shares := busyShare(t, rt, func() { time.Sleep(300 * time.Millisecond) })
	cancel()
	wg.Wait()
	t.Logf("saturated: busy shares %.3f", shares)
	for i, s := range shares {
		assert.Greater(t, s, 0.9, "worker %d", i)
	}
}

// TestBusyTimeOfAHalfLoadedRuntime: one worker runs a task that computes
// for 10ms then sleeps for 10ms, in a loop; its busy share is about half.
func TestBusyTimeOfAHalfLoadedRuntime(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			_, err := blitz.SpawnOn(rt.Handle(), future.PollFn(func(*future.Context) (int, bool) {
				for start := time.Now(); time.Since(start) < 10*time.Millisecond; {
				}
				return 0, true
			})).Wait(context.Background())
			if err != nil {
				return
			}
			time.Sleep(10 * time.Millisecond) // parked meanwhile
		}
	}()
	time.Sleep(30 * time.Millisecond)
	shares := busyShare(t, rt, func() { time.Sleep(400 * time.Millisecond) })
	cancel()
	<-done
	t.Logf("half loaded: busy share %.3f", shares[0])
	// A slow machine lengthens the sleeps (parked) more than the loop,
	// which is timed: the share can only drop below a half.
	assert.Greater(t, shares[0], 0.2)
	assert.Less(t, shares[0], 0.75)
}

// TestPrometheusCountersNeverDecrease scrapes the exposition again and
// again while tasks park and wake the workers, and checks that no counter,
// histogram bucket, count or sum ever goes down (Prometheus reads a
// decrease as a reset) and that the start time stays put.
func TestPrometheusCountersNeverDecrease(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2, PollTiming: true})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				d := time.Duration(i%4) * 300 * time.Microsecond
				if _, err := blitz.SpawnOn(rt.Handle(), blitz.Sleep(d)).Wait(context.Background()); err != nil {
					return
				}
			}
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	scrapes := 400
	if testing.Short() {
		scrapes = 150
	}
	prev := map[string]float64{}
	monotone := func(key string) bool {
		name, _, _ := strings.Cut(key, "{")
		for _, suffix := range []string{"_total", "_bucket", "_count", "_sum"} {
			if strings.HasSuffix(name, suffix) {
				return true
			}
		}
		return false
	}
	checked := 0
	for i := range scrapes {
		var b bytes.Buffer
		require.NoError(t, rt.Metrics().WritePrometheus(&b))
		s := checkPrometheus(t, b.String())
		for key, v := range s {
			old, seen := prev[key]
			switch {
			case !seen:
			case monotone(key):
				require.GreaterOrEqual(t, v, old, "scrape %d: %s went from %v to %v", i, key, old, v)
				checked++
			case key == "blitz_start_time_seconds":
				require.Equal(t, old, v, "scrape %d: the start time moved", i)
			}
			prev[key] = v
		}
		time.Sleep(time.Millisecond)
	}
	t.Logf("%d scrapes, %d comparisons of monotone series", scrapes, checked)
	require.Contains(t, prev, `blitz_worker_busy_seconds_total{worker="0"}`)
}

// TestLongPollInMetrics: a task that blocks in its poll shows in Metrics
// and in the exposition while it blocks (it was seen only once its poll
// ended), and no longer once it returns.
func TestLongPollInMetrics(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2, PollTiming: true, SlowPoll: 5 * time.Millisecond})
	release := make(chan struct{})
	h := blitz.SpawnOn(rt.Handle(), blitz.Named("blocker", future.PollFn(func(*future.Context) (int, bool) {
		<-release
		return 0, true
	})))
	var m blitz.Metrics
	require.Eventually(t, func() bool {
		m = rt.Metrics()
		return len(m.LongPolls) == 1 && m.LongPolls[0].For >= 20*time.Millisecond
	}, 10*time.Second, time.Millisecond)
	assert.Equal(t, "blocker", m.LongPolls[0].Name)
	var b bytes.Buffer
	require.NoError(t, m.WritePrometheus(&b))
	s := checkPrometheus(t, b.String())
	assert.Equal(t, float64(1), s["blitz_long_polls"])
	assert.GreaterOrEqual(t, s["blitz_longest_poll_in_progress_seconds"], 0.02)
	close(release)
	_, err := h.Wait(testCtx(t))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(rt.Metrics().LongPolls) == 0 }, 10*time.Second, time.Millisecond)
}
