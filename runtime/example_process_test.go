//go:build unix

package runtime_test

import (
	"context"
	"fmt"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/runtime"
)

// mustResult unwraps what BlockOn returns for a future of a Result.
func mustResult[T any](r future.Result[T], err error) T {
	if err == nil {
		err = r.Err
	}
	if err != nil {
		panic(err)
	}
	return r.Value
}

// ExampleCommand runs a pipeline: the output of one process is fed to
// sort, whose output is collected.
func ExampleCommand() {
	rt, err := runtime.New(runtime.Config{})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())
	h, ctx := rt.Handle(), context.Background()

	producer := mustResult(runtime.BlockOn(ctx, h,
		runtime.Command("sh", "-c", `printf "b\na\nc\n"`).Stdout(runtime.Piped).Spawn(h)))
	sorter := mustResult(runtime.BlockOn(ctx, h,
		runtime.Command("sort").Stdin(runtime.Piped).Stdout(runtime.Piped).Spawn(h)))

	lines := mustResult(runtime.BlockOn(ctx, h, producer.Stdout().ReadAll()))
	mustResult(runtime.BlockOn(ctx, h, sorter.Stdin().Write(lines)))
	// Output closes sort's input, reads its output to the end and waits.
	out := mustResult(runtime.BlockOn(ctx, h, sorter.Output()))
	status := mustResult(runtime.BlockOn(ctx, h, producer.Wait()))

	fmt.Print(string(out.Stdout))
	fmt.Println(status, out.Status)
	// Output:
	// a
	// b
	// c
	// exit status 0 exit status 0
}
