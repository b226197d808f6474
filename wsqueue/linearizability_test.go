package wsqueue_test

// Linearizability: short concurrent histories (one owner, two thieves) are
// recorded and checked against sequential specifications by a small
// Wing-Gong search (linearizable, below), so that the module's tests need
// nothing beyond the standard library. A state is a string of item ids,
// oldest first, so states compare with ==. These tests use the seams of
// export_test.go (indices near 2^32, steal hooks, the steal status); the
// module github.com/blitz-go/blitz/tests checks histories of the exported API
// with porcupine as well.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	. "github.com/blitz-go/blitz/wsqueue"
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
	x     int    // popped or stolen id (deque), 0 for nil
	items string // local queue: the overflow batch of a push, the items of a steal
	st    int    // local queue: StealStatus; deque: StealResult
}

// operation is one call of a history: its client, input and output, and the
// logical times of its call and return (all distinct).
type operation struct {
	client    int
	in        linIn
	out       linOut
	call, ret int64
}

// model is a sequential specification: step reports whether an operation
// with this input may return this output in state s, and the state after it.
type model struct {
	init string
	step func(s string, in linIn, out linOut) (bool, string)
}

// linearizable reports whether the operations of ops (at most 64) can be put
// in an order that respects real time (an operation that returned before
// another was called comes first) and that m accepts from its initial state.
// It searches depth-first, trying as the next operation each pending one
// called before the earliest return among the pending, and remembers the
// (set of operations done, state) pairs already explored (Wing and Gong's
// search with Lowe's memoization).
func linearizable(m model, ops []operation) bool {
	if len(ops) > 64 {
		panic("linearizable: more than 64 operations")
	}
	type node struct {
		done  uint64
		state string
	}
	all := uint64(1)<<len(ops) - 1
	if len(ops) == 64 {
		all = ^uint64(0)
	}
	explored := map[node]bool{}
	var search func(done uint64, state string) bool
	search = func(done uint64, state string) bool {
		if done == all {
			return true
		}
		if explored[node{done, state}] {
			return false
		}
		explored[node{done, state}] = true
		firstReturn := int64(math.MaxInt64)
		for i, op := range ops {
			if done&(1<<i) == 0 {
				firstReturn = min(firstReturn, op.ret)
			}
		}
		for i, op := range ops {
			if done&(1<<i) != 0 || op.call > firstReturn {
				continue
			}
			if ok, next := m.step(state, op.in, op.out); ok && search(done|1<<i, next) {
				return true
			}
		}
		return false
	}
	return search(0, m.init)
}

// describe renders an operation for failure messages.
func describe(i linIn, o linOut) string {
	switch i.op {
	case opPush:
		return fmt.Sprintf("push(%d) overflow=%v", i.x, []byte(o.items))
	case opPop:
		return fmt.Sprintf("pop() = %d", o.x)
	}
	return fmt.Sprintf("steal() = %d %v st=%d", o.x, []byte(o.items), o.st)
}

// localSpec is the sequential specification of the local queue of the given
// capacity, starting from init. It admits what a concurrent observer may see:
// a push may overflow alone at any time (a steal in progress, invisible in
// the sequential state, holds claimed slots), a steal may report busy at any
// time, and a steal takes at most half (rounded up) of the queue, because it
// sizes its claim from a tail read before its CAS.
func localSpec(capacity int, init string) model {
	return model{
		init: init,
		step: func(s string, in linIn, out linOut) (bool, string) {
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
			switch StealStatus(out.st) {
			case StatusEmpty:
				return s == "", s
			case StatusBusy:
				return true, s
			}
			n := len(out.items)
			return n >= 1 && n <= (len(s)+1)/2 && strings.HasPrefix(s, out.items), s[min(n, len(s)):]
		},
	}
}

// dequeSpec is the sequential specification of the Chase-Lev deque starting
// from init: the owner works at the end of the string, thieves at its start,
// and a thief may report retry at any time.
func dequeSpec(init string) model {
	return model{
		init: init,
		step: func(s string, in linIn, out linOut) (bool, string) {
			switch in.op {
			case opPush:
				return true, s + string(rune(in.x))
			case opPop:
				if out.x == 0 {
					return s == "", s
				}
				return s != "" && int(s[len(s)-1]) == out.x, s[:max(len(s)-1, 0)]
			}
			switch StealResult(out.st) {
			case StealEmpty:
				return s == "", s
			case StealRetry:
				return true, s
			}
			return s != "" && int(s[0]) == out.x, s[min(1, len(s)):]
		},
	}
}

// history records a concurrent history of up to three clients.
type history struct {
	clock   atomic.Int64
	clients [3][]operation // clients[c] is written only by client c
	ops     []operation    // all of them, once the clients are done
}

// do runs f as one operation of client and records it. Called only by the
// goroutine of client.
func (h *history) do(client int, in linIn, f func() linOut) {
	call := h.clock.Add(1)
	out := f()
	ret := h.clock.Add(1)
	h.clients[client] = append(h.clients[client], operation{client: client, in: in, out: out, call: call, ret: ret})
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

// yieldSometimes is a steal hook that gives up the processor at half of the
// pause points, so that other clients run in the middle of a steal even when
// the clients share one processor.
func yieldSometimes(HookPoint) {
	if rand.IntN(2) == 0 {
		runtime.Gosched()
	}
}

// jitter spins for a short random time, to vary how operations overlap.
func jitter(r *rand.Rand) {
	for range r.IntN(64) {
		spinSink.Add(1)
	}
}

// spinSink keeps jitter's loop from being optimized away.
var spinSink atomic.Int32

// overlapped counts the histories with concurrent operations.
var overlapped atomic.Int64

// overlaps counts the pairs of operations of different clients that ran
// concurrently.
func (h *history) overlaps() int {
	n := 0
	for i, a := range h.ops {
		for _, b := range h.ops[i+1:] {
			if a.client != b.client && a.call < b.ret && b.call < a.ret {
				n++
			}
		}
	}
	return n
}

// checkLinearizable fails t with the history if it is not linearizable.
func checkLinearizable(t *testing.T, m model, h *history) {
	t.Helper()
	if k := h.overlaps(); k > 0 {
		overlapping.Add(int64(k))
		overlapped.Add(1)
	}
	if linearizable(m, h.ops) {
		return
	}
	var b strings.Builder
	for _, op := range h.ops {
		fmt.Fprintf(&b, "\n  client %d [%d,%d] %s", op.client, op.call, op.ret, describe(op.in, op.out))
	}
	t.Fatalf("history is not linearizable (initial state %v):%s", []byte(m.init), b.String())
}

var overlapping atomic.Int64

// histories returns how many histories to record.
func histories() int {
	if testing.Short() {
		return 300
	}
	return 3000
}

// TestLocalQueueIsLinearizable records histories of pushes (which overflow:
// capacity 4), pops and steals from a prefilled queue.
func TestLocalQueueIsLinearizable(t *testing.T) {
	const capacity = 4
	for seed := range uint64(histories()) {
		r := rand.New(rand.NewPCG(seed, 0x11))
		o, s := NewAt[int](capacity, ^uint32(0)-uint32(r.IntN(8)))
		SetHook(s, yieldSometimes)
		next := 1
		init := ""
		for range r.IntN(capacity + 1) {
			o.Push(ints(next, 1)[0], nil)
			init += string(rune(next))
			next++
		}
		var h history
		var batch string
		overflow := OverflowFunc[int](func(b []*int) {
			for _, p := range b {
				batch += string(rune(*p))
			}
		})
		owner := func() {
			for range 6 {
				jitter(r)
				if r.IntN(4) == 0 {
					runtime.Gosched()
				}
				if r.IntN(2) == 0 {
					x := next
					next++
					h.do(0, linIn{op: opPush, x: x}, func() linOut {
						batch = ""
						o.Push(ints(x, 1)[0], overflow)
						return linOut{items: batch}
					})
				} else {
					h.do(0, linIn{op: opPop}, func() linOut { return linOut{x: max(val(o.Pop()), 0)} })
				}
			}
		}
		thief := func(client int) func() {
			dst, _ := New[int]()
			tr := rand.New(rand.NewPCG(uint64(client), r.Uint64()))
			return func() {
				for range 3 {
					jitter(tr)
					h.do(client, linIn{op: opSteal}, func() linOut {
						got, _, st := StealIntoN(s, dst)
						var items string
						for _, v := range popAll(dst) {
							items += string(rune(v))
						}
						if got != nil {
							items += string(rune(*got))
						}
						return linOut{items: items, st: int(st)}
					})
				}
			}
		}
		h.run(owner, thief(1), thief(2))
		checkLinearizable(t, localSpec(capacity, init), &h)
	}
	t.Logf("%d histories, %d with concurrent operations, %d concurrent pairs", histories(), overlapped.Swap(0), overlapping.Swap(0))
}

// TestDequeIsLinearizable records histories of pushes (which grow: initial
// capacity 2), pops and steals from a prefilled deque.
func TestDequeIsLinearizable(t *testing.T) {
	for seed := range uint64(histories()) {
		r := rand.New(rand.NewPCG(seed, 0x22))
		o, s := NewDeque[int](2)
		SetDequeHook(s, yieldSometimes)
		next := 1
		init := ""
		for range r.IntN(4) {
			o.Push(ints(next, 1)[0])
			init += string(rune(next))
			next++
		}
		var h history
		owner := func() {
			for range 6 {
				jitter(r)
				if r.IntN(4) == 0 {
					runtime.Gosched()
				}
				if r.IntN(2) == 0 {
					x := next
					next++
					h.do(0, linIn{op: opPush, x: x}, func() linOut {
						o.Push(ints(x, 1)[0])
						return linOut{}
					})
				} else {
					h.do(0, linIn{op: opPop}, func() linOut { return linOut{x: max(val(o.Pop()), 0)} })
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
						return linOut{x: max(val(got), 0), st: int(res)}
					})
				}
			}
		}
		h.run(owner, thief(1), thief(2))
		checkLinearizable(t, dequeSpec(init), &h)
	}
	t.Logf("%d histories, %d with concurrent operations, %d concurrent pairs", histories(), overlapped.Swap(0), overlapping.Swap(0))
}

// TestLinearizabilitySpecsRejectWrongHistories makes sure the specifications
// above are not vacuous: each history here breaks one rule and must fail.
func TestLinearizabilitySpecsRejectWrongHistories(t *testing.T) {
	seq := func(ops ...operation) []operation {
		for i := range ops {
			ops[i].call, ops[i].ret = int64(2*i), int64(2*i+1)
		}
		return ops
	}
	op := func(in linIn, out linOut) operation { return operation{in: in, out: out} }
	steal := func(items string) linOut { return linOut{items: items, st: int(StatusTaken)} }
	bad := map[string]struct {
		model model
		ops   []operation
	}{
		"local pop out of order": {localSpec(4, "\x01\x02"), seq(op(linIn{op: opPop}, linOut{x: 2}))},
		"local pop of empty":     {localSpec(4, ""), seq(op(linIn{op: opPop}, linOut{x: 1}))},
		"local steal over half":  {localSpec(4, "\x01\x02\x03\x04"), seq(op(linIn{op: opSteal}, steal("\x01\x02\x03")))},
		"local steal not oldest": {localSpec(4, "\x01\x02"), seq(op(linIn{op: opSteal}, steal("\x02")))},
		"local empty steal":      {localSpec(4, "\x01"), seq(op(linIn{op: opSteal}, linOut{st: int(StatusEmpty)}))},
		"local push lost":        {localSpec(4, ""), seq(op(linIn{op: opPush, x: 1}, linOut{}), op(linIn{op: opPop}, linOut{}))},
		"local half overflow when not full": {localSpec(4, "\x01\x02\x03"),
			seq(op(linIn{op: opPush, x: 4}, linOut{items: "\x01\x02\x04"}))},
		"deque pop not newest":   {dequeSpec("\x01\x02"), seq(op(linIn{op: opPop}, linOut{x: 1}))},
		"deque steal not oldest": {dequeSpec("\x01\x02"), seq(op(linIn{op: opSteal}, linOut{x: 2, st: int(StealSuccess)}))},
		"deque duplicate": {dequeSpec("\x01"), seq(op(linIn{op: opSteal}, linOut{x: 1, st: int(StealSuccess)}),
			op(linIn{op: opPop}, linOut{x: 1}))},
	}
	for name, c := range bad {
		if linearizable(c.model, c.ops) {
			t.Errorf("%s: the history was accepted", name)
		}
	}
}

// TestLinearizableFollowsRealTime checks the search itself: operations that
// overlap may take effect in either order, but one that returned before
// another was called must come first.
func TestLinearizableFollowsRealTime(t *testing.T) {
	push := operation{client: 0, in: linIn{op: opPush, x: 1}}
	steal := operation{client: 1, in: linIn{op: opSteal}, out: linOut{x: 1, st: int(StealSuccess)}}
	pop := operation{client: 0, in: linIn{op: opPop}, out: linOut{x: 1}}
	push2 := operation{client: 2, in: linIn{op: opPush, x: 2}}
	pop2 := operation{client: 0, in: linIn{op: opPop}, out: linOut{x: 2}}
	at := func(op operation, call, ret int64) operation {
		op.call, op.ret = call, ret
		return op
	}
	cases := []struct {
		name string
		ops  []operation
		want bool
	}{
		{"steal overlapping the push it sees", []operation{at(steal, 1, 4), at(push, 2, 3)}, true},
		{"steal called after the push returned", []operation{at(push, 1, 2), at(steal, 3, 4)}, true},
		{"steal returned before the push was called", []operation{at(steal, 1, 2), at(push, 3, 4)}, false},
		{"pop and steal overlap, both take the item", []operation{at(push, 1, 2), at(pop, 3, 6), at(steal, 4, 5)}, false},
		{"pop of an item stolen before it was called", []operation{at(push, 1, 2), at(steal, 3, 5), at(push2, 4, 7), at(pop, 6, 8)}, false},
		{"pop overlapping a second push", []operation{at(push, 1, 2), at(steal, 3, 5), at(push2, 4, 7), at(pop2, 6, 8)}, true},
	}
	for _, c := range cases {
		if got := linearizable(dequeSpec(""), c.ops); got != c.want {
			t.Errorf("%s: linearizable = %v, want %v", c.name, got, c.want)
		}
	}
}
