package globalq_test

import (
	"fmt"

	"github.com/blitz-go/blitz/globalq"
)

// Task stands for a scheduler's task: it carries the link the global queue
// uses, so a push allocates nothing.
type Task struct {
	name string
	next *Task // owned by the queue holding the task
}

// QueueNext returns the address of the task's link, making *Task a
// globalq.Node[Task].
func (t *Task) QueueNext() **Task { return &t.next }

// Spawning from outside the workers pushes to the global queue; a worker
// takes its fair share in one batch.
func Example() {
	q := globalq.New[Task]()
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		q.Push(&Task{name: name})
	}
	fmt.Println("queued:", q.Len())

	buf := make([]*Task, 32) // a worker's global batch buffer
	n := q.PopBatch(buf, 2)  // 2 workers: max(4, 10/2) = 5
	for _, t := range buf[:n] {
		fmt.Print(t.name, " ")
	}
	fmt.Println("| left:", q.Len())
	fmt.Println("next:", q.Pop().name)
	// Output:
	// queued: 10
	// a b c d e | left: 5
	// next: f
}

// After Close a Push is refused and the task stays the caller's; what was
// queued before is still handed out, here by Drain at shutdown.
func ExampleQueue_Close() {
	var q globalq.Queue[Task, *Task] // the zero Queue is ready to use
	q.Push(&Task{name: "queued"})
	q.Close()
	late := &Task{name: "late"}
	fmt.Println("late accepted:", q.Push(late))
	q.Drain(func(t *Task) { fmt.Println("drained:", t.name) })
	// Output:
	// late accepted: false
	// drained: queued
}

// A local run queue that overflows hands half its tasks to the global queue
// in one call; PushOverflow has the signature of wsqueue.Overflow.
func ExampleQueue_PushOverflow() {
	q := globalq.New[Task]()
	q.PushOverflow([]*Task{{name: "x"}, {name: "y"}, {name: "z"}})
	for t := q.Pop(); t != nil; t = q.Pop() {
		fmt.Println(t.name)
	}
	// Output:
	// x
	// y
	// z
}

// A sharded queue spreads pushes over its shards; pops scan them all, so
// every task comes out once, in FIFO order per shard only.
func ExampleSharded() {
	q := globalq.NewSharded[Task](4)
	for _, name := range []string{"a", "b", "c", "d"} {
		q.Push(&Task{name: name})
	}
	count := 0
	for q.Pop() != nil {
		count++
	}
	fmt.Println("popped:", count, "empty:", q.IsEmpty())
	// Output:
	// popped: 4 empty: true
}
