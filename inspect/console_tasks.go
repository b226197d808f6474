package inspect

import (
	"fmt"
	"strings"

	"github.com/blitz-go/blitz"
)

// taskRows returns the console's rows for rt's live tasks (those polled at
// least once; see blitz.Runtime.Tasks).
func taskRows(rt *blitz.Runtime) []taskRow {
	tasks, _ := rt.Tasks()
	rows := make([]taskRow, len(tasks))
	for i, t := range tasks {
		rows[i] = taskRow{
			ID: t.ID, Name: t.Name, State: t.State.String(),
			AgeNs: t.Age.Nanoseconds(), Polls: uint64(t.Polls), PollNs: t.PollTime.Nanoseconds(),
			ForNs: t.SinceLastPoll.Nanoseconds(),
			Dump: stanza(t),
		}
		if t.Wait != 0 {
			rows[i].Waiting = t.Wait.String()
		}
	}
	return rows
}

// stanza is a task's entry for the console's detail pane.
func stanza(t blitz.TaskInfo) string {
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
