// Command ticker is a pipeline stage written as an async function that, in
// a loop, waits for a tick, a job or a stop signal with a select over
// futures: every tick it flushes the jobs it batched, and it returns when
// the job channel is closed and drained, or on an interrupt (Ctrl-C).
package main

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

// batch is what pump has received since its last flush. Only pump's task
// touches it.
var batch []string

// handle batches a job.
func handle(job string) { batch = append(batch, job) }

// flush prints the batch, if any, and empties it.
func flush() {
	if len(batch) > 0 {
		fmt.Println("flush:", strings.Join(batch, " "))
		batch = batch[:0]
	}
}

//blitz:async
func pump(iv *blitz.Interval, jobs *channels.Bounded[string], stop future.Future[future.Result[os.Signal]]) error {
	for {
		select {
		case <-future.OnKeep(iv):
			flush()
		case r := <-future.On(jobs.Recv()):
			if r.Err != nil {
				return r.Err // channels.ErrClosed
			}
			handle(r.Value)
		case <-future.OnKeep(stop):
			return nil
		}
	}
}

func main() {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	h := rt.Handle()

	iv, err := blitz.NewInterval(50*time.Millisecond, blitz.Skip)
	if err != nil {
		log.Fatal(err)
	}
	defer iv.Cancel() // pump keeps it (OnKeep): its owner cancels it
	stop := blitz.Interrupt()
	defer stop.Cancel()
	jobs := channels.NewBounded[string](8)

	task := blitz.SpawnOn(h, pumpAsync(iv, jobs, stop))
	for _, job := range strings.Fields("fetch parse index store") {
		if err := jobs.SendBlocking(context.Background(), job); err != nil {
			log.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	jobs.Close()
	perr, err := task.Wait(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	flush()
	fmt.Println("pump returned:", perr)
}
