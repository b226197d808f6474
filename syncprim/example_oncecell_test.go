package syncprim_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// Many goroutines ask for a lazily loaded configuration; exactly one
// initializer runs and everybody gets its value.
func ExampleOnceCell() {
	var config syncprim.OnceCell[string]
	var loads atomic.Int32
	load := func(context.Context) (string, error) {
		loads.Add(1)
		return "port=8080", nil
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := config.GetOrInitBlocking(context.Background(), load); err != nil {
				panic(err)
			}
		}()
	}
	wg.Wait()
	v, _ := config.Get()
	fmt.Println(v, "loaded", loads.Load(), "time(s)")
	// Output: port=8080 loaded 1 time(s)
}

// A failed initializer hands the right to the next caller: the cell stays
// empty until an init succeeds. The future tier takes an init that returns
// a future.
func ExampleOnceCell_GetOrInit() {
	var cell syncprim.OnceCell[int]
	failing := func() future.Future[future.Result[int]] {
		return future.Ready(future.Fail[int](errors.New("backend down")))
	}
	working := func() future.Future[future.Result[int]] {
		return future.Ready(future.Ok(7))
	}
	f := cell.GetOrInit(failing)
	r, _ := future.Block[future.Result[int]](context.Background(), f)
	fmt.Println("first:", r.Err, cell.IsInitialized())
	g := cell.GetOrInit(working)
	r, _ = future.Block[future.Result[int]](context.Background(), g)
	fmt.Println("second:", r.Value, cell.IsInitialized())
	fmt.Println("set again:", cell.Set(8))
	// Output:
	// first: backend down false
	// second: 7 true
	// set again: syncprim: once cell already set
}
