package inspect

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// syntheticKinds are the kinds of wait of syntheticTasks.
var syntheticKinds = [...]future.WaitKind{
	future.NewWaitKind("Synthetic.Read", future.WaitFD),
	future.NewWaitKind("Synthetic.Sleep", future.WaitDeadline),
	future.NewWaitKind("Synthetic.Lock", future.WaitNoObject),
}

// taskSlice is a slice of tasks as pageTasks reads a snapshot.
type taskSlice []blitz.TaskInfo

func (s taskSlice) Len() int                  { return len(s) }
func (s taskSlice) Task(i int) blitz.TaskInfo { return s[i] }

// syntheticTasks returns n task snapshots, in the order of a shard walk
// (newest first), with random figures, 1000 names and three kinds of wait.
func syntheticTasks(n int) []blitz.TaskInfo {
	r := rand.New(rand.NewPCG(1, 2))
	tasks := make([]blitz.TaskInfo, n)
	for i := range tasks {
		t := &tasks[i]
		t.ID = uint64(n - i)
		t.Name = fmt.Sprintf("Task-%d", r.IntN(1000))
		t.State = blitz.TaskState(r.IntN(10) / 8 * 2) // idle, some running
		t.Age = time.Duration(r.Int64N(int64(time.Hour)))
		t.Polls = uint32(r.IntN(50))
		t.PollTime = time.Duration(r.Int64N(int64(time.Second)))
		t.SinceLastPoll = time.Duration(r.Int64N(int64(time.Minute)))
		if t.State == blitz.TaskIdle {
			t.Wait = future.MakeWait(syntheticKinds[r.IntN(3)], 0, uint64(r.IntN(1000)))
		}
	}
	return tasks
}

// orderOf is the order of sort key k, written the obvious way, for
// comparison with pageTasks' keys and entryOrder.
func orderOf(k sortKey, desc bool) func(a, b *blitz.TaskInfo) int {
	by := func(a, b *blitz.TaskInfo) int {
		switch k {
		case sortName:
			return strings.Compare(a.Name, b.Name)
		case sortState:
			return cmp.Compare(a.State, b.State)
		case sortAge:
			return cmp.Compare(a.Age, b.Age)
		case sortPolls:
			return cmp.Compare(a.Polls, b.Polls)
		case sortPoll:
			return cmp.Compare(a.PollTime, b.PollTime)
		case sortWaiting:
			return cmp.Or(strings.Compare(a.Wait.Kind().Name(), b.Wait.Kind().Name()), cmp.Compare(shownObject(a.Wait), shownObject(b.Wait)))
		case sortFor:
			return cmp.Compare(a.SinceLastPoll, b.SinceLastPoll)
		}
		return 0
	}
	return func(a, b *blitz.TaskInfo) int {
		c := by(a, b)
		if desc {
			c = -c
		}
		if c == 0 && k == sortID && desc {
			return cmp.Compare(b.ID, a.ID)
		}
		return cmp.Or(c, cmp.Compare(a.ID, b.ID))
	}
}

// shownObject is the object of w if its kind shows it, else 0.
func shownObject(w future.Wait) uint64 {
	if w.Kind().Object() == future.WaitNoObject {
		return 0
	}
	return w.Object()
}

// Every page of every order, filtered or not, is the slice of the fully
// sorted matching tasks at its offset: the selection of the tasks before
// the page's end agrees with a sort, and pages neither overlap nor skip.
func TestPageTasksAgreesWithASort(t *testing.T) {
	tasks := syntheticTasks(5000)
	sc := new(pageScratch) // reused, as the console reuses it
	for k := range sortKey(len(sortNames)) {
		for _, desc := range []bool{false, true} {
			for _, filter := range []string{"", "task-7", "TASK-12"} {
				var want []*blitz.TaskInfo
				for i := range tasks {
					if strings.Contains(strings.ToLower(tasks[i].Name), strings.ToLower(filter)) {
						want = append(want, &tasks[i])
					}
				}
				slices.SortFunc(want, orderOf(k, desc))
				for _, page := range [][2]int{{0, 1}, {0, 100}, {100, 100}, {len(want) - 30, 100}, {0, 1000}, {len(want) / 2, 1000}, {len(want), 10}} {
					v := url.Values{"sort": {sortNames[k]}, "filter": {filter},
						"offset": {fmt.Sprint(page[0])}, "limit": {fmt.Sprint(page[1])}}
					if desc {
						v.Set("dir", "desc")
					}
					q, err := parseQuery(v)
					require.NoError(t, err)
					p := pageTasks(taskSlice(tasks), int64(len(tasks)), &q, sc)
					require.Equal(t, len(want), p.matching, v.Encode())
					end := max(min(page[0]+page[1], len(want)), page[0])
					require.Len(t, p.rows, end-page[0], v.Encode())
					for i, row := range p.rows {
						require.Equal(t, want[page[0]+i].ID, row.ID, "%s: row %d", v.Encode(), i)
					}
				}
			}
		}
	}
}

// sortedRange returns the slice of the sorted input, for every range,
// whatever the order of its input.
func TestSortedRange(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 17, 100, 1000} {
		for _, input := range []string{"random", "ascending", "descending"} {
			s := make([]int, n)
			for i := range s {
				s[i] = i
				if input == "descending" {
					s[i] = n - i
				}
			}
			if input == "random" {
				r.Shuffle(n, func(i, j int) { s[i], s[j] = s[j], s[i] })
			}
			sorted := slices.Sorted(slices.Values(s))
			cuts := []int{0, 1, 5, n / 4, n / 2, n - 1, n}
			for _, lo := range cuts {
				for _, hi := range cuts {
					if lo < 0 || lo > hi || hi > n {
						continue
					}
					got := sortedRange(slices.Clone(s), lo, hi, cmp.Compare[int])
					require.True(t, slices.Equal(sorted[lo:hi], got), "%s n=%d [%d:%d]: %v", input, n, lo, hi, got)
				}
			}
		}
	}
}

func TestContainsFold(t *testing.T) {
	for _, c := range []struct {
		s, sub string
		want   bool
	}{
		{"conn-12", "conn", true},
		{"Conn-12", "conn-1", true},
		{"CONN-12", "n-12", true},
		{"conn-12", "", true},
		{"conn", "conn-", false},
		{"", "a", false},
		{"Ärger-Task", "ärger", true},
		{"Ärger-Task", "task", true},
		{"Ärger-Task", "ärgre", false},
	} {
		assert.Equal(t, c.want, containsFold(c.s, strings.ToLower(c.sub)), "%q in %q", c.sub, c.s)
	}
}

// BenchmarkPageTasks is the console's own work for a state at 10^5 tasks,
// past the snapshot of the tasks: the summary, the filter, the selection
// and the formatting of one page.
func BenchmarkPageTasks(b *testing.B) {
	tasks := syntheticTasks(100_000)
	for _, bc := range []struct{ name, query string }{
		{"default", ""},
		{"idle-longest", "sort=for&dir=desc"},
		{"waiting", "sort=waiting"},
		{"filter", "filter=task-42&sort=name"},
		{"deep-page", "sort=age&offset=50000&limit=1000"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			v, _ := url.ParseQuery(bc.query)
			q, err := parseQuery(v)
			require.NoError(b, err)
			b.ReportAllocs()
			sc := new(pageScratch)
			for b.Loop() {
				pageTasks(taskSlice(tasks), int64(len(tasks)), &q, sc)
			}
		})
	}
}
