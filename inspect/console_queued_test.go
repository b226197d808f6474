package inspect_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/inspect"
)

// TestConsoleListsTheTasksQueuedBehindALongPoll: on a runtime whose one
// worker is held by a poll that does not return, the tasks spawned behind
// it wait for their first poll; the console's state lists and counts them
// as queued, every live task listed, a filter finds them, the stanza of
// one says it waits for its first poll, and the dump handler groups them.
func TestConsoleListsTheTasksQueuedBehindALongPoll(t *testing.T) {
	const n = 30
	rt, err := blitz.New(blitz.Config{Workers: 1})
	require.NoError(t, err)
	release := make(chan struct{})
	blocking := make(chan struct{})
	var polled atomic.Bool
	blocker := blitz.SpawnOn(rt.Handle(), blitz.Named("blocker", future.PollFn(func(cx *future.Context) (int, bool) {
		if !polled.Swap(true) { // pending once, so that it is listed
			cx.Waker().Wake()
			return 0, false
		}
		close(blocking)
		<-release
		return 0, true
	})))
	<-blocking
	var hs []blitz.JoinHandle[int]
	for i := range n {
		hs = append(hs, blitz.SpawnOn(rt.Handle(), blitz.Named("behind", future.Ready(i))))
	}
	defer func() {
		close(release)
		for _, h := range append(hs, blocker) {
			_, err := h.Wait(context.Background())
			assert.NoError(t, err)
		}
		require.NoError(t, rt.Shutdown(context.Background()))
	}()

	tasks, live := rt.Tasks()
	require.EqualValues(t, n+1, live)
	require.Len(t, tasks, n+1)
	require.Equal(t, rt.Metrics().Tasks.Live, live)

	h := inspect.Console(rt)
	st := decodeState(t, serveState(h, fmt.Sprintf("filter=behind&sort=id&task=%d", hs[3].ID())))
	assert.EqualValues(t, n+1, st.Summary.Live)
	assert.Equal(t, n+1, st.Summary.Listed)
	assert.Equal(t, map[string]int{"idle": 0, "scheduled": 0, "running": 1, "complete": 0, "queued": n}, st.Summary.States)
	assert.Equal(t, n, st.Matching)
	require.Len(t, st.Tasks, n)
	for i, row := range st.Tasks {
		assert.Equal(t, hs[i].ID(), row.ID)
		assert.Equal(t, "queued", row.State)
		assert.Equal(t, "behind", row.Name)
		assert.Zero(t, row.Polls)
	}
	require.NotNil(t, st.Selected)
	assert.Contains(t, st.Selected.Stanza, "queued")
	assert.Contains(t, st.Selected.Stanza, "waiting in a queue for its first poll")

	rec := httptest.NewRecorder()
	inspect.DumpHandler(rt).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	body, _ := io.ReadAll(rec.Body)
	dump := string(body)
	assert.Contains(t, dump, fmt.Sprintf("blitz tasks: %d live, %d listed\n", n+1, n+1))
	assert.Contains(t, dump, fmt.Sprintf("%d tasks: queued, \"behind\"\n", n))
	assert.True(t, strings.Contains(dump, "1 task: running, \"blocker\"\n"), dump)
}
