package inspect_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/inspect"
	"github.com/blitz-go/blitz/waker"
)

// idleKinds are the kinds of wait of the tasks spawnIdle spawns.
var idleKinds = [...]future.WaitKind{
	future.NewWaitKind("Console.Accept", future.WaitFD),
	future.NewWaitKind("Console.Recv", future.WaitNumber),
	future.NewWaitKind("Console.Lock", future.WaitNoObject),
}

// idleName is the name of spawnIdle's task i: 1000 names, each shared by
// a thousandth of the tasks.
func idleName(i int) string { return fmt.Sprintf("task-%d", i%1000) }

// idleTask is task i of spawnIdle: it polls (i mod 4)+1 times, then, as
// a leaf future does, keeps its waker and records its wait,
// idleKinds[i mod 3] with object i, and is never woken.
type idleTask struct {
	i, polls int
	kept     waker.Waker
}

func (f *idleTask) Poll(cx *future.Context) (struct{}, bool) {
	if f.polls++; f.polls <= f.i%4 {
		cx.Waker().Wake()
		return struct{}{}, false
	}
	f.kept = cx.Waker()
	cx.Waiting(idleKinds[f.i%3], uint64(f.i))
	return struct{}{}, false
}

// spawnIdle spawns n idleTasks on rt, task i named idleName(i), which wait
// until the runtime shuts down. It returns once rt lists them all as idle
// with their waits.
func spawnIdle(tb testing.TB, rt *blitz.Runtime, n int) {
	tb.Helper()
	for i := range n {
		blitz.SpawnOn(rt.Handle(), blitz.Named(idleName(i), future.Future[struct{}](&idleTask{i: i})))
	}
	deadline := time.Now().Add(time.Minute)
	for {
		tasks, _ := rt.Tasks()
		waiting := 0
		for _, t := range tasks {
			if t.State == blitz.TaskIdle && t.Wait != 0 {
				waiting++
			}
		}
		if waiting >= n {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d of %d tasks idle with a wait after a minute", waiting, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stateAnswer is a console state as the tests read it.
type stateAnswer struct {
	Summary struct {
		Live   int64
		Listed int
		States map[string]int
		Waits  []struct {
			Kind  string
			Tasks int
		}
	}
	Matching int
	Offset   int
	Tasks    []rowAnswer
	Selected *struct {
		ID     uint64
		Stanza string
	}
	TookNs int64
}

// rowAnswer is a row of a console state's page.
type rowAnswer struct {
	ID      uint64
	Name    string
	State   string
	AgeNs   int64
	Polls   uint64
	PollNs  int64
	Waiting string
	ForNs   int64
}

// serveState runs h on a GET of "/state?"+query and returns the
// recorded answer.
func serveState(h http.Handler, query string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/state?"+query, nil))
	return rec
}

// decodeState decodes a 200 answer of serveState.
func decodeState(t testing.TB, rec *httptest.ResponseRecorder) stateAnswer {
	t.Helper()
	require.Equal(t, http.StatusOK, rec.Code, "body: %s", rec.Body.String())
	var st stateAnswer
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &st))
	return st
}

// scaleTasks is the number of tasks of the scale tests: 10^5, 10^4 with
// -short.
func scaleTasks() int {
	if testing.Short() {
		return 10_000
	}
	return 100_000
}

// newScaleRuntime returns a runtime with n idle tasks of spawnIdle, shut
// down when tb ends.
func newScaleRuntime(tb testing.TB, n int) *blitz.Runtime {
	tb.Helper()
	rt, err := blitz.New(blitz.Config{Workers: 2})
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, rt.Shutdown(context.Background())) })
	spawnIdle(tb, rt, n)
	return rt
}

// stateBudget is what one state request may cost the service at 10^5
// tasks: the CPU time of the handler, and that of the whole process with
// the garbage collection of what the state allocates (without the race
// detector, which slows the code several times), and the size of its
// answer.
const (
	stateBudget      = 50 * time.Millisecond
	stateBudgetBytes = 200 << 10
)

// TestConsoleStateAt1e5Tasks: with 10^5 live tasks a state, whatever its
// order, filter or page, is under 200 KB, holds the summary of them all
// and one page, and costs the handler under 50 ms of CPU, and the process
// as much with the garbage collection (the least of several requests, and
// of several batches of requests, without the race detector; see
// stateCost).
func TestConsoleStateAt1e5Tasks(t *testing.T) {
	n := scaleTasks()
	rt := newScaleRuntime(t, n)
	h := inspect.Console(rt)
	for _, query := range []string{
		"",
		"sort=for&dir=desc",
		"sort=waiting&limit=1000",
		"sort=name&dir=desc&filter=TASK-99&offset=50",
		fmt.Sprintf("sort=age&offset=%d&limit=1000&task=%d", n/2, n/3),
	} {
		rec := serveState(h, query)
		st := decodeState(t, rec)
		assert.Less(t, rec.Body.Len(), stateBudgetBytes, "%q: %d bytes", query, rec.Body.Len())
		assert.EqualValues(t, n, st.Summary.Live, query)
		assert.Equal(t, n, st.Summary.Listed, query)
		assert.Equal(t, n, st.Summary.States["idle"], query)
		require.Len(t, st.Summary.Waits, len(idleKinds), query)
		for _, w := range st.Summary.Waits {
			assert.InDelta(t, n/3, w.Tasks, 1, "%q: %s", query, w.Kind)
		}
		t.Logf("%q: %d bytes, %d rows of %d matching, built in %v", query, rec.Body.Len(), len(st.Tasks), st.Matching, time.Duration(st.TookNs))
	}
	st := decodeState(t, serveState(h, "sort=name&dir=desc&filter=TASK-99&offset=50"))
	// task-99 and task-990..999: 11 names of 1000, each a thousandth.
	assert.Equal(t, 11*n/1000, st.Matching)
	assert.Len(t, st.Tasks, min(100, st.Matching-50))

	check := !raceEnabled && !testing.Short()
	batches := 2
	if check {
		batches = 6
	}
	c := stateCost(t, rt, h, batches, 5)
	t.Logf("a default state at %d tasks, the least of %d: %v of the handler's CPU (a bare snapshot of the tasks into the same memory, Runtime.SnapshotTasks: %v), %v of wall time; "+
		"the process's CPU per state, with the garbage collection, the least of %d batches of 5: %v", n, 5*batches, c.cpu, c.snapshotCPU, c.wall, batches, c.process)
	if !check {
		return
	}
	if c.cpu > 0 {
		assert.Less(t, c.cpu, stateBudget, "the handler's CPU time for a state at %d tasks", n)
		assert.Less(t, c.process, stateBudget, "the process's CPU time per state at %d tasks, with the garbage collection", n)
	} else {
		assert.Less(t, c.wall, stateBudget, "the time to serve a state at %d tasks", n)
	}
}

// costs are what stateCost measures.
type costs struct {
	// cpu is the least CPU time of the handler's thread for a state, and
	// snapshotCPU of a bare Runtime.SnapshotTasks into a snapshot reused;
	// 0 where the platform does not tell.
	cpu, snapshotCPU time.Duration
	// wall is the least wall time of a state.
	wall time.Duration
	// process is the least, over the batches, of the CPU time of the
	// process per state of the batch, with the garbage collection its
	// allocations cause on other threads; 0 where the platform does not
	// tell.
	process time.Duration
}

// stateCost serves batches of perBatch default states with h, on a
// goroutine locked to its thread, then as many bare snapshots of rt's tasks
// into one snapshot, and returns their least costs. The wall time of a
// request on a loaded machine says little, which the thread's CPU time,
// and the least of several, leave out; the process's CPU time, which
// counts the garbage collection a state causes on other threads whenever
// it runs, is taken per batch.
func stateCost(t testing.TB, rt *blitz.Runtime, h http.Handler, batches, perBatch int) costs {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c := costs{cpu: time.Hour, snapshotCPU: time.Hour, wall: time.Hour, process: time.Hour}
	_, ok := threadCPU()
	for range batches {
		p0, _ := processCPU()
		for range perBatch {
			c0, _ := threadCPU()
			start := time.Now()
			rec := serveState(h, "")
			wall := time.Since(start)
			c1, _ := threadCPU()
			require.Equal(t, http.StatusOK, rec.Code)
			c.wall, c.cpu = min(c.wall, wall), min(c.cpu, c1-c0)
		}
		p1, _ := processCPU()
		c.process = min(c.process, (p1-p0)/time.Duration(perBatch))
	}
	var snap blitz.TaskSnapshot
	for range batches * perBatch {
		c0, _ := threadCPU()
		rt.SnapshotTasks(&snap)
		c1, _ := threadCPU()
		c.snapshotCPU = min(c.snapshotCPU, c1-c0)
	}
	if !ok {
		c.cpu, c.snapshotCPU, c.process = 0, 0, 0
	}
	return c
}

// BenchmarkConsoleState serves console states at 10^5 live tasks: the
// default view, the longest idle first, a filter, a deep page, and, for
// comparison, the bare snapshot of the tasks that every state starts with
// (Runtime.SnapshotTasks into the same snapshot) and the snapshot as
// Runtime.Tasks returns it (a TaskInfo per task). It reports the bytes of
// each answer, the CPU time of the handler's thread per state and that of
// the process (with the garbage collection of what the states allocate).
func BenchmarkConsoleState(b *testing.B) {
	rt := newScaleRuntime(b, 100_000)
	h := inspect.Console(rt)
	measure := func(b *testing.B, op func()) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		b.ReportAllocs()
		p0, ok := processCPU()
		t0, _ := threadCPU()
		for b.Loop() {
			op()
		}
		if t1, _ := threadCPU(); ok {
			p1, _ := processCPU()
			b.ReportMetric(float64(t1-t0)/float64(b.N), "handler-cpu-ns/op")
			b.ReportMetric(float64(p1-p0)/float64(b.N), "process-cpu-ns/op")
		}
	}
	for _, bc := range []struct{ name, query string }{
		{"default", ""},
		{"idle-longest", "sort=for&dir=desc"},
		{"filter", "filter=task-42&sort=name"},
		{"deep-page", "sort=waiting&offset=50000&limit=1000"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var bytes int
			measure(b, func() {
				rec := serveState(h, bc.query)
				if rec.Code != http.StatusOK {
					b.Fatalf("%d: %s", rec.Code, rec.Body.String())
				}
				bytes = rec.Body.Len()
			})
			b.ReportMetric(float64(bytes), "resp-bytes")
		})
	}
	b.Run("snapshot", func(b *testing.B) {
		var snap blitz.TaskSnapshot
		measure(b, func() { rt.SnapshotTasks(&snap) })
	})
	b.Run("tasks", func(b *testing.B) {
		measure(b, func() { rt.Tasks() })
	})
}

// driverPage loads the console in a frame and plays a user on it, in
// virtual time: it notes what the console shows after loading, then in
// one go sorts by polls, types a filter and sorts by id twice (descending),
// later goes to the next page, then clicks the page's first task; at the
// end it writes what the console shows, as JSON, in #result.
const driverPage = `<!doctype html>
<html><body>
<iframe id="console" src="/console/" width="1400" height="900"></iframe>
<pre id="result"></pre>
<script>
"use strict";
const result = {};
const doc = () => document.getElementById("console").contentDocument;
const text = id => doc().getElementById(id).textContent;
const header = key => doc().querySelector('th[data-key="' + key + '"]');
function look() {
  return {
    count: text("taskcount"), pager: text("pager"), detail: text("detail"),
    hash: doc().defaultView.location.hash,
    rows: [...doc().querySelectorAll("#tasks tbody tr")].map(tr => ({
      id: tr.dataset.id, selected: tr.className === "selected",
      cells: [...tr.children].map(td => td.textContent),
    })),
  };
}
setTimeout(() => {
  result.loaded = look();
  header("polls").click();
  const filter = doc().getElementById("filter");
  filter.value = "TASK-42";
  filter.dispatchEvent(new Event("input"));
  header("id").click();
  header("id").click();
}, 1500);
setTimeout(() => doc().getElementById("next").click(), 3000);
setTimeout(() => doc().querySelector("#tasks tbody tr").click(), 4500);
setTimeout(() => {
  result.end = look();
  document.getElementById("result").textContent = JSON.stringify(result);
}, 6000);
</script>
</body></html>
`

// driverView is what driverPage notes of the console.
type driverView struct {
	Count, Pager, Detail, Hash string
	Rows                       []struct {
		ID       string
		Selected bool
		Cells    []string
	}
}

// TestConsoleInBrowserAt1e5Tasks loads the console in headless Chromium
// with 10^5 live tasks (10^4 with -short) and plays a user on it (see
// driverPage): the page shows the count of tasks and a page of them, then
// the page of the filter, order and offset chosen, and the stanza of the
// task clicked; all along, the server never has two of the page's state
// requests in flight, though the user acts while one is (each takes 20 ms
// more, to widen the window).
func TestConsoleInBrowserAt1e5Tasks(t *testing.T) {
	chromium := findChromium(t)
	n := scaleTasks()
	rt := newScaleRuntime(t, n)
	console := http.StripPrefix("/console", inspect.Console(rt))
	var mu sync.Mutex
	var inFlight, most int
	var queries []string
	mux := http.NewServeMux()
	mux.Handle("/console/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/state") {
			console.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
		defer func() {
			mu.Lock()
			inFlight--
			mu.Unlock()
		}()
		time.Sleep(20 * time.Millisecond)
		console.ServeHTTP(w, r)
	}))
	mux.HandleFunc("/driver.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, driverPage)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	dom := dumpDOM(t, chromium, srv.URL+"/driver.html", 7*time.Second)
	mu.Lock()
	t.Logf("state requests: %q", queries)
	assert.Equal(t, 1, most, "state requests in flight at once")
	assert.GreaterOrEqual(t, len(queries), 4, "state requests")
	mu.Unlock()
	m := regexp.MustCompile(`(?s)<pre id="result">(.*?)</pre>`).FindStringSubmatch(dom)
	require.NotNil(t, m, "no result in the driver's page:\n%s", dom)
	var result struct{ Loaded, End driverView }
	require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(m[1])), &result), "result: %s", m[1])

	loaded := result.Loaded
	assert.Contains(t, loaded.Count, fmt.Sprintf("%d live tasks, %d listed: %d idle", n, n, n))
	assert.Equal(t, fmt.Sprintf("1–100 of %d", n), loaded.Pager)
	require.Len(t, loaded.Rows, 100)
	for i, r := range loaded.Rows {
		require.Len(t, r.Cells, 8)
		assert.Equal(t, r.ID, r.Cells[0])
		assert.Equal(t, "idle", r.Cells[2], "row %d", i)
		assert.True(t, strings.HasPrefix(r.Cells[6], "Console."), "row %d waits on %q", i, r.Cells[6])
		assert.NotEmpty(t, r.Cells[7], "row %d: idle for", i)
	}

	// task-42 and task-420..429: 11 names of 1000; the second page of them.
	end := result.End
	matching := 11 * n / 1000
	assert.Contains(t, end.Count, fmt.Sprintf(`%d match "TASK-42"`, matching))
	assert.Equal(t, fmt.Sprintf("101–%d of %d", min(200, matching), matching), end.Pager)
	require.Len(t, end.Rows, min(100, matching-100))
	var last uint64 = 1<<64 - 1
	for i, r := range end.Rows {
		id, err := strconv.ParseUint(r.ID, 10, 64)
		require.NoError(t, err)
		assert.Less(t, id, last, "row %d: ids descending", i)
		last = id
		assert.Contains(t, r.Cells[1], "task-42", "row %d", i)
		assert.Equal(t, i == 0, r.Selected, "row %d selected", i)
	}
	first := end.Rows[0]
	assert.True(t, strings.HasPrefix(end.Detail, fmt.Sprintf("task %s %q [idle", first.ID, first.Cells[1])), "detail: %q", end.Detail)
	assert.Equal(t, fmt.Sprintf("#dir=desc&filter=TASK-42&offset=100&task=%s", first.ID), end.Hash)
}
