package inspect_test

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/inspect"
)

// stateOrder is the order of a state's rows by sort key (with the
// descending flag), ties by id, as the package doc's "Console protocol"
// states it; the waits, "Kind N", sort by kind name, then number.
func stateOrder(key string, desc bool) func(a, b rowAnswer) int {
	states := map[string]int{"idle": 0, "scheduled": 1, "running": 2, "complete": 3}
	by := func(a, b rowAnswer) int {
		switch key {
		case "id":
			return cmp.Compare(a.ID, b.ID)
		case "name":
			return strings.Compare(a.Name, b.Name)
		case "state":
			return cmp.Compare(states[a.State], states[b.State])
		case "age":
			return cmp.Compare(a.AgeNs, b.AgeNs)
		case "polls":
			return cmp.Compare(a.Polls, b.Polls)
		case "poll":
			return cmp.Compare(a.PollNs, b.PollNs)
		case "waiting":
			ak, an := splitWait(a.Waiting)
			bk, bn := splitWait(b.Waiting)
			return cmp.Or(strings.Compare(ak, bk), cmp.Compare(an, bn))
		case "for":
			return cmp.Compare(a.ForNs, b.ForNs)
		}
		panic("stateOrder: no key " + key)
	}
	return func(a, b rowAnswer) int {
		c := by(a, b)
		if desc {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a.ID, b.ID))
	}
}

// TestConsoleStateParameters: a state's page is sorted by each column in
// both directions (ties by id), filtered by name ignoring case, and paged
// without overlap or gap; the task asked for comes with its stanza; a bad
// parameter is answered 400 with its reason.
func TestConsoleStateParameters(t *testing.T) {
	const n = 120
	rt, err := blitz.New(blitz.Config{Workers: 2, PollTiming: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(context.Background())) })
	spawnIdle(t, rt, n)
	h := inspect.Console(rt)

	st := decodeState(t, serveState(h, ""))
	assert.EqualValues(t, n, st.Summary.Live)
	assert.Equal(t, n, st.Summary.Listed)
	assert.Equal(t, map[string]int{"idle": n, "scheduled": 0, "running": 0, "complete": 0, "queued": 0}, st.Summary.States)
	require.Len(t, st.Summary.Waits, 3)
	for _, w := range st.Summary.Waits {
		assert.Equal(t, n/3, w.Tasks, w.Kind)
		assert.True(t, strings.HasPrefix(w.Kind, "Console."), w.Kind)
	}
	assert.Equal(t, n, st.Matching)
	assert.Equal(t, 0, st.Offset)
	require.Len(t, st.Tasks, 100, "the default page")
	assert.Nil(t, st.Selected)
	assert.IsIncreasing(t, ids(st.Tasks))

	t.Run("sort", func(t *testing.T) {
		for _, key := range []string{"id", "name", "state", "age", "polls", "poll", "waiting", "for"} {
			for _, dir := range []string{"asc", "desc"} {
				st := decodeState(t, serveState(h, "limit=1000&sort="+key+"&dir="+dir))
				require.Len(t, st.Tasks, n, "%s %s", key, dir)
				order := stateOrder(key, dir == "desc")
				for i := 1; i < len(st.Tasks); i++ {
					require.Negative(t, order(st.Tasks[i-1], st.Tasks[i]), "sort=%s dir=%s: row %d %+v before row %d %+v",
						key, dir, i-1, st.Tasks[i-1], i, st.Tasks[i])
				}
			}
		}
	})

	t.Run("filter", func(t *testing.T) {
		// task-1 and task-10..19, and task-100..119.
		for _, filter := range []string{"task-1", "TASK-1", "Task-1"} {
			st := decodeState(t, serveState(h, "sort=name&filter="+filter))
			assert.Equal(t, 31, st.Matching, filter)
			require.Len(t, st.Tasks, 31, filter)
			for _, r := range st.Tasks {
				assert.Contains(t, r.Name, "task-1", filter)
			}
			assert.EqualValues(t, n, st.Summary.Live, "the summary counts every task")
		}
		st := decodeState(t, serveState(h, "filter=no-such-task"))
		assert.Zero(t, st.Matching)
		assert.Empty(t, st.Tasks)
		assert.NotNil(t, st.Tasks, "an empty page is [], not null")
	})

	t.Run("pages", func(t *testing.T) {
		all := decodeState(t, serveState(h, "sort=polls&dir=desc&limit=1000")).Tasks
		var paged []uint64
		for offset := 0; offset < n+7; offset += 7 {
			st := decodeState(t, serveState(h, fmt.Sprintf("sort=polls&dir=desc&offset=%d&limit=7", offset)))
			assert.Equal(t, offset, st.Offset)
			assert.Equal(t, n, st.Matching)
			assert.Len(t, st.Tasks, max(0, min(7, n-offset)), "offset %d", offset)
			paged = append(paged, ids(st.Tasks)...)
		}
		assert.Equal(t, ids(all), paged, "the pages, end to end, are the whole order")
		st := decodeState(t, serveState(h, "limit=0"))
		assert.Empty(t, st.Tasks, "limit=0: the summary alone")
		assert.Equal(t, n, st.Matching)
	})

	t.Run("selected", func(t *testing.T) {
		var task rowAnswer
		for _, r := range st.Tasks {
			if r.Name == "task-7" {
				task = r
			}
		}
		require.NotZero(t, task.ID)
		got := decodeState(t, serveState(h, fmt.Sprintf("limit=1&task=%d", task.ID)))
		require.NotNil(t, got.Selected, "the task's stanza")
		assert.Equal(t, task.ID, got.Selected.ID)
		assert.Contains(t, got.Selected.Stanza, fmt.Sprintf("task %d \"task-7\" [idle", task.ID))
		assert.Contains(t, got.Selected.Stanza, "waiting on Console.Recv 7")
		if task.PollNs > 0 { // a coarse clock (Windows) may measure none
			assert.Contains(t, got.Selected.Stanza, "polled for")
		}
		got = decodeState(t, serveState(h, "task=999999999"))
		assert.Nil(t, got.Selected, "a task not listed has no stanza")
	})

	t.Run("bad", func(t *testing.T) {
		for query, reason := range map[string]string{
			"sort=size":                          "bad sort \"size\": want one of id, name, state, age, polls, poll, waiting, for",
			"sort=ID":                            "bad sort",
			"dir=up":                             "bad dir \"up\": want asc or desc",
			"offset=-1":                          "bad offset \"-1\": want an integer from 0",
			"offset=ten":                         "bad offset",
			"limit=1001":                         "bad limit \"1001\": want an integer from 0 to 1000",
			"limit=-5":                           "bad limit",
			"task=0":                             "bad task \"0\"",
			"task=abc":                           "bad task",
			"filter=" + strings.Repeat("x", 257): "bad filter: longer than 256 bytes",
		} {
			rec := serveState(h, query)
			assert.Equal(t, http.StatusBadRequest, rec.Code, query)
			assert.Contains(t, rec.Body.String(), "inspect: "+reason, query)
		}
	})
}

// splitWait returns the kind of a wait as a row shows it ("Console.Accept
// fd 12", "Console.Recv 7", "Console.Lock") and its number, 0 if none.
func splitWait(w string) (kind string, n int) {
	f := strings.Fields(w)
	if len(f) == 0 {
		return "", 0
	}
	n, _ = strconv.Atoi(f[len(f)-1])
	return f[0], n
}

// ids returns the ids of rows.
func ids(rows []rowAnswer) []uint64 {
	out := make([]uint64, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}
