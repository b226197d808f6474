package parallel_test

import (
	"bufio"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/parallel"
	"github.com/stretchr/testify/require"
)

// joinTree runs a binary tree of 2^d-1 joins: 2^d-1 jobs (each Join's b).
func joinTree(c *parallel.Ctx, d int) {
	if d == 0 {
		return
	}
	c.Join(func(c *parallel.Ctx) { joinTree(c, d-1) }, func(c *parallel.Ctx) { joinTree(c, d-1) })
}

// requireConsistent requires what holds of every worker in any Metrics,
// even while the workers run: the subsets of JobsExecuted do not exceed it,
// nor Wakeups Sleeps, and Total is the sum of Workers. (Sleeps-Wakeups may
// exceed 1 in a reading while the worker sleeps and wakes: Wakeups is read
// first.)
func requireConsistent(t testing.TB, m parallel.Metrics) {
	t.Helper()
	var sum parallel.WorkerMetrics
	for i, w := range m.Workers {
		require.LessOrEqualf(t, w.JobsStolen+w.JobsInjected, w.JobsExecuted, "worker %d: %+v", i, w)
		require.LessOrEqualf(t, w.Wakeups, w.Sleeps, "worker %d: %+v", i, w)
		sum.JobsExecuted += w.JobsExecuted
		sum.JobsStolen += w.JobsStolen
		sum.JobsInjected += w.JobsInjected
		sum.Sleeps += w.Sleeps
		sum.Wakeups += w.Wakeups
		sum.Queued += w.Queued
	}
	require.Equal(t, sum, m.Total)
}

// TestMetricsCountEveryJob: once a call from outside the pool returns, its
// jobs are counted exactly: each Join's b (popped back or stolen), each
// spawned job and the injected job of each call.
func TestMetricsCountEveryJob(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			p := newPool(t, workers)
			m := p.Metrics()
			require.Len(t, m.Workers, workers)
			require.Zero(t, m.Total.JobsExecuted)

			const d = 12
			p.Run(func(c *parallel.Ctx) { joinTree(c, d) })
			m = p.Metrics()
			requireConsistent(t, m)
			require.Equal(t, uint64(1<<d), m.Total.JobsExecuted, "2^d-1 joins and the injected job")
			require.Equal(t, uint64(1), m.Total.JobsInjected)
			if workers == 1 {
				require.Zero(t, m.Total.JobsStolen)
			}

			p.Join(func(*parallel.Ctx) {}, func(*parallel.Ctx) {})
			const spawns = 100
			p.Scope(func(s *parallel.Scope) {
				for range spawns {
					s.Spawn(func(*parallel.Ctx) {})
				}
			})
			m = p.Metrics()
			requireConsistent(t, m)
			require.Equal(t, uint64(1<<d+2+spawns+1), m.Total.JobsExecuted)
			require.Equal(t, uint64(3), m.Total.JobsInjected)
		})
	}
}

// TestMetricsCountStolenJob: a b that must be stolen (a waits until b has
// run) is counted as executed and stolen by its thief.
func TestMetricsCountStolenJob(t *testing.T) {
	p := newPool(t, 2)
	var ran atomic.Bool
	var stolen bool
	var owner, thief int
	p.Run(func(c *parallel.Ctx) {
		owner = c.WorkerIndex()
		c.Join(func(*parallel.Ctx) {
			stolen = spinUntil(10*time.Second, ran.Load)
		}, func(c *parallel.Ctx) {
			thief = c.WorkerIndex()
			ran.Store(true)
		})
	})
	require.True(t, stolen, "b was never stolen")
	require.NotEqual(t, owner, thief)
	m := p.Metrics()
	requireConsistent(t, m)
	require.Equal(t, uint64(2), m.Total.JobsExecuted)
	require.Equal(t, uint64(1), m.Total.JobsStolen)
	require.Equal(t, parallel.WorkerMetrics{JobsExecuted: 1, JobsInjected: 1}, withoutSleeps(m.Workers[owner]))
	require.Equal(t, parallel.WorkerMetrics{JobsExecuted: 1, JobsStolen: 1}, withoutSleeps(m.Workers[thief]))
}

// withoutSleeps returns w without Sleeps and Wakeups, which depend on timing.
func withoutSleeps(w parallel.WorkerMetrics) parallel.WorkerMetrics {
	w.Sleeps, w.Wakeups = 0, 0
	return w
}

// TestMetricsCountGoexitJob: a job that called runtime.Goexit is counted,
// and the replacement worker goes on counting from where the dead
// goroutine stopped.
func TestMetricsCountGoexitJob(t *testing.T) {
	p := newPool(t, 1)
	requireGoexit(t, func() { p.Run(goexit) })
	m := p.Metrics()
	require.Equal(t, uint64(1), m.Total.JobsExecuted)
	p.Run(func(c *parallel.Ctx) { joinTree(c, 3) })
	m = p.Metrics()
	requireConsistent(t, m)
	require.Equal(t, uint64(1+1<<3), m.Total.JobsExecuted)
	require.Equal(t, uint64(2), m.Total.JobsInjected)
}

// TestMetricsNeverDecreaseUnderLoad: a goroutine reading Metrics while
// trees of joins, scopes and loops run, submitted from several goroutines,
// sees every counter of every worker grow or stay, and each reading
// consistent; at the end the counts add up.
func TestMetricsNeverDecreaseUnderLoad(t *testing.T) {
	const workers = 3 // more than the test machine's cores: steals and sleeps
	p := newPool(t, workers)
	rounds := scale(200, 30)

	stop := make(chan struct{})
	scraped := make(chan int)
	go func() {
		prev := p.Metrics()
		n := 0
		defer func() { scraped <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			m := p.Metrics()
			n++
			if !metricsGrew(t, prev, m) {
				return
			}
			prev = m
			runtime.Gosched()
		}
	}()

	const submitters, d, spawns = 2, 10, 20
	var wg sync.WaitGroup
	for range submitters {
		wg.Go(func() {
			for range rounds {
				p.Run(func(c *parallel.Ctx) { joinTree(c, d) })
				p.Scope(func(s *parallel.Scope) {
					for range spawns {
						s.Spawn(func(c *parallel.Ctx) { joinTree(c, 2) })
					}
				})
				if testing.Short() {
					time.Sleep(50 * time.Microsecond) // let workers fall asleep now and then
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	n := <-scraped
	require.False(t, t.Failed())
	require.Greater(t, n, 1, "the scraper should have read the metrics while the work ran")

	m := p.Metrics()
	requireConsistent(t, m)
	calls := uint64(submitters * rounds)
	perRound := uint64(1<<d) + uint64(1+spawns*(1+3))
	require.Equal(t, calls*perRound, m.Total.JobsExecuted)
	require.Equal(t, 2*calls, m.Total.JobsInjected)
	t.Logf("%d readings; total %+v", n, m.Total)
}

// metricsGrew reports whether m is consistent and no counter of a worker is
// below prev's, reporting the first failure through t. Any goroutine may
// call it.
func metricsGrew(t *testing.T, prev, m parallel.Metrics) bool {
	for i, w := range m.Workers {
		was := prev.Workers[i]
		switch {
		case w.JobsStolen+w.JobsInjected > w.JobsExecuted, w.Wakeups > w.Sleeps:
			t.Errorf("worker %d: inconsistent: %+v", i, w)
			return false
		case w.JobsExecuted < was.JobsExecuted, w.JobsStolen < was.JobsStolen, w.JobsInjected < was.JobsInjected,
			w.Sleeps < was.Sleeps, w.Wakeups < was.Wakeups:
			t.Errorf("worker %d: a counter decreased from %+v to %+v", i, was, w)
			return false
		}
	}
	return true
}

// TestMetricsIdlePoolSleeps: an idle pool's workers are asleep and counted
// so, and their counters stand still; after work they sleep again.
func TestMetricsIdlePoolSleeps(t *testing.T) {
	const workers = 2
	p := newPool(t, workers)
	require.True(t, parallel.WaitAllAsleep(p, 10*time.Second))
	m := p.Metrics()
	requireConsistent(t, m)
	require.Equal(t, workers, m.Sleeping)
	require.Equal(t, workers, m.Idle)
	for i, w := range m.Workers {
		require.Equalf(t, w.Wakeups+1, w.Sleeps, "worker %d asleep: %+v", i, w)
	}
	require.Zero(t, m.Total.JobsExecuted)
	time.Sleep(20 * time.Millisecond)
	require.Equal(t, m, p.Metrics(), "an idle pool's figures stand still")

	p.Run(func(c *parallel.Ctx) { joinTree(c, 8) })
	require.True(t, parallel.WaitAllAsleep(p, 10*time.Second))
	after := p.Metrics()
	requireConsistent(t, after)
	require.Equal(t, uint64(1<<8), after.Total.JobsExecuted)
	require.Greater(t, after.Total.Sleeps, m.Total.Sleeps, "a worker woke for the job and slept again")
	require.Zero(t, after.Total.Queued)
	require.Zero(t, after.InjectionQueue)
	time.Sleep(20 * time.Millisecond)
	require.Equal(t, after, p.Metrics(), "an idle pool's figures stand still")
}

// promLine is a sample line as WritePrometheus writes it: a name, an
// optional label set, and a value.
var promLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*\})? (\S+)$`)

// parseProm parses text as the Prometheus text exposition format (0.0.4),
// strictly: each family has one HELP and one TYPE line, before its samples;
// families are not interleaved; counters end in _total; values are numbers
// and no series repeats. It returns each series' value as written, and each
// family's type.
func parseProm(t *testing.T, text string) (series, types map[string]string) {
	t.Helper()
	series, types = map[string]string{}, map[string]string{}
	helps := map[string]bool{}
	done := map[string]bool{}
	current := ""
	require.True(t, strings.HasSuffix(text, "\n"), "the text ends with a newline")
	sc := bufio.NewScanner(strings.NewReader(text))
	for line := 1; sc.Scan(); line++ {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "# HELP "):
			name, help, ok := strings.Cut(l[len("# HELP "):], " ")
			require.True(t, ok && help != "", "line %d: %q", line, l)
			require.False(t, helps[name], "line %d: second HELP for %s", line, name)
			require.False(t, done[name], "line %d: HELP after the samples of %s", line, name)
			helps[name] = true
		case strings.HasPrefix(l, "# TYPE "):
			f := strings.Split(l[len("# TYPE "):], " ")
			require.Len(t, f, 2, "line %d: %q", line, l)
			require.Contains(t, []string{"counter", "gauge"}, f[1], "line %d", line)
			require.Empty(t, types[f[0]], "line %d: second TYPE for %s", line, f[0])
			require.True(t, helps[f[0]], "line %d: TYPE before HELP for %s", line, f[0])
			types[f[0]] = f[1]
			if current != "" {
				done[current] = true
			}
			current = f[0]
		default:
			mt := promLine.FindStringSubmatch(l)
			require.NotNil(t, mt, "line %d is not a sample: %q", line, l)
			name := mt[1]
			require.Equal(t, current, name, "line %d: sample outside its family", line)
			require.False(t, done[name], "line %d: family %s interleaved", line, name)
			if types[name] == "counter" {
				require.True(t, strings.HasSuffix(name, "_total"), "counter %s", name)
			}
			_, err := strconv.ParseFloat(mt[3], 64)
			require.NoError(t, err, "line %d", line)
			key := name + mt[2]
			_, dup := series[key]
			require.False(t, dup, "line %d: series %s repeats", line, key)
			series[key] = mt[3]
		}
	}
	require.NoError(t, sc.Err())
	return series, types
}

// TestWritePrometheus: the exposition of a pool after work is valid text
// format and carries exactly the figures of Metrics.
func TestWritePrometheus(t *testing.T) {
	const workers = 3
	p := newPool(t, workers)
	p.Run(func(c *parallel.Ctx) { joinTree(c, 10) })
	m := p.Metrics()
	var b strings.Builder
	require.NoError(t, m.WritePrometheus(&b))
	series, types := parseProm(t, b.String())

	want := map[string]string{
		"blitz_parallel_workers":               strconv.Itoa(workers),
		"blitz_parallel_workers_idle":          strconv.Itoa(m.Idle),
		"blitz_parallel_workers_sleeping":      strconv.Itoa(m.Sleeping),
		"blitz_parallel_injection_queue_depth": strconv.Itoa(m.InjectionQueue),
	}
	for i, w := range m.Workers {
		l := fmt.Sprintf(`{worker="%d"}`, i)
		want["blitz_parallel_jobs_executed_total"+l] = strconv.FormatUint(w.JobsExecuted, 10)
		want["blitz_parallel_jobs_stolen_total"+l] = strconv.FormatUint(w.JobsStolen, 10)
		want["blitz_parallel_jobs_injected_total"+l] = strconv.FormatUint(w.JobsInjected, 10)
		want["blitz_parallel_sleeps_total"+l] = strconv.FormatUint(w.Sleeps, 10)
		want["blitz_parallel_wakeups_total"+l] = strconv.FormatUint(w.Wakeups, 10)
		want["blitz_parallel_deque_depth"+l] = strconv.Itoa(w.Queued)
	}
	require.Equal(t, want, series)
	for name, typ := range types {
		require.Equal(t, strings.HasSuffix(name, "_total"), typ == "counter", "%s is a %s", name, typ)
	}
}

// TestWritePrometheusExactCounts: counters are written as integers, exact
// beyond 2^53, where a float64 would round them.
func TestWritePrometheusExactCounts(t *testing.T) {
	m := parallel.Metrics{Workers: []parallel.WorkerMetrics{{JobsExecuted: 1<<60 + 1}}}
	var b strings.Builder
	require.NoError(t, m.WritePrometheus(&b))
	series, _ := parseProm(t, b.String())
	require.Equal(t, "1152921504606846977", series[`blitz_parallel_jobs_executed_total{worker="0"}`])
}

// failWriter fails every write.
type failWriter struct{}

var errWrite = errors.New("write failed")

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }

// TestWritePrometheusWriteError: WritePrometheus returns the writer's error.
func TestWritePrometheusWriteError(t *testing.T) {
	p := newPool(t, 2)
	require.ErrorIs(t, p.Metrics().WritePrometheus(failWriter{}), errWrite)
}

// BenchmarkMetrics is the cost of a reading of a pool's figures, and of its
// exposition.
func BenchmarkMetrics(b *testing.B) {
	p := benchPool(b)
	p.Run(func(c *parallel.Ctx) { joinTree(c, 10) })
	b.Run("Metrics", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			p.Metrics()
		}
	})
	b.Run("WritePrometheus", func(b *testing.B) {
		m := p.Metrics()
		var sb strings.Builder
		b.ReportAllocs()
		for range b.N {
			sb.Reset()
			if err := m.WritePrometheus(&sb); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestPublishedSubsetsNeverExceedTheirWhole: a reader racing with a worker
// that publishes after every stolen job and every sleep never sees more
// jobs stolen than executed, nor more wakeups than sleeps, and sees each
// counter grow or stay.
func TestPublishedSubsetsNeverExceedTheirWhole(t *testing.T) {
	var cell parallel.CounterCell
	n := scale(3_000_000, 500_000)
	var started atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		started.Store(true)
		for range n {
			cell.StealOne()
			cell.SleepOnce()
		}
	}()
	for !started.Load() {
		runtime.Gosched()
	}
	var prev parallel.WorkerMetrics
	readings := 0
	for reading := true; reading; readings++ {
		select {
		case <-done:
			reading = false
		default:
		}
		w := cell.Load()
		if w.JobsStolen > w.JobsExecuted || w.Wakeups > w.Sleeps {
			t.Fatalf("reading %d: a subset exceeds its whole: %+v", readings, w)
		}
		if w.JobsStolen < prev.JobsStolen || w.JobsExecuted < prev.JobsExecuted ||
			w.Sleeps < prev.Sleeps || w.Wakeups < prev.Wakeups {
			t.Fatalf("reading %d: a counter decreased from %+v to %+v", readings, prev, w)
		}
		prev = w
	}
	require.Equal(t, parallel.WorkerMetrics{JobsExecuted: uint64(n), JobsStolen: uint64(n), Sleeps: uint64(n), Wakeups: uint64(n)}, cell.Load())
	t.Logf("%d readings", readings)
}
