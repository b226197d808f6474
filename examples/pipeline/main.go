// Command pipeline shows tasks and goroutines sharing one channel and one
// mutex: an ordinary goroutine feeds lines into a bounded channel with the
// blocking tier (backpressure when the workers fall behind), worker tasks on
// the runtime receive them with the future tier and count words in a map
// guarded by an async Mutex, and a Watch publishes progress to a goroutine.
// The worker is an async function, compiled by blitzgen (go generate).
package main

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strings"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// counter is the state the workers share.
type counter struct {
	mu     syncprim.Mutex
	counts map[string]int // guarded by mu
	lines  *channels.Watch[int]
}

// worker is a task written as an async function: receive a line, lock the
// counter, count the line's words, unlock, repeat until the channel is
// closed and drained; it returns the number of lines it counted. The
// blitzgen generator compiles it into a state machine (workerAsync, in
// main_async.go) whose Cancel withdraws the receive or the lock it waits
// on, so a cancelled worker leaves nothing queued in the channel or the
// mutex.
//
//blitz:async
func worker(in *channels.Bounded[string], c *counter) int {
	done := 0
	for {
		line, err := future.Try(in.Recv())
		if err != nil { // channels.ErrClosed: everything sent was received
			return done
		}
		g := future.Await(c.mu.Lock())
		for _, word := range strings.Fields(line) {
			c.counts[word]++
		}
		g.Unlock()
		done++
		_ = c.lines.SendModify(func(n *int) { *n++ })
	}
}

var text = []string{
	"the quick brown fox jumps over the lazy dog",
	"the dog sleeps",
	"a fox is quick and a dog is lazy",
}

func main() {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Shutdown(context.Background())

	const lines, workers = 30_000, 8
	in := channels.NewBounded[string](64)
	c := &counter{counts: make(map[string]int), lines: channels.NewWatch(0)}

	// Workers: tasks on the runtime.
	handles := make([]blitz.JoinHandle[int], workers)
	for i := range handles {
		handles[i] = blitz.SpawnOn(rt.Handle(), workerAsync(in, c))
	}

	// Progress: an ordinary goroutine waiting for changes with the blocking tier.
	progress := c.lines.Subscribe()
	watched := make(chan int)
	go func() {
		seen := 0
		for progress.ChangedBlocking(context.Background()) == nil {
			seen = progress.BorrowAndUpdate()
		}
		watched <- seen // the Watch was closed: seen is the final count
	}()

	// Producer: an ordinary goroutine with backpressure from the bounded channel.
	for i := range lines {
		if err := in.SendBlocking(context.Background(), text[i%len(text)]); err != nil {
			log.Fatal(err)
		}
	}
	in.Close() // workers drain what was sent, then see ErrClosed

	perWorker := make([]int, workers)
	total := 0
	for i, h := range handles {
		n, err := h.Wait(context.Background())
		if err != nil {
			log.Fatal(err)
		}
		perWorker[i] = n
		total += n
	}
	c.lines.Close()

	words := make([]string, 0, len(c.counts))
	for w := range c.counts {
		words = append(words, w)
	}
	slices.Sort(words)
	fmt.Printf("lines counted: %d by %d tasks; progress watcher saw %d\n", total, workers, <-watched)
	for _, w := range words {
		fmt.Printf("%-6s %d\n", w, c.counts[w])
	}
}
