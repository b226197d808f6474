package scheduler_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// waitDoor is the wait a door records: a leaf future's own kind.
var waitDoor = future.NewWaitKind("Door.Wait", future.WaitNumber)

// door is a leaf future: it waits until opened, and records what it waits
// on for the dump.
type door struct {
	mu     *sync.Mutex
	opened *bool
	wks    *[]waker.Waker
	number uint64
}

func (d door) Poll(cx *future.Context) (struct{}, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if *d.opened {
		return struct{}{}, true
	}
	*d.wks = append(*d.wks, cx.Waker())
	cx.Waiting(waitDoor, d.number)
	return struct{}{}, false
}

// A task dump: three tasks named "guest" waiting on the same kind of
// thing make one stanza; the lone one shows its wait's number.
func ExampleScheduler_Dump() {
	s, err := scheduler.New(scheduler.Config{Workers: 1})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer s.Shutdown(ctx)

	var mu sync.Mutex
	var opened bool
	var wks []waker.Waker
	for i := range 4 {
		name := "guest"
		if i == 3 {
			name = "host"
		}
		scheduler.Spawn[struct{}](s, nil, scheduler.Named(name, future.Future[struct{}](door{&mu, &opened, &wks, uint64(i)})))
	}
	for { // until all four wait
		tasks, _ := s.Tasks()
		n := 0
		for _, t := range tasks {
			if t.State == scheduler.TaskIdle && t.Wait != 0 {
				n++
			}
		}
		if n == 4 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	var buf bytes.Buffer
	s.Dump(&buf)
	for _, line := range strings.Split(buf.String(), "\n") {
		// Ages and idle times vary from run to run: show the rest.
		if !strings.Contains(line, "age ") {
			fmt.Println(line)
		}
	}
	// Output:
	// blitz tasks: 4 live, 4 listed
	//
	// 3 tasks: idle, waiting on Door.Wait, "guest"
	// 	ids 1, 2, 3
	//
	// 1 task: idle, waiting on Door.Wait 3, "host"
	// 	id 4
	//
}

// A program that looks at its tasks often fills one snapshot again and
// again, which allocates nothing per task once it has grown, and makes a
// TaskInfo only for the tasks it shows.
func ExampleScheduler_SnapshotTasks() {
	s, err := scheduler.New(scheduler.Config{Workers: 1})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer s.Shutdown(ctx)

	var mu sync.Mutex
	var opened bool
	var wks []waker.Waker
	for i := range 3 {
		scheduler.Spawn[struct{}](s, nil, scheduler.Named("guest", future.Future[struct{}](door{&mu, &opened, &wks, uint64(i)})))
	}
	var snap scheduler.TaskSnapshot
	for { // a console's refreshes
		s.SnapshotTasks(&snap)
		waiting := 0
		for i := range snap.Len() {
			if t := snap.Task(i); t.State == scheduler.TaskIdle && t.Wait != 0 {
				waiting++
			}
		}
		if waiting == 3 {
			fmt.Printf("%d live, %d listed, %d waiting\n", snap.Live(), snap.Len(), waiting)
			break
		}
		time.Sleep(time.Millisecond)
	}
	// Output:
	// 3 live, 3 listed, 3 waiting
}
