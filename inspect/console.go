package inspect

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/blitz-go/blitz"
)

//go:embed console.html
var consolePage []byte

// consoleState is the answer to a state request; see the package doc,
// "Console protocol".
type consoleState struct {
	Time    time.Time     `json:"time"`
	Metrics blitz.Metrics `json:"metrics"`
	Summary taskSummary   `json:"summary"`
	// Matching counts the listed tasks whose name matches the filter.
	Matching int `json:"matching"`
	// Offset is the page's offset in the order of the matching tasks, and
	// Tasks the page.
	Offset int       `json:"offset"`
	Tasks  []taskRow `json:"tasks"`
	// Selected is the requested task's stanza; absent when none was asked
	// for or the task is no longer listed.
	Selected *selectedTask `json:"selected,omitempty"`
	// Alerts are the deadlocks, the tasks' warnings and the latest failed
	// tasks, one line each, the worst first (at most maxAlerts).
	Alerts []string `json:"alerts,omitempty"`
	// TookNs is how long the handler took to build the state (the
	// snapshot of the tasks and the page), before encoding it.
	TookNs int64 `json:"tookNs"`
}

// Console returns a handler serving a live view of rt, in the spirit of
// tokio-console but in a browser and with no JavaScript framework: a page
// that refreshes itself and shows the workers (busy share, polls, polls
// per second, parks, steals, local queues), the runtime's totals, the
// polls that have not yielded for too long, the histograms of poll
// durations, scheduling delays and timer lateness, the I/O operations by
// kind, and the live tasks: a summary (counts by state, the commonest
// waits) and one page of the table (id, name, state, age, polls, poll
// time, wait, idle or running for), sorted by any column and filtered by
// name, a click on a row showing the task's stanza. Mount it under a path
// that ends in a slash:
//
//	mux.Handle("/console/", http.StripPrefix("/console", inspect.Console(rt)))
//
// The page is "/" below the mount point and its data "/state", JSON; the
// parameters of "/state" choose the page of tasks (sort, dir, filter,
// offset, limit) and the selected task (task), as the package doc's
// "Console protocol" tells; a bad one is answered 400 with the reason.
// Anything else is 404. It answers GET and HEAD. The page has at most one
// request in flight and asks again a second after each answer, so an open
// console costs the service at most one state a second, more only while
// its user changes the view.
func Console(rt *blitz.Runtime) http.Handler {
	buf := new(stateBuffers)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		switch strings.TrimPrefix(r.URL.Path, "/") {
		case "":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write(consolePage)
		case "state":
			serveState(w, r, rt, buf)
		default:
			http.NotFound(w, r)
		}
	})
}

// stateBuffers is the memory a console's states are built in, kept from
// one state to the next, so that a state at 10^5 tasks allocates little
// more than its answer: the snapshot of the tasks (about 80 bytes a task)
// and the page's sort entries (24 bytes a matching task). mu guards it:
// the states of one console are built one at a time.
type stateBuffers struct {
	mu   sync.Mutex
	snap blitz.TaskSnapshot
	page pageScratch
}

// serveState answers a state request, building it in buf. Only Console's
// handler calls it.
func serveState(w http.ResponseWriter, r *http.Request, rt *blitz.Runtime, buf *stateBuffers) {
	start := time.Now()
	q, err := parseQuery(r.URL.Query())
	if err != nil {
		http.Error(w, "inspect: "+err.Error(), http.StatusBadRequest)
		return
	}
	buf.mu.Lock()
	rt.SnapshotTasks(&buf.snap)
	p := pageTasks(&buf.snap, buf.snap.Live(), &q, &buf.page)
	alerts := alerts(rt, &buf.snap)
	buf.mu.Unlock()
	st := consoleState{
		Time: start, Metrics: rt.Metrics(),
		Summary: p.summary, Matching: p.matching, Offset: q.offset, Tasks: p.rows, Selected: p.selected,
		Alerts: alerts,
	}
	st.TookNs = time.Since(start).Nanoseconds()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(st)
}

// maxAlerts bounds the alerts of a state.
const maxAlerts = 50

// alerts returns the lines of the state's alerts: each deadlock, each
// warning of the snapshot (blitz.TaskSnapshot.Warnings), then rt's latest
// failed tasks, newest first.
func alerts(rt *blitz.Runtime, snap *blitz.TaskSnapshot) []string {
	var out []string
	add := func(format string, args ...any) bool {
		if len(out) == maxAlerts {
			return false
		}
		out = append(out, fmt.Sprintf(format, args...))
		return true
	}
	for _, cycle := range snap.Deadlocks() {
		parts := make([]string, len(cycle))
		for i, t := range cycle {
			parts[i] = fmt.Sprintf("task %d%s waits on %s", t.ID, quotedName(t.Name), t.Wait)
			if t.AwaitAt != "" {
				parts[i] += " at " + t.AwaitAt
			}
		}
		if !add("deadlock: %s", strings.Join(parts, "; ")) {
			return out
		}
	}
	for _, w := range snap.Warnings() {
		if !add("%s: task %d%s", w.Kind, w.Task.ID, quotedName(w.Task.Name)) {
			return out
		}
	}
	failed := rt.FailedTasks()
	for i := len(failed) - 1; i >= 0 && i >= len(failed)-10; i-- {
		f := failed[i]
		if !add("failed %s ago: task %d%s: %v", time.Since(f.Ended).Round(time.Millisecond), f.ID, quotedName(f.Name), f.Err) {
			return out
		}
	}
	return out
}

// quotedName is ` "name"`, or "" for no name.
func quotedName(name string) string {
	if name == "" {
		return ""
	}
	return fmt.Sprintf(" %q", name)
}
