// Command ticker batches the lines of its input: every -period it prints
// the lines read since the last batch; at the end of the input or on
// interrupt it prints the last batch and exits. Written as an async
// function on the blitz runtime (ticker_async.go is generated: go
// generate); ../goroutines is the same program with goroutines.
//
//	(echo a; echo b; sleep 2; echo c) | go run ./examples/twins/ticker/async
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/blitz-go/blitz"
)

func main() {
	period := flag.Duration("period", time.Second, "time between batches")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	in := blitz.NewBufReader(blitz.FromIOReader(os.Stdin), 4096) // read by the runtime's blocking pool
	flush := func(b []string) { fmt.Println("batch:", strings.Join(b, ", ")) }
	if _, err := blitz.Run(ctx, batchAsync(in, *period, flush)); err != nil && ctx.Err() == nil {
		log.Fatal(err) // an interrupt cancels batch, which flushes: not a failure
	}
}
