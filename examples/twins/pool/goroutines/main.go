// Command pool looks up the host names it reads, one per line, with a pool
// of -workers workers fed through a bounded queue, at most -limit lookups
// at a time, and prints the addresses in input order. Written with
// goroutines; ../async is the same program on the blitz runtime.
//
//	printf 'localhost\ngo.dev\n' | go run ./examples/twins/pool/goroutines
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	workers := flag.Int("workers", 8, "workers")
	limit := flag.Int("limit", 3, "lookups at a time")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	jobs := make(chan job, 16)
	go func() {
		defer close(jobs)
		sc := bufio.NewScanner(os.Stdin)
		for n := 0; sc.Scan(); n++ {
			jobs <- job{n, sc.Text()}
		}
	}()
	for _, r := range lookupAll(ctx, jobs, *workers, *limit, lookupHost) {
		if r.err != nil {
			fmt.Printf("%s: %v\n", r.host, r.err)
			continue
		}
		fmt.Printf("%s: %v\n", r.host, r.addrs)
	}
}
