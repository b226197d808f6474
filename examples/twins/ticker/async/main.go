// Command ticker batches the lines of its input: every -period it prints
// the lines read since the last batch; at the end of the input or on
// interrupt it prints the last batch and exits. Written as an async
// function on the blitz runtime (ticker_async.go is generated: go
// generate); ../goroutines is the same program with goroutines.
//
//	(echo a; echo b; sleep 2; echo c) | go run ./examples/twins/ticker/async
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
)

func main() {
	period := flag.Duration("period", time.Second, "time between batches")
	flag.Parse()
	stop := blitz.Interrupt() // batch keeps it (OnKeep): its owner cancels it
	defer stop.Cancel()
	lines := channels.NewBounded[string](64)
	go func() { // reading stdin blocks: a goroutine feeds the channel
		defer lines.Close()
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if lines.SendBlocking(context.Background(), sc.Text()) != nil {
				return
			}
		}
	}()
	flush := func(b []string) { fmt.Println("batch:", strings.Join(b, ", ")) }
	if _, err := blitz.Run(context.Background(), batchAsync(lines, *period, stop, flush)); err != nil {
		log.Fatal(err)
	}
}
