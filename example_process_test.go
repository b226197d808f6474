//go:build unix

package blitz_test

import (
	"context"
	"fmt"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
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
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())
	h, ctx := rt.Handle(), context.Background()

	producer := mustResult(blitz.BlockOn(ctx, h,
		blitz.Command("sh", "-c", `printf "b\na\nc\n"`).Stdout(blitz.Piped).Spawn(h)))
	sorter := mustResult(blitz.BlockOn(ctx, h,
		blitz.Command("sort").Stdin(blitz.Piped).Stdout(blitz.Piped).Spawn(h)))

	// Stream the producer's output into sort's input as it comes.
	mustResult(blitz.BlockOn(ctx, h, blitz.Copy(sorter.Stdin(), producer.Stdout())))
	// Output closes sort's input, reads its output to the end and waits.
	out := mustResult(blitz.BlockOn(ctx, h, sorter.Output()))
	status := mustResult(blitz.BlockOn(ctx, h, producer.Wait()))

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
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())
	h, ctx := rt.Handle(), context.Background()

	lister := mustResult(blitz.BlockOn(ctx, h,
		blitz.Command("sh", "-c", `printf "one\ntwo\r\nthree"`).Stdout(blitz.Piped).Spawn(h)))
	upper := mustResult(blitz.BlockOn(ctx, h,
		blitz.Command("tr", "a-z", "A-Z").Stdin(blitz.Piped).Stdout(blitz.Piped).Spawn(h)))

	lines := blitz.NewBufReader(lister.Stdout(), 0)
	answers := blitz.NewBufWriter(upper.Stdin(), 0)
	for {
		r, err := blitz.BlockOn(ctx, h, lines.ReadLine())
		if err != nil || r.Err != nil {
			break // io.EOF after the last line
		}
		mustResult(blitz.BlockOn(ctx, h, answers.WriteString(fmt.Sprintf("%d:%s\n", len(r.Value), r.Value))))
	}
	mustResult(blitz.BlockOn(ctx, h, answers.Flush()))
	out := mustResult(blitz.BlockOn(ctx, h, upper.Output()))
	mustResult(blitz.BlockOn(ctx, h, lister.Wait()))
	fmt.Print(string(out.Stdout))
	// Output:
	// 3:ONE
	// 3:TWO
	// 5:THREE
}
