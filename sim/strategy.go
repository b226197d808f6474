package sim

import (
	"fmt"
	"math/rand/v2"
)

// Strategy decides which ready task of which host runs at each step of a
// simulation. Every choice it makes comes from the run's seeded source, so
// a seed and a strategy fix the order of every poll.
type Strategy interface {
	// name describes the strategy in a replay command and a trace.
	name() string
	// newPicker makes the strategy's state for one run.
	newPicker(rng *rand.Rand) picker
}

// picker is a strategy's state during one run.
type picker interface {
	// pick returns the index in ready of the task to poll at step (0 for
	// the run's first step). ready is never empty.
	pick(step int, ready []taskKey) int
}

// taskKey names a task across the world: its host's index, the host's
// incarnation (a restart makes a new runtime whose ids start again) and
// the task's id in that runtime.
type taskKey struct {
	host, life int
	id         uint64
}

// Random is the uniform strategy: at each step, every ready task is equally
// likely to run. It is the default, and finds most races that need one or
// two unlucky interleavings quickly.
func Random() Strategy { return randomStrategy{} }

type randomStrategy struct{}

func (randomStrategy) name() string { return "random" }

func (randomStrategy) newPicker(rng *rand.Rand) picker { return randomPicker{rng} }

type randomPicker struct{ rng *rand.Rand }

func (p randomPicker) pick(_ int, ready []taskKey) int { return p.rng.IntN(len(ready)) }

// PCT is the probabilistic concurrency testing strategy (Burckhardt et al.,
// "A Randomized Scheduler with Probabilistic Guarantees of Finding Bugs",
// ASPLOS 2010): each task gets a random priority when first seen and the
// highest-priority ready task always runs; at depth-1 steps drawn at random
// from the first steps ones, the task that runs has its priority lowered
// below every other. A bug that needs d ordering constraints (its depth) is
// found by one run with probability at least 1/(n·k^(d-1)) for n tasks and
// k steps, far better than uniform choice for bugs of small depth among
// long runs. depth must be at least 1 (1: a fixed random priority order);
// steps is the expected length of a run (0 means 10,000).
func PCT(depth, steps int) Strategy {
	if depth < 1 {
		panic(fmt.Sprintf("sim: PCT depth %d, want at least 1", depth))
	}
	if steps <= 0 {
		steps = 10_000
	}
	return pctStrategy{depth: depth, steps: steps}
}

type pctStrategy struct{ depth, steps int }

func (s pctStrategy) name() string { return fmt.Sprintf("pct(%d,%d)", s.depth, s.steps) }

func (s pctStrategy) newPicker(rng *rand.Rand) picker {
	p := &pctPicker{rng: rng, depth: s.depth, prio: map[taskKey]int{}, change: map[int]int{}}
	for i := 1; i < s.depth; i++ {
		// Change point i lowers the running task to priority i: below
		// every initial priority (depth and up), above later points'.
		p.change[rng.IntN(s.steps)] = s.depth - i
	}
	return p
}

// pctPicker holds the priorities of one PCT run.
type pctPicker struct {
	rng   *rand.Rand
	depth int
	// prio is each task's priority, higher first; a task's initial one is
	// depth plus a random distinct rank (next), drawn when it is first
	// ready.
	prio map[taskKey]int
	// change maps a step to the priority the task run at it falls to.
	change map[int]int
	seen   int
}

func (p *pctPicker) pick(step int, ready []taskKey) int {
	best := -1
	for i, k := range ready {
		pr, ok := p.prio[k]
		if !ok {
			pr = p.newPriority()
			p.prio[k] = pr
		}
		if best < 0 || pr > p.prio[ready[best]] {
			best = i
		}
	}
	if low, ok := p.change[step]; ok {
		p.prio[ready[best]] = low
	}
	return best
}

// newPriority draws the initial priority of a task seen for the first
// time: a random position among the tasks seen so far, every priority
// distinct (the ones above it move up by one).
func (p *pctPicker) newPriority() int {
	p.seen++
	rank := p.depth + p.rng.IntN(p.seen)
	for k, pr := range p.prio {
		if pr >= rank {
			p.prio[k] = pr + 1
		}
	}
	return rank
}
