package asyncbench

import (
	"errors"
	"fmt"
	"io"

	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

// handle is a connection handler: it reads values until EOF, answers an
// even value by writing its half (adding the write's count to the total)
// and adds an odd one to the total, fails on a negative one; then it waits
// at the gate, writes the total and returns it.
//
//blitz:async
func handle(c *Conn, g *Gate) (int, error) {
	total := 0
	for {
		rf := c.Read()
		r := future.Await(&rf)
		v, err := r.Get()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return total, err
		}
		switch {
		case v < 0:
			return total, ErrNegative
		case v%2 == 0:
			wf := c.Write(v / 2)
			total += future.Await(&wf)
		default:
			total += v
		}
	}
	gf := g.Wait()
	future.Await(&gf)
	wf := c.Write(total)
	future.Await(&wf)
	return total, nil
}

// handleClosing is handle closing its connection when it returns or is
// cancelled, with a deferred Close as a server's handler closes its socket:
// what a defer costs in the state machine.
//
//blitz:async
func handleClosing(c *Conn, g *Gate) (int, error) {
	defer c.Close()
	total := 0
	for {
		rf := c.Read()
		r := future.Await(&rf)
		v, err := r.Get()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return total, err
		}
		switch {
		case v < 0:
			return total, ErrNegative
		case v%2 == 0:
			wf := c.Write(v / 2)
			total += future.Await(&wf)
		default:
			total += v
		}
	}
	gf := g.Wait()
	future.Await(&gf)
	wf := c.Write(total)
	future.Await(&wf)
	return total, nil
}

// gather is a fan-out's collecting side: it awaits the result of each
// receiver in order and returns their sum weighted by position, or the
// first error.
//
//blitz:async
func gather(rs []channels.OneshotReceiver[int]) (int, error) {
	sum := 0
	for i, r := range rs {
		res := future.Await(r.Recv())
		v, err := res.Get()
		if err != nil {
			return sum, fmt.Errorf("asyncbench: result %d: %w", i, err)
		}
		sum += v * (i + 1)
	}
	return sum, nil
}

// awaitLoop awaits k futures, each ready at its second poll, and sums their
// values: the per-await benchmark in the style the runtime's value-type
// futures ask for (a fresh future each time, awaited through a pointer).
//
//blitz:async
func awaitLoop(k int) int {
	sum := 0
	for i := range k {
		lf := Later(i)
		sum += future.Await(&lf)
	}
	return sum
}

// awaitLoopReused is awaitLoop awaiting one LaterFuture that it resets
// before each await, which a caller can do to avoid an allocation per
// await.
//
//blitz:async
func awaitLoopReused(lf *LaterFuture, k int) int {
	sum := 0
	for i := range k {
		lf.Reset(i)
		sum += future.Await(lf)
	}
	return sum
}

// relay moves k values through a channel of capacity one, locking mu
// around each receive: the awaits are written future.Try(c.Recv()) and
// future.Await(mu.Lock()), the one way every future is awaited, and the
// generated state machine holds the channel's and the mutex's futures by
// value (they are future.Movable).
//
//blitz:async
func relay(c *channels.Bounded[int], mu *syncprim.Mutex, k int) (int, error) {
	sum := 0
	for i := range k {
		if err := future.Await(c.Send(i)); err != nil {
			return sum, err
		}
		g := future.Await(mu.Lock())
		v, err := future.Try(c.Recv())
		g.Unlock()
		if err != nil {
			return sum, err
		}
		sum += v
	}
	return sum, nil
}
