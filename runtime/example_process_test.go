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

	// Stream the producer's output into sort's input as it comes.
	mustResult(runtime.BlockOn(ctx, h, runtime.Copy(sorter.Stdin(), producer.Stdout())))
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

// ExampleNewBufReader reads a child's output line by line as it comes,
// through a buffered reader, and answers each line through a buffered
// writer into another child.
func ExampleNewBufReader() {
	rt, err := runtime.New(runtime.Config{})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())
	h, ctx := rt.Handle(), context.Background()

	lister := mustResult(runtime.BlockOn(ctx, h,
		runtime.Command("sh", "-c", `printf "one\ntwo\r\nthree"`).Stdout(runtime.Piped).Spawn(h)))
	upper := mustResult(runtime.BlockOn(ctx, h,
		runtime.Command("tr", "a-z", "A-Z").Stdin(runtime.Piped).Stdout(runtime.Piped).Spawn(h)))

	lines := runtime.NewBufReader(lister.Stdout(), 0)
	answers := runtime.NewBufWriter(upper.Stdin(), 0)
	for {
		r, err := runtime.BlockOn(ctx, h, lines.ReadLine())
		if err != nil || r.Err != nil {
			break // io.EOF after the last line
		}
		mustResult(runtime.BlockOn(ctx, h, answers.WriteString(fmt.Sprintf("%d:%s\n", len(r.Value), r.Value))))
	}
	mustResult(runtime.BlockOn(ctx, h, answers.Flush()))
	out := mustResult(runtime.BlockOn(ctx, h, upper.Output()))
	mustResult(runtime.BlockOn(ctx, h, lister.Wait()))
	fmt.Print(string(out.Stdout))
	// Output:
	// 3:ONE
	// 3:TWO
	// 5:THREE
}
