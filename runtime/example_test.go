package runtime_test

//lint:file-ignore SA1019 the deprecated package is what the example shows

import (
	"context"
	"fmt"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/runtime"
)

// A program still on the old path keeps working, and its values are the
// new package's: a *runtime.Runtime is a *blitz.Runtime, so files can move
// to the new import one at a time.
func Example() {
	rt, err := runtime.New(runtime.Config{Workers: 1}) // the old path
	if err != nil {
		panic(err)
	}
	var moved *blitz.Runtime = rt // the same type
	defer moved.Shutdown(context.Background())

	v, err := blitz.BlockOn(context.Background(), moved.Handle(), future.Ready("moved"))
	fmt.Println(v, err)
	// Output: moved <nil>
}
