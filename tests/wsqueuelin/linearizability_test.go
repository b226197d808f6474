package wsqueuelin_test

// Linearizability through the exported API: short concurrent histories (one
// owner, two thieves) are recorded and checked with porcupine against
// sequential specifications. A state is a string of item ids, oldest first,
// so states compare with ==.

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/wsqueue"
)

// Operation kinds.
const (
	opPush  = 'u'
	opPop   = 'o'
	opSteal = 's'
)

// linIn is an operation's input.
type linIn struct {
	op byte
	x  int // pushed id
}

// linOut is an operation's output.
type linOut struct {
	x     int    // popped or stolen id, 0 for nil
	items string // local queue: the overflow batch of a push, the items of a steal
	st    wsqueue.StealResult
}

// describe renders an operation for failure messages.
func describe(in, out any) string {
	i, o := in.(linIn), out.(linOut)
	switch i.op {
	case opPush:
		return fmt.Sprintf("push(%d) overflow=%v", i.x, []byte(o.items))
	case opPop:
		return fmt.Sprintf("pop() = %d", o.x)
	}
	return fmt.Sprintf("steal() = %d %v %v", o.x, []byte(o.items), o.st)
}

// localSpec is the sequential specification of the local queue of the given
// capacity, starting from init, as seen through the exported API. It admits
// what a concurrent observer may see: a push may overflow alone at any time
// (a steal in progress, invisible in the sequential state, holds claimed
// slots), a steal may take nothing at any time (StealInto returns nil both
// for an empty queue and when another steal is in progress), and a steal
// takes at most half (rounded up) of the queue, because it sizes its claim
// from a tail read before its CAS.
func localSpec(capacity int, init string) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return init },
		Step: func(state, input, output any) (bool, any) {
			s, in, out := state.(string), input.(linIn), output.(linOut)
			switch in.op {
			case opPush:
				x := string(rune(in.x))
				switch {
				case out.items == "":
					return len(s) < capacity, s + x
				case out.items == x:
					return true, s
				case len(s) == capacity && out.items == s[:capacity/2]+x:
					return true, s[capacity/2:]
				}
				return false, s
			case opPop:
				if out.x == 0 {
					return s == "", s
				}
				return s != "" && int(s[0]) == out.x, s[min(1, len(s)):]
			}
			n := len(out.items)
			if n == 0 {
				return true, s
			}
			return n <= (len(s)+1)/2 && strings.HasPrefix(s, out.items), s[min(n, len(s)):]
		},
		DescribeOperation: describe,
	}
}

// dequeSpec is the sequential specification of the Chase-Lev deque starting
// from init: the owner works at the end of the string, thieves at its start,
// and a thief may report retry at any time.
func dequeSpec(init string) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return init },
		Step: func(state, input, output any) (bool, any) {
			s, in, out := state.(string), input.(linIn), output.(linOut)
			switch in.op {
			case opPush:
				return true, s + string(rune(in.x))
			case opPop:
				if out.x == 0 {
					return s == "", s
				}
				return s != "" && int(s[len(s)-1]) == out.x, s[:max(len(s)-1, 0)]
			}
			switch out.st {
			case wsqueue.StealEmpty:
				return s == "", s
			case wsqueue.StealRetry:
				return true, s
			}
			return s != "" && int(s[0]) == out.x, s[min(1, len(s)):]
		},
		DescribeOperation: describe,
	}
}

// history records a concurrent history of up to three clients.
type history struct {
	clock   atomic.Int64
	clients [3][]porcupine.Operation // clients[c] is written only by client c
	ops     []porcupine.Operation    // all of them, once the clients are done
}

// do runs f as one operation of client and records it. Called only by the
// goroutine of client.
func (h *history) do(client int, in linIn, f func() linOut) {
	call := h.clock.Add(1)
	out := f()
	ret := h.clock.Add(1)
	h.clients[client] = append(h.clients[client], porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
}

// run starts the clients together, each once all are running, and waits for
// them.
func (h *history) run(clients ...func()) {
	var wg sync.WaitGroup
	var ready atomic.Int32
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ready.Add(1)
			for spins := 0; ready.Load() < int32(len(clients)); spins++ {
				if spins%256 == 255 {
					runtime.Gosched() // more clients than processors
				}
			}
			c()
		}()
	}
	wg.Wait()
	for _, ops := range h.clients {
		h.ops = append(h.ops, ops...)
	}
}

// overlaps counts the pairs of operations of different clients that ran
// concurrently.
func (h *history) overlaps() int {
	n := 0
	for i, a := range h.ops {
		for _, b := range h.ops[i+1:] {
			if a.ClientId != b.ClientId && a.Call < b.Return && b.Call < a.Return {
				n++
			}
		}
	}
	return n
}

// jitter spins for a short random time, and sometimes gives up the
// processor, to vary how operations overlap: with no hooks inside a steal,
// this is the only way to let other clients run in the middle of one when
// the clients share a processor.
func jitter(r *rand.Rand) {
	for range r.IntN(64) {
		spinSink.Add(1)
	}
	if r.IntN(4) == 0 {
		runtime.Gosched()
	}
}

// spinSink keeps jitter's loop from being optimized away.
var spinSink atomic.Int32

// stats counts, over one test, the histories with concurrent operations and
// the concurrent pairs.
type stats struct{ overlapped, pairs int }

// check fails t with the history if it is not linearizable.
func (st *stats) check(t *testing.T, model porcupine.Model, h *history) {
	t.Helper()
	if k := h.overlaps(); k > 0 {
		st.pairs += k
		st.overlapped++
	}
	res, _ := porcupine.CheckOperationsVerbose(model, h.ops, 10*time.Second)
	if res == porcupine.Ok {
		return
	}
	var b strings.Builder
	for _, op := range h.ops {
		fmt.Fprintf(&b, "\n  client %d [%d,%d] %s", op.ClientId, op.Call, op.Return, describe(op.Input, op.Output))
	}
	t.Fatalf("history is %v:%s", res, b.String())
}

// histories returns how many histories to record.
func histories() int {
	if testing.Short() {
		return 300
	}
	return 3000
}

// item returns a new item holding x.
func item(x int) *int { return &x }

// val dereferences p, nil as 0.
func val(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// TestLocalQueueIsLinearizable records histories of pushes (which overflow:
// capacity 4), pops and steals from a prefilled queue.
func TestLocalQueueIsLinearizable(t *testing.T) {
	const capacity = 4
	var st stats
	for seed := range uint64(histories()) {
		r := rand.New(rand.NewPCG(seed, 0x11))
		o, s, err := wsqueue.NewSize[int](capacity)
		require.NoError(t, err)
		next := 1
		init := ""
		for range r.IntN(capacity + 1) {
			o.Push(item(next), nil)
			init += string(rune(next))
			next++
		}
		var h history
		var batch string
		overflow := wsqueue.OverflowFunc[int](func(b []*int) {
			for _, p := range b {
				batch += string(rune(*p))
			}
		})
		owner := func() {
			for range 6 {
				jitter(r)
				if r.IntN(2) == 0 {
					x := next
					next++
					h.do(0, linIn{op: opPush, x: x}, func() linOut {
						batch = ""
						o.Push(item(x), overflow)
						return linOut{items: batch}
					})
				} else {
					h.do(0, linIn{op: opPop}, func() linOut { return linOut{x: val(o.Pop())} })
				}
			}
		}
		thief := func(client int) func() {
			dst, _ := wsqueue.New[int]()
			tr := rand.New(rand.NewPCG(uint64(client), r.Uint64()))
			return func() {
				for range 3 {
					jitter(tr)
					h.do(client, linIn{op: opSteal}, func() linOut {
						got := s.StealInto(dst)
						var items string
						for p := dst.Pop(); p != nil; p = dst.Pop() {
							items += string(rune(*p))
						}
						if got != nil {
							items += string(rune(*got))
						}
						return linOut{items: items}
					})
				}
			}
		}
		h.run(owner, thief(1), thief(2))
		st.check(t, localSpec(capacity, init), &h)
	}
	t.Logf("%d histories, %d with concurrent operations, %d concurrent pairs", histories(), st.overlapped, st.pairs)
}

// TestDequeIsLinearizable records histories of pushes (which grow: initial
// capacity 2), pops and steals from a prefilled deque.
func TestDequeIsLinearizable(t *testing.T) {
	var st stats
	for seed := range uint64(histories()) {
		r := rand.New(rand.NewPCG(seed, 0x22))
		o, s := wsqueue.NewDeque[int](2)
		next := 1
		init := ""
		for range r.IntN(4) {
			o.Push(item(next))
			init += string(rune(next))
			next++
		}
		var h history
		owner := func() {
			for range 6 {
				jitter(r)
				if r.IntN(2) == 0 {
					x := next
					next++
					h.do(0, linIn{op: opPush, x: x}, func() linOut {
						o.Push(item(x))
						return linOut{}
					})
				} else {
					h.do(0, linIn{op: opPop}, func() linOut { return linOut{x: val(o.Pop())} })
				}
			}
		}
		thief := func(client int) func() {
			tr := rand.New(rand.NewPCG(uint64(client), r.Uint64()))
			return func() {
				for range 3 {
					jitter(tr)
					h.do(client, linIn{op: opSteal}, func() linOut {
						got, res := s.Steal()
						return linOut{x: val(got), st: res}
					})
				}
			}
		}
		h.run(owner, thief(1), thief(2))
		st.check(t, dequeSpec(init), &h)
	}
	t.Logf("%d histories, %d with concurrent operations, %d concurrent pairs", histories(), st.overlapped, st.pairs)
}

// TestLinearizabilitySpecsRejectWrongHistories makes sure the specifications
// above are not vacuous: each history here breaks one rule and must fail.
func TestLinearizabilitySpecsRejectWrongHistories(t *testing.T) {
	seq := func(ops ...porcupine.Operation) []porcupine.Operation {
		for i := range ops {
			ops[i].Call, ops[i].Return = int64(2*i), int64(2*i+1)
		}
		return ops
	}
	op := func(in linIn, out linOut) porcupine.Operation { return porcupine.Operation{Input: in, Output: out} }
	steal := func(items string) linOut { return linOut{items: items} }
	bad := map[string]struct {
		model porcupine.Model
		ops   []porcupine.Operation
	}{
		"local pop out of order": {localSpec(4, "\x01\x02"), seq(op(linIn{op: opPop}, linOut{x: 2}))},
		"local pop of empty":     {localSpec(4, ""), seq(op(linIn{op: opPop}, linOut{x: 1}))},
		"local steal over half":  {localSpec(4, "\x01\x02\x03\x04"), seq(op(linIn{op: opSteal}, steal("\x01\x02\x03")))},
		"local steal not oldest": {localSpec(4, "\x01\x02"), seq(op(linIn{op: opSteal}, steal("\x02")))},
		"local steal of empty":   {localSpec(4, ""), seq(op(linIn{op: opSteal}, steal("\x01")))},
		"local push lost":        {localSpec(4, ""), seq(op(linIn{op: opPush, x: 1}, linOut{}), op(linIn{op: opPop}, linOut{}))},
		"local half overflow when not full": {localSpec(4, "\x01\x02\x03"),
			seq(op(linIn{op: opPush, x: 4}, linOut{items: "\x01\x02\x04"}))},
		"deque pop not newest":   {dequeSpec("\x01\x02"), seq(op(linIn{op: opPop}, linOut{x: 1}))},
		"deque steal not oldest": {dequeSpec("\x01\x02"), seq(op(linIn{op: opSteal}, linOut{x: 2, st: wsqueue.StealSuccess}))},
		"deque empty steal":      {dequeSpec("\x01"), seq(op(linIn{op: opSteal}, linOut{st: wsqueue.StealEmpty}))},
		"deque duplicate": {dequeSpec("\x01"), seq(op(linIn{op: opSteal}, linOut{x: 1, st: wsqueue.StealSuccess}),
			op(linIn{op: opPop}, linOut{x: 1}))},
	}
	for name, c := range bad {
		assert.False(t, porcupine.CheckOperations(c.model, c.ops), name)
	}
}
