// Command ticker batches the lines of its input: every -period it prints
// the lines read since the last batch; at the end of the input or on
// interrupt it prints the last batch and exits. Written with goroutines;
// ../async is the same program on the blitz runtime.
//
//	(echo a; echo b; sleep 2; echo c) | go run ./examples/twins/ticker/goroutines
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"
)

func main() {
	period := flag.Duration("period", time.Second, "time between batches")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	batch(ctx, lines, *period, func(b []string) { fmt.Println("batch:", strings.Join(b, ", ")) })
}
