package inspect

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// This file is the tasks half of a console state: the summary of the live
// tasks, the page of them a request asks for, and the selected task's
// stanza. See the package doc, "Console protocol".
//
// A runtime may hold 10^5 tasks and more, and the console is most needed
// when the service is in trouble, so the work per request is kept to what
// the page shows, and its memory is reused from one request to the next:
// the snapshot is a blitz.TaskSnapshot, compact records refilled in place;
// the filter and the sort read each task's figures once, into small sort
// entries (no string is made for a task that is not on the page); the
// page's tasks are selected and only they are sorted, and only the page's
// rows are formatted.

// taskRow is one task of the page, as the page's table shows it.
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
}

// taskSummary counts the live tasks.
type taskSummary struct {
	// Live is every live task (Runtime.Tasks' count); Listed those the
	// snapshot lists, which the other figures count.
	Live   int64 `json:"live"`
	Listed int   `json:"listed"`
	// States counts the listed tasks by state.
	States stateCounts `json:"states"`
	// Waits are the most common kinds of wait of the idle tasks (at most
	// maxWaitKinds), most first.
	Waits []waitCount `json:"waits"`
}

// stateCounts counts tasks by blitz.TaskState.
type stateCounts struct {
	Idle      int `json:"idle"`
	Scheduled int `json:"scheduled"`
	Running   int `json:"running"`
	Complete  int `json:"complete"`
	Queued    int `json:"queued"`
}

// waitCount is how many idle tasks wait on a kind of wait.
type waitCount struct {
	Kind  string `json:"kind"`
	Tasks int    `json:"tasks"`
}

// maxWaitKinds is how many kinds of wait a summary names.
const maxWaitKinds = 5

// selectedTask is the task a request selected (its task parameter).
type selectedTask struct {
	ID     uint64 `json:"id"`
	Stanza string `json:"stanza"`
}

// taskPage is the tasks half of a console state.
type taskPage struct {
	summary  taskSummary
	matching int
	rows     []taskRow
	selected *selectedTask
}

// taskList is a snapshot of tasks as pageTasks reads it: a
// *blitz.TaskSnapshot, or a slice of tasks in the package's tests.
type taskList interface {
	Len() int
	Task(i int) blitz.TaskInfo
}

// pageScratch is the memory of pageTasks, reused from one state to the
// next: the sort entries and, for an order by name, the tasks' names.
type pageScratch struct {
	entries []sortEntry
	names   []string
}

// pageTasks builds the tasks half of a state from a snapshot (tasks, and
// live, the count of every live task): the summary, the page of the tasks
// matching q's filter in q's order, and q's selected task. It reads each
// task once, and keeps its memory in sc for the next call. Only the
// console's handler calls it (and the package's tests).
func pageTasks(tasks taskList, live int64, q *consoleQuery, sc *pageScratch) taskPage {
	var p taskPage
	n := tasks.Len()
	p.summary.Live, p.summary.Listed = live, n
	var kinds [256]int // idle tasks by future.WaitKind
	var waits *waitKeys
	if q.sort == sortWaiting {
		waits = newWaitKeys()
	}
	byName := q.sort == sortName
	matches := slices.Grow(sc.entries[:0], n)
	var names []string // nil unless byName
	if byName {
		names = slices.Grow(sc.names[:0], max(n, 1))
	}
	for i := range n {
		t := tasks.Task(i)
		switch t.State {
		case blitz.TaskIdle:
			p.summary.States.Idle++
			kinds[t.Wait.Kind()]++
		case blitz.TaskScheduled:
			p.summary.States.Scheduled++
		case blitz.TaskRunning:
			p.summary.States.Running++
		case blitz.TaskQueued:
			p.summary.States.Queued++
		default:
			p.summary.States.Complete++
		}
		if t.ID == q.task && q.task != 0 {
			p.selected = &selectedTask{ID: t.ID, Stanza: stanza(&t)}
		}
		if byName {
			names = append(names, t.Name)
		}
		if q.filter == "" || containsFold(t.Name, q.filter) {
			matches = append(matches, sortEntry{key: sortKeyOf(&t, q.sort, q.desc, waits), id: t.ID, i: i})
		}
	}
	p.summary.Waits = topWaits(&kinds)
	p.matching = len(matches)
	if q.offset >= len(matches) || q.limit == 0 {
		p.rows = []taskRow{}
	} else {
		page := sortedRange(matches, q.offset, min(q.offset+q.limit, len(matches)), entryOrder(names, q.desc))
		p.rows = make([]taskRow, len(page))
		for j, e := range page {
			t := tasks.Task(e.i)
			p.rows[j] = rowOf(&t)
		}
	}
	sc.entries = matches[:0]
	if byName {
		clear(names) // keep no name reachable
		sc.names = names[:0]
	}
	return p
}

// sortEntry is a matching task in the sort: its sort key (sortKeyOf), id
// and index in the snapshot. The sort moves these small words, not the
// snapshot's tasks, and compares most keys without reading a task.
type sortEntry struct {
	key, id uint64
	i       int
}

// sortKeyOf returns t's key in the order by key: a number whose order is
// the column's (descending if desc), so that only ties, and for names the
// ties of their first 8 bytes, need more (entryOrder). waits are the keys
// of the waits, for sortWaiting.
func sortKeyOf(t *blitz.TaskInfo, key sortKey, desc bool, waits *waitKeys) uint64 {
	var k uint64
	switch key {
	case sortID:
		k = t.ID
	case sortName:
		var b [8]byte
		copy(b[:], t.Name)
		k = binary.BigEndian.Uint64(b[:])
	case sortState:
		k = uint64(t.State)
	case sortAge:
		k = ordered(int64(t.Age))
	case sortPolls:
		k = uint64(t.Polls)
	case sortPoll:
		k = ordered(int64(t.PollTime))
	case sortWaiting:
		k = waits.of(t.Wait)
	case sortFor:
		k = ordered(int64(t.SinceLastPoll))
	}
	if desc {
		k = ^k
	}
	return k
}

// ordered maps an int64 to a uint64 of the same order.
func ordered(x int64) uint64 { return uint64(x) ^ 1<<63 }

// entryOrder returns the order of sort entries: by key, then, for an
// order by name, by names, the tasks' names by snapshot index (descending
// if desc), then by id, ascending, which makes it a total order: the pages
// of one snapshot neither overlap nor miss a task.
func entryOrder(names []string, desc bool) func(a, b sortEntry) int {
	byName := names != nil
	return func(a, b sortEntry) int {
		if a.key != b.key {
			if a.key < b.key {
				return -1
			}
			return 1
		}
		if byName {
			c := strings.Compare(names[a.i], names[b.i])
			if desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return cmp.Compare(a.id, b.id)
	}
}

// rowOf formats t for the page's table.
func rowOf(t *blitz.TaskInfo) taskRow {
	return taskRow{
		ID: t.ID, Name: t.Name, State: t.State.String(),
		AgeNs: t.Age.Nanoseconds(), Polls: uint64(t.Polls), PollNs: t.PollTime.Nanoseconds(),
		Waiting: t.Wait.String(), ForNs: t.SinceLastPoll.Nanoseconds(),
	}
}

// topWaits returns the most common kinds of kinds (counts by
// future.WaitKind; the zero kind, no wait recorded, is left out), most
// first, at most maxWaitKinds.
func topWaits(kinds *[256]int) []waitCount {
	out := []waitCount{}
	for k := 1; k < len(kinds); k++ {
		if kinds[k] > 0 {
			out = append(out, waitCount{Kind: future.WaitKind(k).Name(), Tasks: kinds[k]})
		}
	}
	slices.SortFunc(out, func(a, b waitCount) int {
		return cmp.Or(cmp.Compare(b.Tasks, a.Tasks), strings.Compare(a.Kind, b.Kind))
	})
	return out[:min(len(out), maxWaitKinds)]
}

// waitKeys is the sort key of the waits, by kind (waitKeys.of).
type waitKeys struct {
	// rank numbers the registered kinds of wait in the order of their
	// names, from 1; the zero kind, no wait, is 0.
	rank [256]uint64
	// object masks the object number of a kind that shows it, to 0 for
	// one that does not (future.WaitNoObject): the waits that read the
	// same sort together.
	object [256]uint64
}

// newWaitKeys returns the keys of the registered kinds of wait
// (future.NewWaitKind).
func newWaitKeys() *waitKeys {
	var named []future.WaitKind
	for k := 1; k < 256; k++ {
		if future.WaitKind(k).Name() != "" {
			named = append(named, future.WaitKind(k))
		}
	}
	slices.SortFunc(named, func(a, b future.WaitKind) int { return strings.Compare(a.Name(), b.Name()) })
	w := new(waitKeys)
	for i, k := range named {
		w.rank[k] = uint64(i + 1)
		if k.Object() != future.WaitNoObject {
			w.object[k] = future.MaxWaitObject
		}
	}
	return w
}

// of returns the sort key of wait: the rank of its kind, then its object
// (48 bits, future.MaxWaitObject) if its kind shows it.
func (w *waitKeys) of(wait future.Wait) uint64 {
	k := wait.Kind()
	return w.rank[k]<<48 | wait.Object()&w.object[k]
}

// sortedRange returns what s[lo:hi] would be if s were sorted by cmp, a
// total order; it reorders s. It selects the range first (quickselect:
// partitions around random pivots, about three comparisons per element
// whatever the order of s) and sorts only the range, so that a page of
// 10^5 tasks, even a deep one, costs little more than a pass over them.
func sortedRange[T any](s []T, lo, hi int, cmp func(a, b T) int) []T {
	splitAt(s, hi, cmp)
	splitAt(s[:hi], lo, cmp)
	slices.SortFunc(s[lo:hi], cmp)
	return s[lo:hi]
}

// splitAt reorders s so that s[:k] holds the k least elements of s by cmp,
// a total order, in no particular order.
func splitAt[T any](s []T, k int, cmp func(a, b T) int) {
	// s[:lo] < s[lo:hi] < s[hi:], and lo <= k <= hi.
	lo, hi := 0, len(s)
	for lo < k && k < hi {
		if hi-lo <= 16 {
			slices.SortFunc(s[lo:hi], cmp)
			return
		}
		p := partition(s[lo:hi], cmp) + lo
		switch {
		case p < k:
			lo = p + 1
		case p > k:
			hi = p
		default:
			return
		}
	}
}

// partition moves the median of three random elements of s to its place
// in the order cmp, the lesser elements before it and the greater after,
// and returns its index. s holds no two equal elements.
func partition[T any](s []T, cmp func(a, b T) int) int {
	last := len(s) - 1
	a, b, c := rand.IntN(len(s)), rand.IntN(len(s)), rand.IntN(len(s))
	if cmp(s[a], s[b]) > 0 {
		a, b = b, a
	}
	if cmp(s[b], s[c]) > 0 {
		b = c
		if cmp(s[a], s[b]) > 0 {
			b = a
		}
	}
	s[b], s[last] = s[last], s[b]
	store := 0
	for i := range last {
		if cmp(s[i], s[last]) < 0 {
			s[i], s[store] = s[store], s[i]
			store++
		}
	}
	s[store], s[last] = s[last], s[store]
	return store
}

// containsFold reports whether s contains lower, a lower-cased string,
// ignoring case. ASCII strings, the usual task names, are compared in
// place; others through strings.ToLower.
func containsFold(s, lower string) bool {
	if !isASCII(s) || !isASCII(lower) {
		return strings.Contains(strings.ToLower(s), lower)
	}
	for i := 0; i+len(lower) <= len(s); i++ {
		j := 0
		for j < len(lower) && toLowerASCII(s[i+j]) == lower[j] {
			j++
		}
		if j == len(lower) {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func toLowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// stanza is a task's entry for the console's detail pane.
func stanza(t *blitz.TaskInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "task %d", t.ID)
	if t.Name != "" {
		fmt.Fprintf(&b, " %q", t.Name)
	}
	fmt.Fprintf(&b, " [%s, age %v, %d polls", t.State, t.Age.Round(1e6), t.Polls)
	if t.PollTime > 0 {
		fmt.Fprintf(&b, ", polled for %v", t.PollTime)
	}
	b.WriteString("]\n")
	if t.State == blitz.TaskQueued {
		b.WriteString("  waiting in a queue for its first poll\n")
	}
	if t.State == blitz.TaskRunning {
		fmt.Fprintf(&b, "  running for %v", t.SinceLastPoll.Round(1e6))
		if t.FirstPoll {
			b.WriteString(", in its first poll")
		}
		b.WriteString("\n")
	}
	if t.Wait != 0 {
		fmt.Fprintf(&b, "  waiting on %s for %v\n", t.Wait, t.SinceLastPoll.Round(1e6))
	}
	if t.Parent != 0 {
		fmt.Fprintf(&b, "  spawned by task %d\n", t.Parent)
	}
	if t.Site != "" {
		fmt.Fprintf(&b, "  spawned at %s (%s)\n", t.Site, t.Func)
	}
	return b.String()
}
