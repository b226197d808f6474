package syncprim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/require"
)

// linIn is the input of one recorded semaphore operation.
type linIn struct {
	kind int // linTry, linRelease, linAcquire
	n    int
}

const (
	linTry = iota
	linRelease
	linAcquire // via future or blocking; output true if it acquired
)

// semModel is the sequential specification: a permit count. Acquires are of
// 1 permit, so a queue exists only while no permit is free and TryAcquire
// fails exactly when fewer than n are free. A cancelled or timed-out acquire
// (output false) has no effect: if it was granted it gave the permit back.
var semModel = porcupine.Model{
	Init: func() any { return 0 },
	Step: func(state, input, output any) (bool, any) {
		st, in, ok := state.(int), input.(linIn), output.(bool)
		switch in.kind {
		case linTry:
			if ok {
				return st >= in.n, st - in.n
			}
			return st < in.n, st
		case linRelease:
			return true, st + in.n
		default:
			if ok {
				return st >= 1, st - 1
			}
			return true, st
		}
	},
	DescribeOperation: func(input, output any) string {
		in := input.(linIn)
		return fmt.Sprintf("%d(%d) -> %v", in.kind, in.n, output)
	},
}

// linRecorder records operations with a logical clock that respects real
// time: every call and return takes the next tick.
type linRecorder struct {
	clock atomic.Int64
	mu    sync.Mutex
	ops   []porcupine.Operation
}

func (r *linRecorder) now() int64 { return r.clock.Add(1) }

func (r *linRecorder) add(client int, in linIn, out bool, call, ret int64) {
	r.mu.Lock()
	r.ops = append(r.ops, porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: ret})
	r.mu.Unlock()
}

// linClient is one client's random choices: it acquires by waiting only
// while it holds nothing (so the clients cannot deadlock) and gives back
// everything before it ends.
type linClient struct {
	rng  *rand.Rand
	held int
	left int
}

// next picks the next operation.
func (c *linClient) next() linIn {
	if c.left == 0 && c.held > 0 {
		return linIn{kind: linRelease, n: c.held}
	}
	switch r := c.rng.IntN(10); {
	case r < 3:
		return linIn{kind: linTry, n: 1 + c.rng.IntN(2)}
	case r < 6 && c.held > 0:
		return linIn{kind: linRelease, n: 1 + c.rng.IntN(c.held)}
	case c.held == 0:
		return linIn{kind: linAcquire, n: 1}
	default:
		return linIn{kind: linTry, n: 1}
	}
}

// done records the result of in.
func (c *linClient) done(in linIn, ok bool) {
	switch {
	case in.kind == linRelease:
		c.held -= in.n
	case ok:
		c.held += in.n
	}
	if c.left > 0 {
		c.left--
	}
}

func (c *linClient) finished() bool { return c.left == 0 && c.held == 0 }

// TestSemaphoreLinearizable records short histories of TryAcquire, Release,
// Acquire (futures polled by tasks, some cancelled) and AcquireBlocking
// (some with a ctx that times out) from 4 goroutines and 4 tasks, and checks
// each with porcupine against a permit counter.
func TestSemaphoreLinearizable(t *testing.T) {
	rounds := 60
	if testing.Short() {
		rounds = 15
	}
	sch := newScheduler(t, 2)
	const clients, opsPer = 8, 20
	for round := range rounds {
		s := NewSemaphore(0)
		rec := &linRecorder{}
		// Start with 2 permits, recorded as a release.
		c0 := rec.now()
		s.Release(2)
		rec.add(0, linIn{kind: linRelease, n: 2}, true, c0, rec.now())
		var wg sync.WaitGroup
		var tasks []func()
		for id := range clients {
			cl := &linClient{rng: rand.New(rand.NewPCG(uint64(round), uint64(id))), left: opsPer}
			if id%2 == 0 {
				wg.Go(func() { runLinGoroutine(s, rec, id, cl) })
				continue
			}
			jh := spawnFn(sch, linTask(s, rec, id, cl))
			tasks = append(tasks, func() { waitAll(t, jh) })
		}
		wg.Wait()
		for _, w := range tasks {
			w()
		}
		res, info := porcupine.CheckOperationsVerbose(semModel, rec.ops, 10*time.Second)
		if res != porcupine.Ok {
			_ = porcupine.VisualizePath(semModel, info, t.TempDir()+"/lin.html")
			t.Fatalf("round %d: history not linearizable (%v), %d ops", round, res, len(rec.ops))
		}
		require.Equal(t, 2, s.Available())
		require.Equal(t, 0, s.waiters())
	}
}

// runLinGoroutine is a goroutine client using TryAcquire, Release and
// AcquireBlocking (every third with a short timeout).
func runLinGoroutine(s *Semaphore, rec *linRecorder, id int, cl *linClient) {
	for k := 0; !cl.finished(); k++ {
		in := cl.next()
		call := rec.now()
		ok := true
		switch in.kind {
		case linTry:
			ok = s.TryAcquire(in.n)
		case linRelease:
			s.Release(in.n)
		case linAcquire:
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if k%3 == 0 {
				ctx, cancel = context.WithTimeout(ctx, time.Duration(cl.rng.IntN(50))*time.Microsecond)
			}
			ok = s.AcquireBlocking(ctx, in.n) == nil
			cancel()
		}
		rec.add(id, in, ok, call, rec.now())
		cl.done(in, ok)
	}
}

// linTask is a task client: acquires go through an AcquireFuture in its
// state, and every fourth acquire is cancelled after its first poll if it
// did not complete (a select that lost).
func linTask(s *Semaphore, rec *linRecorder, id int, cl *linClient) func(cx *future.Context) bool {
	var (
		h       acqHolder
		waiting bool
		call    int64
		k       int
	)
	return func(cx *future.Context) bool {
		for !cl.finished() {
			if waiting {
				_, ok := h.f.Poll(cx)
				if !ok {
					return false
				}
				waiting = false
				rec.add(id, linIn{kind: linAcquire, n: 1}, true, call, rec.now())
				cl.done(linIn{kind: linAcquire, n: 1}, true)
				continue
			}
			k++
			in := cl.next()
			call = rec.now()
			ok := true
			switch in.kind {
			case linTry:
				ok = s.TryAcquire(in.n)
			case linRelease:
				s.Release(in.n)
			case linAcquire:
				h.f = s.Acquire(in.n)
				if _, ok = h.f.Poll(cx); !ok {
					if k%4 == 0 {
						h.f.Cancel()
					} else {
						waiting = true
						return false
					}
				}
			}
			rec.add(id, in, ok, call, rec.now())
			cl.done(in, ok)
		}
		return true
	}
}
