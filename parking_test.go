package blitz_test

import (
	"context"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// parkGate is a future that a goroutine opens: a wake from outside the
// runtime, landing at any moment of a worker's park.
type parkGate struct {
	mu   sync.Mutex
	open bool
	wk   waker.Waker
}

func (g *parkGate) Poll(cx *future.Context) (struct{}, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open {
		return struct{}{}, true
	}
	g.wk = cx.Waker()
	return struct{}{}, false
}

func (g *parkGate) openNow() {
	g.mu.Lock()
	g.open = true
	wk := g.wk
	g.mu.Unlock()
	wk.Wake()
}

// parkingScenarios are the ways work reaches parked workers: a spawn from
// outside, a ring op from a task, a ring op submitted from a goroutine to a
// ring whose worker parked on its channel (it must be brought back to the
// ring), an op whose only way to complete is its timeout, kept by the
// backend (the reactor's timer heap on epoll), submitted from a goroutine
// at any moment of the holder's wait, a wake from a goroutine, and a timer.
var parkingScenarios = []string{"spawn", "ringOpFromTask", "ringOpFromOutside", "timedOpFromOutside", "outsideWake", "timer"}

// TestWakeWhileParking is the torture test of parking: work arrives at
// random moments relative to the workers' parks (on their channels, or in a
// ring through Go's poller), from every source, on every backend, with a
// ring per worker and with fewer rings than workers. Each piece of work
// must complete; a lost wakeup shows as a round that does not finish within
// the watchdog.
func TestWakeWhileParking(t *testing.T) {
	rounds := 1500
	if testing.Short() {
		rounds = 250
	}
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		for _, shape := range []struct {
			name             string
			workers, ioRings int
		}{{"ringPerWorker", 2, 0}, {"oneRingThreeWorkers", 3, 1}} {
			t.Run(shape.name, func(t *testing.T) {
				cfg.Workers, cfg.IORings = shape.workers, shape.ioRings
				if cfg.Backend == blitz.BackendIOCP || cfg.Backend == blitz.BackendKqueue || cfg.Backend == blitz.BackendPoll {
					cfg.IORings = 0 // one ring whatever the workers
				}
				rt := newRuntime(t, cfg)
				c1, c2, err := boundedPipe(rt)
				if err != nil {
					t.Fatalf("connecting a pair on the runtime: %v; stats %+v", err, rt.Stats())
				}
				defer c1.Close()
				defer c2.Close()
				rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
				for round := range rounds {
					time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond) // let the workers park, or not
					s := rng.IntN(len(parkingScenarios))
					if err := parkingRound(rt, rng, s, c1, c2); err != nil {
						t.Fatalf("round %d, %s: %v; stats %+v", round, parkingScenarios[s], err, rt.Stats())
					}
				}
			})
		}
	})
}

// boundedPipe is netPipe under the watchdog: a connected pair of NetConns
// on rt, the dial made from outside the workers (BlockOn).
func boundedPipe(rt *blitz.Runtime) (net.Conn, net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	defer cancel()
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	defer l.Close()
	type accepted struct {
		c   net.Conn
		err error
	}
	ch := make(chan accepted, 1)
	go func() {
		c, err := blitz.NetListener(l).Accept()
		ch <- accepted{c, err}
	}()
	d, err := blitz.BlockOn(ctx, rt.Handle(), future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(rt.Handle(), l.AddrPort().String(), watchdog)))
	if err == nil {
		err = d.Err
	}
	if err != nil {
		return nil, nil, err
	}
	select {
	case a := <-ch:
		if a.err != nil {
			d.Value.Close()
			return nil, nil, a.err
		}
		return a.c, blitz.NetConn(d.Value), nil
	case <-ctx.Done():
		d.Value.Close()
		return nil, nil, ctx.Err()
	}
}

// watchdog bounds a round: far longer than any round takes on a loaded
// machine, so that only a lost wakeup reaches it.
const watchdog = 10 * time.Second

// parkingRound runs scenario s once and waits for it under the watchdog.
func parkingRound(rt *blitz.Runtime, rng *rand.Rand, s int, c1, c2 net.Conn) error {
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	defer cancel()
	h := rt.Handle()
	delay := time.Duration(rng.IntN(200)) * time.Microsecond
	switch parkingScenarios[s] {
	case "spawn":
		_, err := blitz.SpawnOn[struct{}](h, future.Ready(struct{}{})).Wait(ctx)
		return err
	case "ringOpFromTask":
		op := backend.Op{Kind: backend.KindTimeout, Timeout: delay + time.Microsecond}
		_, err := blitz.SpawnOn(h, blitz.NewOpFuture(op)).Wait(ctx)
		return err
	case "ringOpFromOutside":
		// The NetConn adapter submits from this goroutine, outside any
		// worker, to the socket's ring.
		go func() {
			time.Sleep(delay)
			_, _ = c1.Write([]byte{1})
		}()
		// The read runs on a goroutine of its own, so that a lost wakeup
		// (which leaves even a deadline's cancel uncollected) fails the
		// round instead of hanging the test.
		res := make(chan error, 1)
		go func() {
			var b [1]byte
			_, err := c2.Read(b[:])
			res <- err
		}()
		select {
		case err := <-res:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	case "timedOpFromOutside":
		op := backend.Op{Kind: backend.KindTimeout, Timeout: delay + time.Microsecond}
		_, err := blitz.BlockOn(ctx, h, blitz.NewOpFuture(op))
		return err
	case "outsideWake":
		g := &parkGate{}
		jh := blitz.SpawnOn[struct{}](h, g)
		go func() {
			time.Sleep(delay)
			g.openNow()
		}()
		_, err := jh.Wait(ctx)
		return err
	default: // timer
		_, err := blitz.SpawnOn(h, blitz.Sleep(delay)).Wait(ctx)
		return err
	}
}
