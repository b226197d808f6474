package syncprim_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// The classic pattern: make the Notified future, check the condition, then
// await it. A NotifyWaiters between the check and the first poll is not
// missed, because the future counts from when it was made.
func ExampleNotify() {
	var n syncprim.Notify
	var mu sync.Mutex
	ready := false

	f := n.Notified() // 1. register interest
	mu.Lock()
	ok := ready // 2. check the condition
	mu.Unlock()

	go func() { // meanwhile, another goroutine sets it and notifies
		mu.Lock()
		ready = true
		mu.Unlock()
		n.NotifyWaiters()
	}()

	if !ok {
		_, _ = future.Block[struct{}](context.Background(), f) // 3. await
	}
	mu.Lock()
	fmt.Println("ready:", ready)
	mu.Unlock()

	// NotifyOne with nobody waiting stores one permit (not two).
	n.NotifyOne()
	n.NotifyOne()
	fmt.Println(n.TryNotified(), n.TryNotified())
	// Output:
	// ready: true
	// true false
}
