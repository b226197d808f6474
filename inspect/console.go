package inspect

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/blitz-go/blitz"
)

//go:embed console.html
var consolePage []byte

// consoleState is what the console page fetches from "state" every second.
type consoleState struct {
	Time    time.Time     `json:"time"`
	Metrics blitz.Metrics `json:"metrics"`
	Tasks   []taskRow     `json:"tasks"`
}

// taskRow is one live task in the console's table.
type taskRow struct {
	ID      uint64 `json:"id"`
	Name    string `json:"name,omitempty"`
	State   string `json:"state"`
	AgeNs   int64  `json:"ageNs"`
	Polls   uint64 `json:"polls"`
	PollNs  int64  `json:"pollNs"`
	Waiting string `json:"waiting,omitempty"`
	// ForNs is how long an idle task has waited, or a running task's poll
	// has run (blitz.TaskInfo.SinceLastPoll).
	ForNs int64 `json:"forNs"`
	// Dump is the task's entry in the task dump, shown when the task is
	// selected.
	Dump string `json:"dump"`
}

// Console returns a handler serving a live view of rt, in the spirit of
// tokio-console but in a browser and with no JavaScript framework: a page
// that refreshes itself every second and shows the workers (polls, polls
// per second, parks, steals, local queues), the runtime's totals, the live
// tasks (sortable by id, name, state, age, polls and poll time, filtered
// by name; a click shows the task's dump entry) and the I/O operations by
// kind. Mount it under a path that ends in a slash:
//
//	mux.Handle("/console/", http.StripPrefix("/console", inspect.Console(rt)))
//
// The page is "/" and its data "/state" (JSON) below the mount point;
// anything else is 404. It answers GET and HEAD.
func Console(rt *blitz.Runtime) http.Handler {
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
			st := consoleState{Time: time.Now(), Metrics: rt.Metrics(), Tasks: taskRows(rt)}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			_ = json.NewEncoder(w).Encode(st)
		default:
			http.NotFound(w, r)
		}
	})
}
