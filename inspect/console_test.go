package inspect_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	goruntime "runtime"
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
)

// probe waits for another task's JoinHandle, then sleeps for an hour: the
// console sees its wait change when the other task is cancelled.
type probe struct {
	other blitz.JoinHandle[struct{}]
	sleep future.Future[struct{}]
}

func (p *probe) Poll(cx *future.Context) (struct{}, bool) {
	if p.sleep == nil {
		if _, ok := p.other.Poll(cx); !ok {
			return struct{}{}, false
		}
		p.sleep = blitz.Sleep(time.Hour)
	}
	return p.sleep.Poll(cx)
}

func (p *probe) Cancel() {
	if p.sleep != nil {
		future.Cancel(p.sleep)
	}
}

// startProbe spawns a task named name that waits on a sleeping task's
// JoinHandle, and returns a function that cancels the sleeper, which moves
// the probe on to a sleep of its own.
func startProbe(t *testing.T, rt *blitz.Runtime, name string) (release func()) {
	t.Helper()
	sleeper := blitz.SpawnOn(rt.Handle(), blitz.Named(name+"-sleeper", blitz.Sleep(time.Hour)))
	blitz.SpawnOn(rt.Handle(), blitz.Named(name, future.Future[struct{}](&probe{other: sleeper})))
	return sleeper.Cancel
}

// state fetches the console's state as a generic JSON document.
func state(t *testing.T, url string) map[string]any {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
	var st map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&st))
	return st
}

// taskNamed returns the task of the state's list named name, or nil.
func taskNamed(st map[string]any, name string) map[string]any {
	for _, x := range st["tasks"].([]any) {
		if task := x.(map[string]any); task["name"] == name {
			return task
		}
	}
	return nil
}

// The console serves its page and its state (the metrics and the live
// tasks, with their names and waits, and the stanza of the task asked
// for) below its mount point; other paths are 404 and other methods 405.
func TestConsoleServesPageAndState(t *testing.T) {
	rt := newRuntime(t)
	release := startProbe(t, rt, "console-probe")
	mux := http.NewServeMux()
	mux.Handle("/console/", http.StripPrefix("/console", inspect.Console(rt)))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	res, err := http.Get(srv.URL + "/console/")
	require.NoError(t, err)
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", res.Header.Get("Content-Type"))
	assert.Contains(t, string(page), "<title>blitz console</title>")

	var probe map[string]any
	require.Eventually(t, func() bool {
		probe = taskNamed(state(t, srv.URL+"/console/state"), "console-probe")
		return probe != nil && strings.HasPrefix(fmt.Sprint(probe["waiting"]), "JoinHandle")
	}, 10*time.Second, 10*time.Millisecond, "probe: %v", probe)
	assert.Equal(t, "idle", probe["state"])
	assert.NotContains(t, probe, "dump", "rows carry no stanza")
	st := state(t, fmt.Sprintf("%s/console/state?task=%v", srv.URL, probe["id"]))
	assert.Len(t, st["metrics"].(map[string]any)["Workers"], 2)
	selected, _ := st["selected"].(map[string]any)
	require.NotNil(t, selected, "the selected task's stanza: %v", st)
	assert.Contains(t, selected["stanza"], `"console-probe"`)
	assert.Contains(t, selected["stanza"], "waiting on JoinHandle")

	release()
	require.Eventually(t, func() bool {
		probe = taskNamed(state(t, srv.URL+"/console/state"), "console-probe")
		return probe != nil && strings.HasPrefix(fmt.Sprint(probe["waiting"]), "Sleep")
	}, 10*time.Second, 10*time.Millisecond, "probe: %v", probe)

	res, err = http.Get(srv.URL + "/console/nothing")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	res, err = http.Post(srv.URL+"/console/state", "text/plain", nil)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
}

// findChromium returns a headless-capable Chromium, or skips the test
// (fails it on Linux when BLITZ_REQUIRE_CHROMIUM=1, as CI sets after
// installing it; the Windows test binaries run under Wine on that machine
// and find none).
func findChromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("BLITZ_REQUIRE_CHROMIUM") == "1" && goruntime.GOOS == "linux" {
		t.Fatal("no chromium on PATH, and BLITZ_REQUIRE_CHROMIUM=1")
	}
	t.Skip("no chromium on PATH (go tool mage test installs it with BLITZ_INSTALL_CHROMIUM=1)")
	return ""
}

// dumpDOM loads url in headless Chromium, lets the page run for budget of
// virtual time (its timers fire, its fetches complete) and returns the
// DOM it ends with.
func dumpDOM(t *testing.T, chromium, url string, budget time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-dev-shm-usage", "--no-first-run", "--user-data-dir="+t.TempDir(),
		fmt.Sprintf("--virtual-time-budget=%d", budget.Milliseconds()), "--dump-dom", url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "chromium: %s", stderr.String())
	return string(out)
}

// rowOf returns the cells of the tasks table's row that holds name.
func rowOf(dom, name string) []string {
	for _, row := range regexp.MustCompile(`(?s)<tr data-id="\d+"[^>]*>(.*?)</tr>`).FindAllStringSubmatch(dom, -1) {
		var cells []string
		for _, c := range regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(row[1], -1) {
			cells = append(cells, c[1])
		}
		if len(cells) > 1 && cells[1] == name {
			return cells
		}
	}
	return nil
}

// TestConsoleInBrowser loads the console in headless Chromium: the page
// shows the task the test spawned, by its name, and, without a reload,
// shows its new wait after the task moved on (the test moves it after the
// page's first fetch of the state).
func TestConsoleInBrowser(t *testing.T) {
	chromium := findChromium(t)
	rt := newRuntime(t)
	release := startProbe(t, rt, "browser-probe")
	require.Eventually(t, func() bool {
		tasks, _ := rt.Tasks()
		for _, task := range tasks {
			if task.Name == "browser-probe" && task.Wait != 0 {
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond)

	console := http.StripPrefix("/console", inspect.Console(rt))
	var mu sync.Mutex
	var fetches int
	var first string // the state the page got first
	mux := http.NewServeMux()
	mux.Handle("/console/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/state") {
			console.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		console.ServeHTTP(rec, r)
		mu.Lock()
		fetches++
		if fetches == 1 {
			first = rec.Body.String()
			release() // the probe moves on after the page's first look
		}
		mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	dom := dumpDOM(t, chromium, srv.URL+"/console/", 6*time.Second)
	mu.Lock()
	n, firstState := fetches, first
	mu.Unlock()
	require.GreaterOrEqual(t, n, 2, "the page fetched its state %d times", n)
	require.Contains(t, firstState, `"waiting":"JoinHandle`, "the first state the page got")
	cells := rowOf(dom, "browser-probe")
	require.NotNil(t, cells, "no row for the task in the page:\n%s", dom)
	assert.Equal(t, "idle", cells[2], "state column")
	assert.True(t, strings.HasPrefix(cells[6], "Sleep"), "the page did not update the task's wait: %q", cells[6])
	assert.Contains(t, dom, "live tasks")
	// The runtime is idle but for the probe's sleep: every worker's busy
	// share, from the growth of its busy and parked times between two
	// states, is small (it showed 100 % when the park in progress was not
	// counted).
	workers := workerRows(dom)
	require.NotEmpty(t, workers, "no worker rows in the page:\n%s", dom)
	for _, w := range workers {
		busy, err := strconv.Atoi(strings.TrimSuffix(w[1], "%"))
		require.NoError(t, err, "busy cell %q of worker %s", w[1], w[0])
		assert.Less(t, busy, 50, "an idle worker %s shows %d%% busy", w[0], busy)
	}
}

// workerRows returns the cells of the rows of the page's workers table.
func workerRows(dom string) [][]string {
	table := regexp.MustCompile(`(?s)<table id="workers">(.*?)</table>`).FindStringSubmatch(dom)
	if table == nil {
		return nil
	}
	var rows [][]string
	for _, row := range regexp.MustCompile(`(?s)<tr>(.*?)</tr>`).FindAllStringSubmatch(table[1], -1) {
		var cells []string
		for _, c := range regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(row[1], -1) {
			cells = append(cells, c[1])
		}
		if len(cells) > 1 {
			rows = append(rows, cells)
		}
	}
	return rows
}

// TestConsoleShowsALongPollWhileItRuns: a task blocking in its first poll
// is listed, as running, with how long it has run, and the page warns that
// it has not yielded, while it still blocks.
func TestConsoleShowsALongPollWhileItRuns(t *testing.T) {
	chromium := findChromium(t)
	rt, err := blitz.New(blitz.Config{Workers: 2, PollTiming: true, SlowPoll: 5 * time.Millisecond})
	require.NoError(t, err)
	release := make(chan struct{})
	h := blitz.SpawnOn(rt.Handle(), blitz.Named("blocker", future.PollFn(func(*future.Context) (int, bool) {
		<-release
		return 0, true
	})))
	defer func() {
		close(release)
		_, _ = h.Wait(context.Background())
		require.NoError(t, rt.Shutdown(context.Background()))
	}()
	require.Eventually(t, func() bool { return len(rt.Metrics().LongPolls) == 1 }, 10*time.Second, time.Millisecond)
	srv := httptest.NewServer(http.StripPrefix("/console", inspect.Console(rt)))
	defer srv.Close()
	dom := dumpDOM(t, chromium, srv.URL+"/console/", 3*time.Second)
	cells := rowOf(dom, "blocker")
	require.NotNil(t, cells, "no row for the blocking task (in its first poll) in the page:\n%s", dom)
	assert.Equal(t, "running", cells[2])
	require.Len(t, cells, 8)
	assert.NotEmpty(t, cells[7], "running for")
	assert.Regexp(t, `worker \d: task \d+ "blocker" has not yielded for \S+`, dom)
}

// TestConsoleStateAlerts: the state carries the tasks' warnings and the
// latest failed tasks, one line each.
func TestConsoleStateAlerts(t *testing.T) {
	rt := newRuntime(t)
	h := blitz.SpawnOn(rt.Handle(), blitz.Named("forgetful", future.PollFn(func(*future.Context) (int, bool) {
		return 0, false // takes no waker: nothing will wake it
	})))
	defer h.Cancel()
	_, _ = blitz.SpawnOn(rt.Handle(), blitz.Named("victim", future.PollFn(func(*future.Context) (int, bool) {
		panic("boom")
	}))).Wait(context.Background())
	srv := httptest.NewServer(http.StripPrefix("/console", inspect.Console(rt)))
	defer srv.Close()
	var alerts []any
	require.Eventually(t, func() bool {
		alerts, _ = state(t, srv.URL+"/console/state")["alerts"].([]any)
		return len(alerts) >= 2
	}, 10*time.Second, 10*time.Millisecond)
	var text []string
	for _, a := range alerts {
		text = append(text, fmt.Sprint(a))
	}
	all := strings.Join(text, "\n")
	assert.Regexp(t, `lost waker: task \d+ "forgetful"`, all)
	assert.Regexp(t, `failed \S+ ago: task \d+ "victim": .*boom`, all)
}
