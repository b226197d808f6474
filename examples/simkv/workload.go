package simkv

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// Workload is a load of concurrent clients of the leader, each issuing
// random GETs and PUTs (half each) on a few keys, with a pause between
// them, for a while, and recording every operation in a History. Every
// PUT writes a value of its own ("c<client>-<n>"), so that a read tells
// which write it saw.
type Workload struct {
	// Addr is the leader's client address.
	Addr string
	// Clients is the number of client tasks; Keys the number of keys
	// ("k0", "k1", ...).
	Clients, Keys int
	// Duration is how long the clients keep issuing operations.
	Duration time.Duration
	// Timeout bounds each operation (connect included).
	Timeout time.Duration
	// Think is the longest pause between two operations of a client
	// (uniform from 0).
	Think time.Duration
	// Rand draws the clients' seeds: under simulation, the world's source
	// (World.Rand), so that the run is fixed by its seed.
	Rand *rand.Rand
}

// Run runs the clients on the runtime it is polled on until Duration has
// passed and returns their history.
//
//blitz:async
func (wl *Workload) Run() *History {
	hist := NewHistory()
	var set blitz.JoinSet[struct{}]
	defer set.Close()
	for id := range wl.Clients {
		rng := rand.New(rand.NewPCG(wl.Rand.Uint64(), wl.Rand.Uint64()))
		set.Spawn(future.Cx(), wl.clientAsync(id, rng, hist))
	}
	future.Await(set.All())
	return hist
}

// client is one client's loop.
//
//blitz:async
func (wl *Workload) client(id int, rng *rand.Rand, hist *History) {
	h, _ := blitz.Current(future.Cx())
	cl := NewClient(h, wl.Addr, wl.Timeout)
	defer cl.Close()
	for n := 0; hist.Now() < int64(wl.Duration); n++ {
		op := Op{Client: id, Put: rng.IntN(2) == 0, Key: "k" + strconv.Itoa(rng.IntN(wl.Keys))}
		if op.Put {
			op.Value = "c" + strconv.Itoa(id) + "-" + strconv.Itoa(n)
		}
		op.Call = hist.Now()
		out := future.Await(wl.doAsync(cl, op))
		op.Return = hist.Now()
		if wl.record(&op, out) {
			hist.Add(op)
		}
		if wl.Think > 0 {
			future.Await(blitz.Sleep(time.Duration(rng.Int64N(int64(wl.Think)))))
		}
	}
}

// outcome is what came back for an operation.
type outcome struct {
	get GetResult
	err error
}

// do runs op with cl.
//
//blitz:async
func (wl *Workload) do(cl *Client, op Op) outcome {
	if op.Put {
		err := future.Await(cl.PutAsync(op.Key, op.Value))
		return outcome{err: err}
	}
	g, err := future.Try(cl.GetAsync(op.Key))
	return outcome{get: g, err: err}
}

// record completes op (its Return set) from its outcome and reports whether it belongs in
// the history: a failed GET says nothing and a PUT that was not sent had
// no effect; a PUT that failed otherwise has an unknown outcome.
func (wl *Workload) record(op *Op, out outcome) bool {
	switch {
	case out.err == nil:
		if !op.Put {
			op.Value, op.Found = out.get.Value, out.get.Found
		}
		return true
	case errors.Is(out.err, ErrNotSent) || !op.Put:
		return false
	}
	op.Return = Unknown
	return true
}
