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
	kind int // linTry, linRelease, linAcquire, linCancelStart, linCancelEnd
	n    int
}

const (
	linTry = iota
	linRelease
	linAcquire // via future or blocking, that acquired
	// An acquire that gave up (a cancelled future, a timed-out blocking
	// acquire) is recorded as two operations with its interval: it may have
	// been granted a permit and given it back before returning, and while
	// it held it other operations saw one permit fewer. Start may take a
	// permit, end gives back what start took.
	linCancelStart
	linCancelEnd
)

// semState is the model's state: the free permits, and per client where
// its abandoned acquire stands (see semStep).
type semState struct {
	free  int
	phase [linClients]uint8
}

// Phases of a client's abandoned acquire, between its start and its end
// (either may be linearized first: they share one interval).
const (
	phaseIdle    = iota
	phaseStarted // start applied without taking a permit
	phaseTook    // start applied and took a permit
	phaseEnded   // end applied before start: start can no longer take
)

// linClients is the number of clients, ids 0 to linClients-1.
const linClients = 8

// semModel is the sequential specification: a permit count. Acquires are of
// 1 permit, so a queue exists only while no permit is free and TryAcquire
// fails exactly when fewer than n are free. An abandoned acquire may hold a
// permit for part of its interval (linCancelStart, linCancelEnd).
var semModel = (&porcupine.NondeterministicModel{
	Init: func() []any { return []any{semState{}} },
	Step: func(state, input, output any) []any {
		return semStep(state.(semState), input.(linIn), output.(bool), input.(linIn).n)
	},
	DescribeOperation: func(input, output any) string {
		in := input.(linIn)
		return fmt.Sprintf("%d(%d) -> %v", in.kind, in.n, output)
	},
}).ToModel()

// semStep returns the states st can step to with in and its output ok. For
// the two halves of an abandoned acquire, n carries the client id.
func semStep(st semState, in linIn, ok bool, n int) []any {
	switch in.kind {
	case linTry:
		if ok && st.free >= n {
			st.free -= n
			return []any{st}
		}
		if !ok && st.free < n {
			return []any{st}
		}
		return nil
	case linRelease:
		st.free += n
		return []any{st}
	case linAcquire:
		if st.free < 1 {
			return nil
		}
		st.free--
		return []any{st}
	case linCancelStart:
		c := n
		switch st.phase[c] {
		case phaseEnded:
			st.phase[c] = phaseIdle
			return []any{st}
		case phaseIdle:
			idle := st
			idle.phase[c] = phaseStarted
			next := []any{idle}
			if st.free >= 1 {
				took := st
				took.free--
				took.phase[c] = phaseTook
				next = append(next, took)
			}
			return next
		}
		return nil
	case linCancelEnd:
		c := n
		switch st.phase[c] {
		case phaseIdle:
			st.phase[c] = phaseEnded
		case phaseStarted:
			st.phase[c] = phaseIdle
		case phaseTook:
			st.free++
			st.phase[c] = phaseIdle
		default:
			return nil
		}
		return []any{st}
	}
	return nil
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
	if in.kind == linAcquire && !out {
		// An abandoned acquire: its two halves, with the client's id.
		r.ops = append(r.ops,
			porcupine.Operation{ClientId: client, Input: linIn{kind: linCancelStart, n: client}, Output: false, Call: call, Return: ret},
			porcupine.Operation{ClientId: client, Input: linIn{kind: linCancelEnd, n: client}, Output: false, Call: call, Return: ret})
	} else {
		r.ops = append(r.ops, porcupine.Operation{ClientId: client, Input: in, Output: out, Call: call, Return: ret})
	}
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
	const clients, opsPer = linClients, 20
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
				h.f = *s.Acquire(in.n)
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

// TestSemaphoreModelJudges checks the model itself: an over-grant is
// illegal; a TryAcquire that fails while an overlapping abandoned acquire
// may have held the one permit is legal; the same failure after the
// abandoned acquire returned is illegal.
func TestSemaphoreModelJudges(t *testing.T) {
	op := func(client int, in linIn, out bool, call, ret int64) []porcupine.Operation {
		r := &linRecorder{}
		r.add(client, in, out, call, ret)
		return r.ops
	}
	var overGrant []porcupine.Operation
	overGrant = append(overGrant, op(0, linIn{kind: linRelease, n: 1}, true, 0, 1)...)
	overGrant = append(overGrant, op(1, linIn{kind: linAcquire, n: 1}, true, 2, 5)...)
	overGrant = append(overGrant, op(2, linIn{kind: linAcquire, n: 1}, true, 3, 6)...)
	require.False(t, porcupine.CheckOperations(semModel, overGrant))

	var transient []porcupine.Operation
	transient = append(transient, op(0, linIn{kind: linRelease, n: 1}, true, 0, 1)...)
	transient = append(transient, op(1, linIn{kind: linAcquire, n: 1}, false, 2, 7)...) // abandoned
	transient = append(transient, op(2, linIn{kind: linTry, n: 1}, false, 3, 4)...)     // saw no permit
	transient = append(transient, op(2, linIn{kind: linTry, n: 1}, true, 8, 9)...)      // the permit is back
	require.True(t, porcupine.CheckOperations(semModel, transient))

	var noOverlap []porcupine.Operation
	noOverlap = append(noOverlap, op(0, linIn{kind: linRelease, n: 1}, true, 0, 1)...)
	noOverlap = append(noOverlap, op(1, linIn{kind: linAcquire, n: 1}, false, 2, 3)...) // abandoned, over before the try
	noOverlap = append(noOverlap, op(2, linIn{kind: linTry, n: 1}, false, 4, 5)...)     // a permit was free: illegal
	require.False(t, porcupine.CheckOperations(semModel, noOverlap))
}
