// Command pipeline shows tasks and goroutines sharing one channel and one
// mutex: an ordinary goroutine feeds lines into a bounded channel with the
// blocking tier (backpressure when the workers fall behind), worker tasks on
// the runtime receive them with the future tier and count words in a map
// guarded by an async Mutex, and a Watch publishes progress to a goroutine.
package main

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strings"

	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/runtime"
	"github.com/blitz-go/blitz/syncprim"
)

// counter is the state the workers share.
type counter struct {
	mu     syncprim.Mutex
	counts map[string]int // guarded by mu
	lines  *channels.Watch[int]
}

// worker is a task written as a state machine: receive a line, lock the
// counter, count the line's words, unlock, repeat until the channel is
// closed and drained. The futures it waits on live inside it, so waiting
// allocates nothing.
type worker struct {
	in    *channels.Bounded[string]
	c     *counter
	state workerState
	recv  channels.RecvFuture[string] // valid in stateRecv
	lock  syncprim.LockFuture         // valid in stateLock
	line  string
	done  int // lines this worker counted
}

type workerState uint8

const (
	stateStart workerState = iota
	stateRecv
	stateLock
)

// Poll runs the worker until it has to wait. It returns the number of lines
// it counted once the channel is closed and drained.
func (w *worker) Poll(cx *future.Context) (int, bool) {
	for {
		switch w.state {
		case stateStart:
			w.recv = w.in.Recv()
			w.state = stateRecv
		case stateRecv:
			r, ok := w.recv.Poll(cx)
			if !ok {
				return 0, false // woken when a line arrives or the channel closes
			}
			if r.Err != nil { // channels.ErrClosed: everything sent was received
				return w.done, true
			}
			w.line = r.Value
			w.lock = w.c.mu.Lock()
			w.state = stateLock
		case stateLock:
			g, ok := w.lock.Poll(cx)
			if !ok {
				return 0, false // woken when the lock is handed to us
			}
			for _, word := range strings.Fields(w.line) {
				w.c.counts[word]++
			}
			g.Unlock()
			w.done++
			_ = w.c.lines.SendModify(func(n *int) { *n++ })
			w.state = stateStart
		}
	}
}

// Cancel withdraws whatever the worker waits on, so that a cancelled worker
// leaves nothing queued in the channel or the mutex.
func (w *worker) Cancel() {
	switch w.state {
	case stateRecv:
		w.recv.Cancel()
	case stateLock:
		w.lock.Cancel()
	}
}

var text = []string{
	"the quick brown fox jumps over the lazy dog",
	"the dog sleeps",
	"a fox is quick and a dog is lazy",
}

func main() {
	rt, err := runtime.New(runtime.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Shutdown(context.Background())

	const lines, workers = 30_000, 8
	in := channels.NewBounded[string](64)
	c := &counter{counts: make(map[string]int), lines: channels.NewWatch(0)}

	// Workers: tasks on the runtime.
	handles := make([]runtime.JoinHandle[int], workers)
	for i := range handles {
		handles[i] = runtime.SpawnOn(rt.Handle(), future.Future[int](&worker{in: in, c: c}))
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
