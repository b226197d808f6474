package future

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/blitz-go/blitz/waker"
	"github.com/stretchr/testify/require"
)

// The model: random trees of combinators over Probe leaves (and Ready
// leaves), the probes completed one per step in a random order, the root
// polled only when its Waker was woken. A reference evaluation says at
// which step each node completes and with what value, and which probes the
// combinators must cancel; the run must match it exactly. Every value is an
// int so that one reference function covers every combinator; the
// combinators of other types (Join2's Pair, Select2's string side, the
// try-joins' Result) are wrapped in Maps that fold to an int.

// kind is the combinator (or leaf) at a node.
type kind uint8

const (
	kProbe kind = iota
	kReady
	kMap
	kThen
	kJoin2
	kJoinAll
	kTryJoin2
	kTryJoinAll
	kRace
	kSelect
	kSelect2
	kindCount
)

var kindNames = [...]string{"probe", "ready", "map", "then", "join2", "joinAll", "tryJoin2", "tryJoinAll", "race", "select", "select2"}

func (k kind) String() string { return kindNames[k] }

// node is one node of a model tree. The reference evaluation fills a, t
// and v.
type node struct {
	kind  kind
	kids  []*node
	probe int // kProbe: index of the probe
	val   int // kReady: the value

	a int // step at which the node is first polled (activated)
	t int // step at which it completes, if nothing cancels it first
	v int // its value
}

// chooser is where a tree's shape and schedule come from: a seeded PRNG in
// the model test, the fuzzer's bytes in the fuzz target.
type chooser interface {
	intn(n int) int
}

type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int) int { return c.r.IntN(n) }

// byteChooser reads one byte per choice and answers 0 once out of bytes.
type byteChooser struct {
	b []byte
	i int
}

func (c *byteChooser) intn(n int) int {
	if c.i >= len(c.b) {
		return 0
	}
	x := int(c.b[c.i])
	c.i++
	return x % n
}

// failErr is the error a try-join child fails with: its value carries the
// child's int so that the reference can decode which child failed.
type failErr struct{ v int }

func (e *failErr) Error() string { return "fail " + strconv.Itoa(e.v) }

// fails reports whether a try-join child with value v fails.
func fails(v int) bool { return v%5 == 0 }

// scenario is a model tree with its probes and schedule.
type scenario struct {
	root   *node
	probes []*Probe[int]
	vals   []int // vals[i] is the value probe i completes with
	at     []int // at[i] is the step (1..len) at which probe i completes
	order  []int // order[s-1] is the probe completed at step s
	cancel int   // step after whose poll the root is cancelled; -1 for never
	reg    *Registry
}

// genScenario builds a random tree of at most depth levels, and a random
// completion order and cancel step.
func genScenario(c chooser, depth, maxKids int) *scenario {
	sc := &scenario{reg: &Registry{}}
	sc.root = sc.gen(c, depth, maxKids)
	n := len(sc.probes)
	sc.order = make([]int, n)
	for i := range sc.order {
		sc.order[i] = i
	}
	for i := n - 1; i > 0; i-- { // Fisher-Yates
		j := c.intn(i + 1)
		sc.order[i], sc.order[j] = sc.order[j], sc.order[i]
	}
	sc.at = make([]int, n)
	for s, p := range sc.order {
		sc.at[p] = s + 1
	}
	sc.cancel = -1
	if c.intn(3) == 0 {
		sc.cancel = c.intn(n + 1)
	}
	return sc
}

func (sc *scenario) gen(c chooser, depth, maxKids int) *node {
	if depth == 0 || c.intn(4) == 0 {
		if c.intn(8) == 0 {
			return &node{kind: kReady, val: c.intn(21)}
		}
		sc.probes = append(sc.probes, NewProbe[int](sc.reg))
		sc.vals = append(sc.vals, c.intn(21))
		return &node{kind: kProbe, probe: len(sc.probes) - 1}
	}
	n := &node{kind: kMap + kind(c.intn(int(kindCount-kMap)))}
	var kids int
	switch n.kind {
	case kMap:
		kids = 1
	case kThen, kJoin2, kTryJoin2, kSelect2:
		kids = 2
	case kJoinAll, kTryJoinAll:
		kids = c.intn(maxKids + 1) // zero children is legal for the joins
	case kRace, kSelect:
		kids = 1 + c.intn(maxKids)
	}
	for range kids {
		n.kids = append(n.kids, sc.gen(c, depth-1, maxKids))
	}
	return n
}

// fold is JoinAll's and TryJoinAll's int summary of their values.
func fold(xs []int) int {
	h := 17
	for _, x := range xs {
		h = h*31 + x
	}
	return h
}

// toResult is how a try-join sees a child's int.
func toResult(v int) Result[int] {
	if fails(v) {
		return Fail[int](&failErr{v})
	}
	return Ok(v)
}

// fromErr is a failed try-join's int.
func fromErr(err error) int {
	var fe *failErr
	if !errors.As(err, &fe) {
		panic(fmt.Sprintf("unexpected error %v", err))
	}
	return -1000 - fe.v
}

// build makes the future for n. Then builds its second future lazily, in
// its function, as a real program would.
func (sc *scenario) build(n *node) Future[int] {
	switch n.kind {
	case kProbe:
		return sc.probes[n.probe]
	case kReady:
		return Ready(n.val)
	case kMap:
		return Map(sc.build(n.kids[0]), func(x int) int { return 3*x + 1 })
	case kThen:
		return Then(sc.build(n.kids[0]), func(x int) Future[int] {
			return Map(sc.build(n.kids[1]), func(y int) int { return 5*x + y })
		})
	case kJoin2:
		return Map(Join2(sc.build(n.kids[0]), sc.build(n.kids[1])), func(p Pair[int, int]) int { return p.First*31 + p.Second })
	case kJoinAll:
		return Map(JoinAll(sc.buildAll(n.kids)...), fold)
	case kTryJoin2:
		a, b := Map(sc.build(n.kids[0]), toResult), Map(sc.build(n.kids[1]), toResult)
		return Map(TryJoin2(a, b), func(r Result[Pair[int, int]]) int {
			if r.Err != nil {
				return fromErr(r.Err)
			}
			return r.Value.First*31 + r.Value.Second
		})
	case kTryJoinAll:
		fs := make([]Future[Result[int]], len(n.kids))
		for i, k := range n.kids {
			fs[i] = Map(sc.build(k), toResult)
		}
		return Map(TryJoinAll(fs...), func(r Result[[]int]) int {
			if r.Err != nil {
				return fromErr(r.Err)
			}
			return fold(r.Value)
		})
	case kRace:
		return Race(sc.buildAll(n.kids)...)
	case kSelect:
		return Map(Select(sc.buildAll(n.kids)...), func(s Selected[int]) int { return s.Index*1000 + s.Value })
	case kSelect2:
		b := Map(sc.build(n.kids[1]), strconv.Itoa)
		return Map(Select2(sc.build(n.kids[0]), b), func(s Selected2[int, string]) int {
			if s.Index == 0 {
				return 2 * s.First
			}
			y, err := strconv.Atoi(s.Second)
			if err != nil {
				panic(err)
			}
			return 2*y + 1
		})
	}
	panic("unknown kind")
}

func (sc *scenario) buildAll(ns []*node) []Future[int] {
	fs := make([]Future[int], len(ns))
	for i, k := range ns {
		fs[i] = sc.build(k)
	}
	return fs
}

// eval is the reference: it fills n.a, n.t and n.v for n activated (first
// polled) at step a, assuming nothing cancels it. The root is polled at step
// 0 and after every step that wakes it; a poll with nothing new is a no-op,
// so a node completes at the first step at which its inputs are all there.
func (sc *scenario) eval(n *node, a int) {
	n.a = a
	for _, k := range n.kids {
		if n.kind != kThen {
			sc.eval(k, a)
		}
	}
	switch n.kind {
	case kProbe:
		n.t, n.v = max(a, sc.at[n.probe]), sc.vals[n.probe]
	case kReady:
		n.t, n.v = a, n.val
	case kMap:
		n.t, n.v = n.kids[0].t, 3*n.kids[0].v+1
	case kThen:
		first, second := n.kids[0], n.kids[1]
		sc.eval(first, a)
		sc.eval(second, first.t) // made and polled in the Poll that sees first complete
		n.t, n.v = second.t, 5*first.v+second.v
	case kJoin2:
		n.t, n.v = max(n.kids[0].t, n.kids[1].t), n.kids[0].v*31+n.kids[1].v
	case kJoinAll:
		n.t = a
		xs := make([]int, len(n.kids))
		for i, k := range n.kids {
			n.t, xs[i] = max(n.t, k.t), k.v
		}
		n.v = fold(xs)
	case kTryJoin2, kTryJoinAll:
		if j := failing(n); j >= 0 {
			n.t, n.v = n.kids[j].t, -1000-n.kids[j].v
			return
		}
		n.t = a
		xs := make([]int, len(n.kids))
		for i, k := range n.kids {
			n.t, xs[i] = max(n.t, k.t), k.v
		}
		if n.kind == kTryJoin2 {
			n.v = xs[0]*31 + xs[1]
		} else {
			n.v = fold(xs)
		}
	case kRace, kSelect, kSelect2:
		w := winner(n)
		n.t = n.kids[w].t
		switch n.kind {
		case kRace:
			n.v = n.kids[w].v
		case kSelect:
			n.v = w*1000 + n.kids[w].v
		default:
			n.v = 2*n.kids[w].v + w
		}
	}
}

// winner is the index of a race's winning child: the earliest, the lowest
// index among the earliest (biased polling).
func winner(n *node) int {
	w := 0
	for i, k := range n.kids {
		if k.t < n.kids[w].t {
			w = i
		}
	}
	return w
}

// failing is the index of the child that stops a try-join: the earliest
// failing child, the lowest index among the earliest; -1 if none fails.
func failing(n *node) int {
	j := -1
	for i, k := range n.kids {
		if fails(k.v) && (j < 0 || k.t < n.kids[j].t) {
			j = i
		}
	}
	return j
}

// expect is what the reference says happens to each probe.
type expect struct {
	cancels   []int  // Cancel calls per probe
	delivered []bool // Poll returned the value
}

// done records what happens under n, which completes at n.t: children that
// complete are done, and the ones it abandons are cancelled as they were
// at that moment.
func (sc *scenario) done(n *node, e *expect) {
	switch n.kind {
	case kProbe:
		e.delivered[n.probe] = true
	case kReady:
	case kRace, kSelect, kSelect2:
		w := winner(n)
		sc.done(n.kids[w], e)
		for i, k := range n.kids {
			switch {
			case i < w: // polled in the winning Poll, still pending
				sc.cancelAt(k, n.t, e)
			case i > w: // not polled in the winning Poll
				sc.cancelAt(k, n.t-1, e)
			}
		}
	case kTryJoin2, kTryJoinAll:
		j := failing(n)
		if j < 0 {
			for _, k := range n.kids {
				sc.done(k, e)
			}
			return
		}
		sc.done(n.kids[j], e)
		for i, k := range n.kids {
			h := n.t // polled in the failing Poll
			if i > j {
				h = n.t - 1 // not polled in it
			}
			if i != j {
				sc.settle(k, h, e)
			}
		}
	default: // Map, Then, the joins: every child completes
		for _, k := range n.kids {
			sc.done(k, e)
		}
	}
}

// settle records what happens under a child k whose parent stops caring
// about it, its state being that of the polls through step h: done if it had
// completed by then, cancelled otherwise.
func (sc *scenario) settle(k *node, h int, e *expect) {
	if k.t <= h {
		sc.done(k, e)
	} else {
		sc.cancelAt(k, h, e)
	}
}

// cancelAt records a Cancel of n, which exists and has not completed, its
// state being that of the polls through step h. A future that was never
// polled is cancelled all the same (Cancel may be called whether or not a
// future was polled): only a Then's second future, which does not exist
// until the first completes, escapes.
func (sc *scenario) cancelAt(n *node, h int, e *expect) {
	switch n.kind {
	case kProbe:
		e.cancels[n.probe]++
	case kReady: // cancelled unpolled; the model does not count Ready's cancels
	case kThen:
		first, second := n.kids[0], n.kids[1]
		if first.t > h {
			sc.cancelAt(first, h, e)
			return
		}
		sc.done(first, e)
		sc.cancelAt(second, h, e)
	default:
		for _, k := range n.kids {
			sc.settle(k, h, e)
		}
	}
}

// flagWaker is the root task's Waker in the model: it records that it was
// woken.
type flagWaker struct{ woken atomic.Bool }

func (f *flagWaker) Wake() { f.woken.Store(true) }

// run drives the scenario and checks it against the reference.
func (sc *scenario) run(t testing.TB) {
	sc.eval(sc.root, 0)
	e := expect{cancels: make([]int, len(sc.probes)), delivered: make([]bool, len(sc.probes))}
	root := sc.build(sc.root)
	var fw flagWaker
	cx := NewContext(waker.New(&fw))

	doneAt, cancelledAt, got := -1, -1, 0
	step := func(s int) {
		if v, ok := root.Poll(cx); ok {
			doneAt, got = s, v
		}
	}
	step(0)
	for s := 0; ; s++ {
		if doneAt < 0 && cancelledAt < 0 && s == sc.cancel {
			Cancel(root)
			cancelledAt = s
			require.Equal(t, 0, sc.reg.Len(), "probes registered after the root was cancelled")
		}
		if s == len(sc.order) {
			break
		}
		sc.probes[sc.order[s]].Complete(sc.vals[sc.order[s]])
		if fw.woken.Swap(false) {
			require.True(t, doneAt < 0 && cancelledAt < 0, "woken at step %d after the root completed or was cancelled", s+1)
			step(s + 1)
		}
	}

	if cancelledAt >= 0 {
		require.Less(t, cancelledAt, sc.root.t, "cancelled at step %d, but the root should have completed at step %d", cancelledAt, sc.root.t)
		sc.cancelAt(sc.root, cancelledAt, &e)
		if sc.root.kind != kProbe { // a Probe counts misuse instead
			require.PanicsWithValue(t, ErrPolledAfterCancel, func() { root.Poll(cx) })
		}
	} else {
		require.Equal(t, sc.root.t, doneAt, "completion step (-1: never; a late step is a lost wakeup)")
		require.Equal(t, sc.root.v, got, "value")
		sc.done(sc.root, &e)
		if sc.root.kind != kProbe {
			require.PanicsWithValue(t, ErrPolledAfterCompletion, func() { root.Poll(cx) })
		}
	}
	if sc.root.kind != kProbe {
		Cancel(root) // idempotent, and a no-op after completion
	}
	require.Equal(t, 0, sc.reg.Len(), "probes left registered")
	for i, p := range sc.probes {
		st := p.Stats()
		require.Zero(t, st.Misuse, "probe %d polled after delivery or cancel", i)
		require.Equal(t, e.cancels[i], st.Cancels, "Cancel calls of probe %d", i)
		require.Equal(t, e.delivered[i], st.Delivered, "delivery of probe %d", i)
		require.LessOrEqual(t, st.Registrations, 1, "probe %d registered twice", i)
		require.False(t, st.Registered, "probe %d still registered", i)
	}
}

// String renders a tree, for failure messages.
func (n *node) String() string {
	switch n.kind {
	case kProbe:
		return "p" + strconv.Itoa(n.probe)
	case kReady:
		return "ready(" + strconv.Itoa(n.val) + ")"
	}
	s := n.kind.String() + "("
	for i, k := range n.kids {
		if i > 0 {
			s += ","
		}
		s += k.String()
	}
	return s + ")"
}

// TestModelRandomTrees runs random trees of every combinator against the
// reference evaluation: completion step, value, which probes are cancelled
// (exactly once) or delivered, and that nothing is left registered after the
// root completes or is cancelled.
func TestModelRandomTrees(t *testing.T) {
	trees, depth, maxKids := 3000, 5, 4
	if testing.Short() {
		trees, depth = 300, 4
	}
	for seed := range uint64(trees) {
		sc := genScenario(randChooser{rand.New(rand.NewPCG(seed, 0x5eed))}, depth, maxKids)
		ok := t.Run("", func(t *testing.T) {
			sc.run(t)
		})
		if !ok {
			t.Fatalf("seed %d: tree %v, order %v, cancel %d, values %v", seed, sc.root, sc.order, sc.cancel, sc.vals)
		}
	}
}

// FuzzCombinators lets the fuzzer's bytes choose the tree, the probes'
// values, their completion order and the cancel step.
func FuzzCombinators(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	f.Add([]byte("race select then join"))
	f.Add([]byte{7, 3, 0, 1, 9, 0, 0, 5, 0, 1, 2, 9, 9, 9, 0, 0, 0, 4, 4, 4, 4, 1})
	f.Add([]byte{255, 128, 64, 32, 16, 8, 4, 2, 1, 0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30})
	f.Fuzz(func(t *testing.T, b []byte) {
		sc := genScenario(&byteChooser{b: b}, 4, 4)
		sc.run(t)
	})
}
