package waker_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/blitz-go/blitz/waker"
)

// task stands for a task header: its Wake reschedules it, and a wake of a
// task already scheduled coalesces (the notified bit of a task header).
type task struct {
	name      string
	scheduled bool
	runQueue  *[]string
}

func (t *task) Wake() {
	if t.scheduled {
		return // already scheduled: the wake coalesces
	}
	t.scheduled = true
	*t.runQueue = append(*t.runQueue, t.name)
}

// A future that cannot make progress registers its task's Waker; whoever
// makes progress possible wakes it, and the task is scheduled once however
// many wakes arrive.
func ExampleNew() {
	var runQueue []string
	t := &task{name: "t1", runQueue: &runQueue}
	wk := waker.New(t) // no allocation: the interface holds the pointer

	wk.Wake()
	wk.Wake()
	fmt.Println(runQueue)
	fmt.Println(wk.WillWake(waker.New(t)))
	// Output:
	// [t1]
	// true
}

// flag is a tiny condition-variable-like event built from a List, a Signal
// and a sync.Mutex: the blocking tier of a primitive, for ordinary
// goroutines. Tasks could wait in the same List with their own Wakers.
type flag struct {
	mu      sync.Mutex
	set     bool
	waiters waker.List[struct{}]
}

// Wait blocks until the flag is set or ctx is done.
func (f *flag) Wait(ctx context.Context) error {
	var sig waker.Signal
	var w waker.Waiter[struct{}] // a future would embed it instead
	f.mu.Lock()
	if f.set {
		f.mu.Unlock()
		return nil
	}
	f.waiters.PushBack(&w, waker.New(&sig))
	f.mu.Unlock()
	for {
		err := sig.Wait(ctx)
		f.mu.Lock()
		if !w.Linked() { // unlinked means woken
			f.mu.Unlock()
			return nil
		}
		if err != nil {
			f.waiters.Remove(&w)
			f.mu.Unlock()
			return err
		}
		f.mu.Unlock() // a stray wake: wait again
	}
}

// Set sets the flag and wakes every waiter after unlocking.
func (f *flag) Set() {
	var wl waker.WakeList
	f.mu.Lock()
	f.set = true
	f.waiters.PopInto(&wl)
	f.waiters.WakeAll() // beyond WakeListCap: under the lock
	f.mu.Unlock()
	wl.WakeAll()
}

// Goroutines block on an event built from a List and a Signal each, and are
// all released by one Set.
func Example() {
	var f flag
	var wg sync.WaitGroup
	results := make([]error, 3)
	for i := range results {
		wg.Go(func() { results[i] = f.Wait(context.Background()) })
	}
	f.Set()
	wg.Wait()
	fmt.Println(results)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var g flag
	fmt.Println(g.Wait(ctx))
	// Output:
	// [<nil> <nil> <nil>]
	// context canceled
}

// A Signal holds one pending wakeup: a wake before the wait makes the wait
// return at once, and wakes coalesce.
func ExampleSignal() {
	var sig waker.Signal
	wk := waker.New(&sig)
	wk.Wake()
	wk.Wake()
	fmt.Println(sig.Wait(context.Background()))
	fmt.Println(sig.TryWait())
	// Output:
	// <nil>
	// false
}

// A primitive takes its waiters out under its lock and wakes them after
// unlocking, so the Wakers do not run inside the critical section.
func ExampleWakeList() {
	var mu sync.Mutex
	var l waker.List[string]
	names := []string{"a", "b", "c"}
	ws := make([]waker.Waiter[string], len(names))
	for i, name := range names {
		ws[i].Value = name
		l.PushBack(&ws[i], waker.Func(func() { fmt.Println("woke", name) }))
	}

	var wl waker.WakeList
	mu.Lock()
	n := l.PopInto(&wl)
	fmt.Println("took", n, "left", l.Len(), "linked", ws[0].Linked())
	mu.Unlock()
	wl.WakeAll()
	// Output:
	// took 3 left 0 linked false
	// woke a
	// woke b
	// woke c
}

// A cancelled waiter learns from Remove whether it was woken first.
func ExampleList_Remove() {
	var l waker.List[int]
	var a, b waker.Waiter[int]
	l.PushBack(&a, waker.Noop())
	l.PushBack(&b, waker.Noop())
	l.WakeOne()               // takes a
	fmt.Println(l.Remove(&a)) // a was woken before its cancel
	fmt.Println(l.Remove(&b)) // b left unwoken
	fmt.Println(l.Remove(&b)) // already gone
	// Output:
	// false
	// true
	// false
}
