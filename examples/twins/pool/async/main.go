// Command pool looks up the host names it reads, one per line, with a pool
// of -workers workers fed through a bounded queue, at most -limit lookups
// at a time, and prints the addresses in input order. Written as async
// functions on the blitz runtime (pool_async.go is generated: go
// generate); ../goroutines is the same program with goroutines.
//
//	printf 'localhost\ngo.dev\n' | go run ./examples/twins/pool/async
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
)

func main() {
	workers := flag.Int("workers", 8, "workers")
	limit := flag.Int("limit", 3, "lookups at a time")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	jobs := channels.NewBounded[job](16)
	go func() { // reading stdin blocks: a goroutine feeds the queue
		defer jobs.Close()
		sc := bufio.NewScanner(os.Stdin)
		for n := 0; sc.Scan(); n++ {
			if jobs.SendBlocking(ctx, job{n, sc.Text()}) != nil {
				return
			}
		}
	}()
	for _, r := range blitz.Main(ctx, lookupAllAsync(jobs, *workers, *limit, lookupHost)) {
		if r.err != nil {
			fmt.Printf("%s: %v\n", r.host, r.err)
			continue
		}
		fmt.Printf("%s: %v\n", r.host, r.addrs)
	}
}
