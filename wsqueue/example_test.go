package wsqueue_test

import (
	"fmt"

	"github.com/blitz-go/blitz/wsqueue"
)

// task stands for a scheduler's task.
type task struct{ name string }

// The local queue of one worker: the owner pushes and pops its own tasks in
// FIFO order, and another worker steals half of them into its own queue.
func Example() {
	owner, stealer := wsqueue.New[task]()
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		owner.Push(&task{name}, nil) // nil overflow: the queue has room
	}

	thief, _ := wsqueue.New[task]() // the other worker's own queue
	first := stealer.StealInto(thief)
	fmt.Println("thief runs", first.name, "and keeps", thief.Len())
	for t := thief.Pop(); t != nil; t = thief.Pop() {
		fmt.Println("thief pops", t.name)
	}
	for t := owner.Pop(); t != nil; t = owner.Pop() {
		fmt.Println("owner pops", t.name)
	}
	// Output:
	// thief runs c and keeps 2
	// thief pops a
	// thief pops b
	// owner pops d
	// owner pops e
}

// A full queue moves its oldest half, plus the task being pushed, to the
// overflow (in a scheduler, the global queue) in one call.
func ExampleOwner_Push() {
	owner, _, err := wsqueue.NewSize[task](4)
	if err != nil {
		panic(err)
	}
	var global []*task
	overflow := wsqueue.OverflowFunc[task](func(batch []*task) {
		global = append(global, batch...) // copy: the batch is reused
	})
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		owner.Push(&task{name}, overflow)
	}
	for _, t := range global {
		fmt.Print(t.name, " ")
	}
	fmt.Println("went to the global queue;", owner.Len(), "stay local")
	// Output:
	// a b e went to the global queue; 2 stay local
}

func ExampleNewSize() {
	_, _, err := wsqueue.NewSize[task](100)
	fmt.Println(err)
	// Output:
	// wsqueue: invalid capacity: 100 is not a power of two
}

// The Chase-Lev deque of a fork-join worker: the owner pushes and pops the
// newest job (LIFO), thieves take the oldest.
func ExampleNewDeque() {
	owner, stealer := wsqueue.NewDeque[task](2)
	for _, name := range []string{"a", "b", "c", "d"} {
		owner.Push(&task{name}) // grows past 2
	}
	if t, res := stealer.Steal(); res == wsqueue.StealSuccess {
		fmt.Println("thief takes", t.name)
	}
	fmt.Println("owner pops", owner.Pop().name)
	fmt.Println("capacity", owner.Capacity(), "length", owner.Len())
	// Output:
	// thief takes a
	// owner pops d
	// capacity 4 length 2
}

// A thief switches on the result: on StealRetry it lost a race and the deque
// may still hold work; StealLoop does that loop.
func ExampleDequeStealer_Steal() {
	owner, stealer := wsqueue.NewDeque[task](0)
	owner.Push(&task{"only"})
	for {
		t, res := stealer.Steal()
		switch res {
		case wsqueue.StealSuccess:
			fmt.Println("stole", t.name)
			continue
		case wsqueue.StealRetry:
			continue
		}
		fmt.Println(res)
		break
	}
	// Output:
	// stole only
	// empty
}
