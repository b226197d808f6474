package syncprim_test

import (
	"context"
	"fmt"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// Readers share an RwLock; a writer excludes them; Downgrade turns a write
// lock into a read lock without letting another writer in between.
func ExampleRwLock() {
	var l syncprim.RwLock
	config := map[string]string{}

	w, _ := l.LockBlocking(context.Background())
	config["mode"] = "fast"
	r := w.Downgrade() // still holding it, now for reading
	r2, ok := l.TryRLock()
	fmt.Println("second reader:", ok, config["mode"])
	r2.Unlock()
	_, ok = l.TryLock()
	fmt.Println("writer while read-locked:", ok)
	r.Unlock()

	f := l.RLock()
	g, _ := future.Block(context.Background(), f)
	fmt.Println("task reader sees", config["mode"])
	g.Unlock()
	// Output:
	// second reader: true fast
	// writer while read-locked: false
	// task reader sees fast
}
