package blitz_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"runtime/pprof"
	"runtime/trace"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// spinner is a task that burns CPU in polls of a fixed amount of work
// (about a millisecond on a quiet machine), yielding between them, until
// stop is set; polls counts them.
type spinner struct {
	stop  *atomic.Bool
	polls atomic.Int64
	sink  int
}

func (s *spinner) Poll(cx *future.Context) (struct{}, bool) {
	if s.stop.Load() {
		return struct{}{}, true
	}
	for i := range 1_000_000 {
		s.sink += i * i
	}
	s.polls.Add(1)
	cx.Yield()
	return struct{}{}, false
}

// TestProfileLabels: with Config.ProfileLabels, a CPU profile taken while
// a named task spins has samples labelled with the task's name and id.
// The profile is checked in its raw form: the gunzipped protocol buffer's
// string table holds a label key and value only when a sample carries
// them (no profile parser is a dependency of the module).
func TestProfileLabels(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1, ProfileLabels: true})
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err != nil {
		t.Skipf("CPU profile unavailable: %v", err)
	}
	var stop atomic.Bool
	sp := &spinner{stop: &stop}
	h := blitz.SpawnOn(rt.Handle(), blitz.Named("spinning-task", future.Future[struct{}](sp)))
	// Spin for an amount of work, not of time: a loaded machine gives the
	// worker less of each second, and the profiler samples CPU time (100
	// samples a second of it).
	polls := int64(300)
	if testing.Short() {
		polls = 150
	}
	for deadline := time.Now().Add(30 * time.Second); sp.polls.Load() < polls && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	stop.Store(true)
	_, err := h.Wait(testCtx(t))
	pprof.StopCPUProfile()
	require.NoError(t, err)
	zr, err := gzip.NewReader(&prof)
	require.NoError(t, err)
	raw, err := io.ReadAll(zr)
	require.NoError(t, err)
	for _, s := range []string{"blitz.task", "spinning-task", "blitz.task.id"} {
		require.True(t, bytes.Contains(raw, []byte(s)), "label %q not in the profile", s)
	}
}

// TestTraceRegions: while runtime/trace runs, each task is a trace task
// named after the task and each poll a region "blitz.poll" in it. The
// trace is checked in its raw form: task and region names are in its
// string table only when such events were emitted.
func TestTraceRegions(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("the tracer is already running")
	}
	rt := newRuntime(t, blitz.Config{Workers: 2})
	var tr bytes.Buffer
	require.NoError(t, trace.Start(&tr))
	var hs []blitz.JoinHandle[struct{}]
	for range 4 {
		hs = append(hs, blitz.SpawnOn(rt.Handle(), blitz.Named("traced-task", future.Future[struct{}](&yieldOnce{}))))
	}
	for _, h := range hs {
		_, err := h.Wait(testCtx(t))
		require.NoError(t, err)
	}
	trace.Stop()
	for _, s := range []string{"traced-task", "blitz.poll", "blitz.task.id"} {
		require.True(t, bytes.Contains(tr.Bytes(), []byte(s)), "%q not in the trace", s)
	}
}

// TestNoTraceRegions: with Config.NoTraceRegions, tasks do not show in
// the trace.
func TestNoTraceRegions(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("the tracer is already running")
	}
	rt := newRuntime(t, blitz.Config{Workers: 1, NoTraceRegions: true})
	var tr bytes.Buffer
	require.NoError(t, trace.Start(&tr))
	h := blitz.SpawnOn(rt.Handle(), blitz.Named("untraced-task", future.Future[struct{}](&yieldOnce{})))
	_, err := h.Wait(testCtx(t))
	trace.Stop()
	require.NoError(t, err)
	require.False(t, bytes.Contains(tr.Bytes(), []byte("untraced-task")))
}
