package blitz_test

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// opsOf returns the counts of kind summed over the rings.
func opsOf(m blitz.Metrics, kind string) (submitted, completed uint64) {
	for _, r := range m.IO {
		for _, o := range r.Ops {
			if o.Kind == kind {
				submitted += o.Submitted
				completed += o.Completed
			}
		}
	}
	return submitted, completed
}

// TestMetricsCountTheWork: tasks, socket operations, blocking calls and
// sleeps show in Metrics as they happen, on every backend, and the
// operations in flight go back to what they were once the sockets are
// closed.
func TestMetricsCountTheWork(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		before := rt.Metrics()
		require.Len(t, before.Workers, 2)
		assert.Equal(t, rt.Backend(), before.Backend)

		const tasks = 100
		for range tasks {
			_, err := blitz.SpawnOn(rt.Handle(), future.Ready(1)).Wait(testCtx(t))
			require.NoError(t, err)
		}
		_, err := blitz.BlockOn(testCtx(t), rt.Handle(), blitz.Blocking(func() (int, error) { return 1, nil }))
		require.NoError(t, err)

		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		server := blitz.SpawnOn(rt.Handle(), future.Future[int](&acceptLoop{l: l}))
		runEchoClients(t, l.AddrPort().String(), 2, 5)

		sleeper := blitz.SpawnOn(rt.Handle(), future.Future[struct{}](blitz.Sleep(time.Hour)))
		require.Eventually(t, func() bool { return rt.Metrics().Timers.Live >= 1 }, 10*time.Second, time.Millisecond)

		m := rt.Metrics()
		assert.GreaterOrEqual(t, m.Tasks.Spawned-before.Tasks.Spawned, uint64(tasks+2))
		assert.GreaterOrEqual(t, m.Tasks.Live, int64(2), "the accept loop and the sleeper")
		var polls uint64
		for _, w := range m.Workers {
			polls += w.Polls
		}
		assert.GreaterOrEqual(t, polls, uint64(tasks))
		// The pool counts a call as run once its goroutine is done with
		// it, which may be just after the caller has its result.
		require.Eventually(t, func() bool {
			b := rt.Metrics().Blocking
			return b.Ran >= 1 && b.Started >= 1
		}, 10*time.Second, time.Millisecond)
		if cfg.Backend != blitz.BackendNone {
			require.NotEmpty(t, m.IO)
			acc, _ := opsOf(m, "accept")
			assert.GreaterOrEqual(t, acc, uint64(2), "accepts submitted")
			if rt.Backend() != "iocp" {
				var enters uint64
				for _, r := range m.IO {
					enters += r.EnterCalls
				}
				assert.Greater(t, enters, uint64(0), "calls into the kernel's queue")
			}
			require.Eventually(t, func() bool {
				var inFlight int64
				for _, r := range rt.Metrics().IO {
					inFlight += r.InFlight
				}
				return inFlight >= 1 // the pending accept
			}, 10*time.Second, time.Millisecond)
		}

		sleeper.Cancel()
		require.NoError(t, l.Close())
		_, err = server.Wait(testCtx(t))
		require.NoError(t, err)
		if cfg.Backend != blitz.BackendNone {
			// Every submitted op ends: in flight goes back to zero, and
			// each kind's completions catch up with its submissions.
			require.Eventually(t, func() bool {
				m := rt.Metrics()
				for _, r := range m.IO {
					if r.InFlight != 0 {
						return false
					}
					for _, o := range r.Ops {
						if o.InFlight() != 0 {
							return false
						}
					}
				}
				return true
			}, 10*time.Second, time.Millisecond, "ops still in flight: %+v", rt.Metrics().IO)
		}
	})
}

// promSample is a sample line of the text format: name, labels, value.
var promSample = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (\S+)$`)

// checkPrometheus parses text as the Prometheus text exposition format,
// strictly: every sample's family has one HELP and one TYPE line before
// its samples, the families are not interleaved, counters end in _total,
// values are numbers and no series repeats. It returns the samples by
// series.
func checkPrometheus(t *testing.T, text string) map[string]float64 {
	t.Helper()
	types := map[string]string{}
	helps := map[string]bool{}
	series := map[string]float64{}
	done := map[string]bool{} // families whose samples are over
	current := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for line := 1; sc.Scan(); line++ {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "# HELP "):
			f := strings.SplitN(l[len("# HELP "):], " ", 2)
			require.Len(t, f, 2, "line %d: %q", line, l)
			require.False(t, helps[f[0]], "line %d: second HELP for %s", line, f[0])
			helps[f[0]] = true
		case strings.HasPrefix(l, "# TYPE "):
			f := strings.Fields(l[len("# TYPE "):])
			require.Len(t, f, 2, "line %d: %q", line, l)
			require.Contains(t, []string{"counter", "gauge", "histogram"}, f[1], "line %d", line)
			require.Empty(t, types[f[0]], "line %d: second TYPE for %s", line, f[0])
			types[f[0]] = f[1]
			if current != "" {
				done[current] = true
			}
			current = f[0]
		default:
			mt := promSample.FindStringSubmatch(l)
			require.NotNil(t, mt, "line %d is not a sample: %q", line, l)
			name := mt[1]
			if types[current] == "histogram" {
				base, ok := strings.CutSuffix(name, "_bucket")
				if !ok {
					if base, ok = strings.CutSuffix(name, "_sum"); !ok {
						base, ok = strings.CutSuffix(name, "_count")
					}
				}
				require.True(t, ok && base == current, "line %d: %s in histogram %s", line, name, current)
				name = current
			}
			require.Equal(t, current, name, "line %d: sample outside its family", line)
			require.False(t, done[name], "line %d: family %s interleaved", line, name)
			require.True(t, helps[name], "line %d: no HELP for %s", line, name)
			if types[name] == "counter" {
				require.True(t, strings.HasSuffix(name, "_total"), "counter %s", name)
			}
			v, err := strconv.ParseFloat(mt[3], 64)
			require.NoError(t, err, "line %d", line)
			key := mt[1] + mt[2]
			_, dup := series[key]
			require.False(t, dup, "line %d: series %s repeats", line, key)
			series[key] = v
		}
	}
	require.NoError(t, sc.Err())
	return series
}

// TestWritePrometheus: the exposition is valid text format and carries the
// figures of Metrics, per worker and per ring.
func TestWritePrometheus(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		server := blitz.SpawnOn(rt.Handle(), future.Future[int](&acceptLoop{l: l}))
		runEchoClients(t, l.AddrPort().String(), 1, 3)

		m := rt.Metrics()
		var b bytes.Buffer
		require.NoError(t, m.WritePrometheus(&b))
		s := checkPrometheus(t, b.String())
		assert.Equal(t, float64(2), s["blitz_workers"])
		for i, w := range m.Workers {
			assert.Equal(t, float64(w.Polls), s[fmt.Sprintf(`blitz_worker_polls_total{worker="%d"}`, i)])
		}
		assert.Equal(t, float64(m.Tasks.Spawned), s["blitz_tasks_spawned_total"])
		assert.Equal(t, float64(m.Tasks.Live), s["blitz_tasks_live"])
		skipped, ok := s["blitz_accepts_skipped_total"]
		assert.True(t, ok, "blitz_accepts_skipped_total is exposed")
		assert.Equal(t, float64(m.AcceptsSkipped), skipped)
		if cfg.Backend != blitz.BackendNone {
			acc, _ := opsOf(m, "accept")
			var fromText float64
			for i := range m.IO {
				fromText += s[fmt.Sprintf(`blitz_io_ops_submitted_total{ring="%d",kind="accept"}`, i)]
			}
			assert.Equal(t, float64(acc), fromText)
		}
		require.NoError(t, l.Close())
		_, err = server.Wait(testCtx(t))
		require.NoError(t, err)
	})
}

// A writer that fails makes WritePrometheus return its error.
func TestWritePrometheusWriteError(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1, Backend: blitz.BackendNone})
	err := rt.Metrics().WritePrometheus(failWriter{})
	require.ErrorIs(t, err, errWrite)
}

var errWrite = fmt.Errorf("write refused")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }

// With PollTiming, Metrics carries the poll-duration histogram and the
// slow polls, fired sleeps show with their lateness, and the workers'
// parked and busy times add up to the uptime; the exposition has them as
// valid histograms.
func TestMetricsTimes(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 2, PollTiming: true, SlowPoll: 5 * time.Millisecond})
	const sleeps = 20
	for range sleeps {
		_, err := blitz.SpawnOn(rt.Handle(), blitz.Sleep(time.Millisecond)).Wait(testCtx(t))
		require.NoError(t, err)
	}
	_, err := blitz.SpawnOn(rt.Handle(), blitz.Named("hog", future.PollFn(func(*future.Context) (int, bool) {
		time.Sleep(10 * time.Millisecond)
		return 0, true
	}))).Wait(testCtx(t))
	require.NoError(t, err)

	var m blitz.Metrics
	require.Eventually(t, func() bool {
		m = rt.Metrics()
		return m.PollDurations.Count() >= sleeps && m.SlowPolls >= 1
	}, 10*time.Second, time.Millisecond)
	// A sleep whose deadline has passed by its first poll completes
	// without the wheel; most of these fire from it.
	assert.GreaterOrEqual(t, m.Timers.Fired, uint64(1))
	assert.Equal(t, m.Timers.Fired, m.Timers.Lateness.Count())
	// The hog's poll is among the latest slow ones, under its name. Not
	// necessarily the last: on a loaded machine (the Windows tests under
	// Wine run beside other packages) a thread descheduled in the middle
	// of a later poll makes that poll slow too.
	require.NotEmpty(t, m.LatestSlowPolls)
	names := make([]string, len(m.LatestSlowPolls))
	for i, p := range m.LatestSlowPolls {
		names[i] = p.Name
	}
	assert.Contains(t, names, "hog")
	var parked, busy time.Duration
	for _, w := range m.Workers {
		assert.LessOrEqual(t, w.ParkedTime, m.Uptime)
		parked += w.ParkedTime
		busy += w.BusyTime
	}
	assert.GreaterOrEqual(t, busy, 10*time.Millisecond, "a worker ran the 10ms poll")
	assert.Greater(t, parked, time.Duration(0), "the workers parked between the sleeps")

	var b bytes.Buffer
	require.NoError(t, m.WritePrometheus(&b))
	s := checkPrometheus(t, b.String())
	assert.Equal(t, float64(m.PollDurations.Count()), s[`blitz_poll_duration_seconds_bucket{le="+Inf"}`])
	assert.Equal(t, float64(m.PollDurations.Count()), s["blitz_poll_duration_seconds_count"])
	assert.Equal(t, float64(m.Timers.Lateness.Count()), s["blitz_timer_lateness_seconds_count"])
	assert.Equal(t, float64(m.SlowPolls), s["blitz_slow_polls_total"])
	assert.Equal(t, float64(m.SchedulingDelays.Count()), s["blitz_scheduling_delay_seconds_count"])
	var prev float64
	for _, bound := range m.PollDurations.Bounds {
		v := s[fmt.Sprintf(`blitz_poll_duration_seconds_bucket{le="%s"}`, strconv.FormatFloat(bound.Seconds(), 'g', -1, 64))]
		assert.GreaterOrEqual(t, v, prev, "buckets are cumulative")
		prev = v
	}
}

// The blocking calls still queued when the runtime shuts down are rejected,
// and Metrics counts them.
func TestMetricsBlockingRejected(t *testing.T) {
	rt, err := blitz.New(blitz.Config{Workers: 1, BlockingThreads: 1})
	require.NoError(t, err)
	release := make(chan struct{})
	running := make(chan struct{})
	first := blitz.SpawnBlocking(rt.Handle(), func() int { close(running); <-release; return 0 })
	<-running
	const queued = 3
	var hs []blitz.JoinHandle[int]
	for range queued {
		hs = append(hs, blitz.SpawnBlocking(rt.Handle(), func() int { return 1 }))
	}
	require.Eventually(t, func() bool { return rt.Metrics().Blocking.Queued == queued }, 10*time.Second, time.Millisecond)
	time.AfterFunc(20*time.Millisecond, func() { close(release) })
	require.NoError(t, rt.Shutdown(testCtx(t)))
	assert.Equal(t, uint64(queued), rt.Metrics().Blocking.Rejected)
	for _, h := range hs {
		_, err := h.Wait(testCtx(t))
		require.ErrorIs(t, err, blitz.ErrShutdown)
	}
	_, err = first.Wait(testCtx(t)) // its call ran, but its task went with the shutdown
	require.ErrorIs(t, err, blitz.ErrShutdown)
}
