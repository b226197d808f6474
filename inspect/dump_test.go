package inspect_test

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/inspect"
)

// TestDumpHandler: the handler serves the grouped dump, and one stanza per
// task with ?debug=2.
func TestDumpHandler(t *testing.T) {
	rt := newRuntime(t)
	var hs []blitz.JoinHandle[struct{}]
	for range 2 {
		hs = append(hs, blitz.SpawnOn(rt.Handle(), blitz.Named("napper", blitz.Sleep(time.Hour))))
	}
	require.Eventually(t, func() bool {
		tasks, _ := rt.Tasks()
		idle := 0
		for _, task := range tasks {
			if task.Name == "napper" && task.State == blitz.TaskIdle && task.Wait != 0 {
				idle++
			}
		}
		return idle == 2
	}, 10*time.Second, time.Millisecond)
	srv := inspect.DumpHandler(rt)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/blitz/tasks", nil))
	require.Equal(t, 200, rec.Code)
	require.Equal(t, "text/plain; charset=utf-8", rec.Header().Get("Content-Type"))
	require.Contains(t, rec.Body.String(), "2 tasks: idle, waiting on Sleep, \"napper\"")
	rec = httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/blitz/tasks?debug=2", nil))
	for _, h := range hs {
		require.Contains(t, rec.Body.String(), fmt.Sprintf("\ntask %d \"napper\": idle ", h.ID()))
		h.Cancel()
	}
}
