package parallel_test

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/blitz-go/blitz/parallel"
	"github.com/stretchr/testify/require"
)

// The model-based test: a random program of leaves, joins, scopes and loops
// runs in a pool, and is checked against what a sequential model of it says:
// every leaf that does not panic runs exactly once, and the panic that comes
// out is one the model allows (a Join reports a's panic before b's; a Scope
// or a loop any of its own).

type node struct {
	kind     string // "leaf", "join", "scope", "for"
	id       int    // leaf: index in the hit counters
	panics   bool   // leaf: panics with its id instead of counting
	children []*node
}

// gen makes a random program with ids from *next.
func gen(r *rand.Rand, depth int, next *int) *node {
	if depth == 0 || r.IntN(4) == 0 {
		n := &node{kind: "leaf", id: *next, panics: r.IntN(12) == 0}
		*next++
		return n
	}
	switch r.IntN(3) {
	case 0:
		return &node{kind: "join", children: []*node{gen(r, depth-1, next), gen(r, depth-1, next)}}
	case 1:
		n := &node{kind: "scope"}
		for range r.IntN(4) {
			n.children = append(n.children, gen(r, depth-1, next))
		}
		return n
	}
	n := &node{kind: "for"}
	for range 1 + r.IntN(5) {
		n.children = append(n.children, gen(r, depth-1, next))
	}
	return n
}

// allowed returns the panic values the model allows from n (empty: none).
func allowed(n *node) []int {
	switch n.kind {
	case "leaf":
		if n.panics {
			return []int{n.id}
		}
		return nil
	case "join":
		if a := allowed(n.children[0]); len(a) > 0 {
			return a
		}
		return allowed(n.children[1])
	}
	var all []int
	for _, c := range n.children {
		all = append(all, allowed(c)...)
	}
	return all
}

// exec runs n on c.
func exec(c *parallel.Ctx, n *node, hits []atomic.Int32) {
	switch n.kind {
	case "leaf":
		if n.panics {
			panic(n.id)
		}
		hits[n.id].Add(1)
	case "join":
		c.Join(func(c *parallel.Ctx) { exec(c, n.children[0], hits) }, func(c *parallel.Ctx) { exec(c, n.children[1], hits) })
	case "scope":
		c.Scope(func(s *parallel.Scope) {
			for _, ch := range n.children {
				s.Spawn(func(c *parallel.Ctx) { exec(c, ch, hits) })
			}
		})
	case "for":
		// Each index runs on the worker that runs its piece; a piece
		// runs its indices until one panics, so Grain(1) keeps every
		// non-panicking child running.
		parallel.For(len(n.children), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				parallel.Run(jobFor(n.children[i], hits))
			}
		}, parallel.On(c), parallel.Grain(1))
	}
}

// jobFor returns a job running n; For's body has no Ctx, so it reaches the
// pool through the pool-level API from the worker, which runs it in place.
func jobFor(n *node, hits []atomic.Int32) func(*parallel.Ctx) {
	return func(c2 *parallel.Ctx) { exec(c2, n, hits) }
}

func TestModelRandomPrograms(t *testing.T) {
	p := parallel.Default()
	programs := scale(300, 40)
	for seed := range programs {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		next := 0
		prog := gen(r, 6, &next)
		hits := make([]atomic.Int32, next)
		want := allowed(prog)
		r2 := recoverPanic(func() { p.Run(func(c *parallel.Ctx) { exec(c, prog, hits) }) })
		if len(want) == 0 {
			require.Nilf(t, r2, "seed %d", seed)
		} else {
			pe, ok := r2.(*parallel.PanicError)
			require.Truef(t, ok, "seed %d: panic %v", seed, r2)
			require.Containsf(t, want, pe.Value, "seed %d", seed)
		}
		var check func(n *node)
		check = func(n *node) {
			if n.kind == "leaf" {
				w := int32(1)
				if n.panics {
					w = 0
				}
				require.Equal(t, w, hits[n.id].Load(), fmt.Sprintf("seed %d leaf %d", seed, n.id))
			}
			for _, ch := range n.children {
				check(ch)
			}
		}
		check(prog)
	}
}
