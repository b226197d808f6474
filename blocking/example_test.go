package blocking_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/blitz-go/blitz/blocking"
)

// Run blocking functions on the pool and shut it down once they are done.
func Example() {
	pool, err := blocking.New(blocking.Config{MaxThreads: 4, IdleTimeout: time.Second})
	if err != nil {
		panic(err)
	}
	squares := make([]int, 5)
	var wg sync.WaitGroup
	for i := range squares {
		wg.Add(1)
		if err := pool.Go(func() {
			defer wg.Done()
			squares[i] = i * i // stands for a blocking system call
		}); err != nil {
			panic(err)
		}
	}
	wg.Wait()
	fmt.Println(squares)

	report, err := pool.Shutdown(context.Background(), blocking.RunQueued)
	fmt.Printf("%+v %v\n", report, err)
	fmt.Println(pool.Go(func() {}))
	// Output:
	// [0 1 4 9 16]
	// {Ran:0 Rejected:0} <nil>
	// blocking: pool closed: submit after Shutdown
}

// lookup is the record of one blocking call with its Task embedded, so that
// submitting it allocates nothing; it is reused once its Run has been called.
type lookup struct {
	blocking.Task
	host string
	addr string
	done chan struct{}
}

func newLookup() *lookup {
	l := &lookup{done: make(chan struct{}, 1)}
	l.Run = func() {
		l.addr = "addr-of-" + l.host // stands for a resolver call
		l.done <- struct{}{}
	}
	return l
}

func ExamplePool_Submit() {
	pool, err := blocking.New(blocking.Config{})
	if err != nil {
		panic(err)
	}
	defer pool.Shutdown(context.Background(), blocking.RunQueued)

	l := newLookup()
	for _, host := range []string{"alpha", "beta"} {
		l.host = host
		if err := pool.Submit(&l.Task); err != nil {
			panic(err)
		}
		<-l.done // Run has been called: l is ours again
		fmt.Println(l.addr)
	}
	// Output:
	// addr-of-alpha
	// addr-of-beta
}

// Shutdown with RejectQueued rejects the queued tasks at once, on the calling
// goroutine, then waits for the running one; here its context ends first,
// and a second Shutdown waits until the worker has exited.
func ExamplePool_Shutdown() {
	pool, err := blocking.New(blocking.Config{MaxThreads: 1})
	if err != nil {
		panic(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	_ = pool.Go(func() {
		close(started)
		<-release
	})
	<-started
	for _, name := range []string{"a", "b", "c"} {
		_ = pool.Submit(&blocking.Task{
			Run:    func() { fmt.Println("ran", name) },
			Reject: func(err error) { fmt.Println("rejected", name+":", err) },
		})
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	report, err := pool.Shutdown(ctx, blocking.RejectQueued)
	fmt.Printf("%+v %v\n", report, err)

	close(release)
	report, err = pool.Shutdown(context.Background(), blocking.RejectQueued)
	fmt.Printf("%+v %v\n", report, err)
	// Output:
	// rejected a: blocking: pool closed
	// rejected b: blocking: pool closed
	// rejected c: blocking: pool closed
	// {Ran:0 Rejected:3} blocking: shutdown: 1 worker(s) still running: context deadline exceeded
	// {Ran:0 Rejected:3} <nil>
}
