package channels

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// selectSet is the channels of the select stress test: bounded channels
// that every consumer may receive from, and an Unbounded that only the
// consumer owning it receives from (one receiver at a time).
type selectSet struct {
	bs []*Bounded[int]
	u  *Unbounded[int]
}

// sendSelect returns a select of send futures of id to every bounded
// channel, in random order: the first with room takes the value, and the
// lost send futures never place it. (Sending to one random channel could
// deadlock the test: consumers that select over other channels would never
// free it.)
func sendSelect(set *selectSet, rng *rand.Rand, id int) future.Future[future.Selected[error]] {
	fs := make([]future.Future[error], len(set.bs))
	for i, k := range rng.Perm(len(set.bs)) {
		f := new(SendFuture[int])
		*f = *set.bs[k].Send(id)
		fs[i] = f
	}
	return future.Select(fs...)
}

// selector is one consumer's state: which channels it still receives from
// and the select in flight.
type selector struct {
	set    *selectSet
	useU   bool
	open   []int // open channels: index into bs, or -1 for u
	rng    *rand.Rand
	l      *ledger
	sel    future.Future[future.Selected[future.Result[int]]]
	chosen []int
}

// build makes a select over a random 2-4 of the open channels (fewer if
// fewer are open), in random order.
func (s *selector) build() {
	s.rng.Shuffle(len(s.open), func(i, j int) { s.open[i], s.open[j] = s.open[j], s.open[i] })
	k := min(len(s.open), 2+s.rng.IntN(3))
	s.chosen = append(s.chosen[:0], s.open[:k]...)
	fs := make([]future.Future[future.Result[int]], k)
	for i, ch := range s.chosen {
		if ch < 0 {
			f := new(UnboundedRecvFuture[int])
			*f = *s.set.u.Recv()
			fs[i] = f
		} else {
			f := new(RecvFuture[int])
			*f = *s.set.bs[ch].Recv()
			fs[i] = f
		}
	}
	s.sel = future.Select(fs...)
}

// done records a select's outcome and reports whether every channel is
// closed and drained for this consumer.
func (s *selector) done(r future.Selected[future.Result[int]]) bool {
	ch := s.chosen[r.Index]
	s.sel = nil
	if r.Value.Err != nil {
		if r.Value.Err != ErrClosed {
			panic(r.Value.Err)
		}
		for i, o := range s.open {
			if o == ch {
				s.open = append(s.open[:i], s.open[i+1:]...)
				break
			}
		}
		return len(s.open) == 0
	}
	s.l.recv(r.Value.Value)
	return false
}

func newSelector(set *selectSet, useU bool, l *ledger, seed uint64) *selector {
	s := &selector{set: set, useU: useU, l: l, rng: rand.New(rand.NewPCG(seed, 9))}
	for i := range set.bs {
		s.open = append(s.open, i)
	}
	if useU {
		s.open = append(s.open, -1)
	}
	return s
}

// poll is the consumer task's state machine.
func (s *selector) poll(cx *future.Context) bool {
	for {
		if s.sel == nil {
			s.build()
		}
		r, ok := s.sel.Poll(cx)
		if !ok {
			return false
		}
		if s.done(r) {
			return true
		}
	}
}

// TestSelectRecv: producers (goroutines and tasks) send unique ids to
// three bounded channels (with selects over send futures) and an unbounded
// one; consumer tasks, and a
// goroutine driving selects with future.Block, receive with random selects
// over 2-4 channels. Every message is received exactly once and no waiter
// is left: a lost select never takes a message nor keeps a wake.
func TestSelectRecv(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 20_000
	}
	s := newScheduler(t, 4)
	set := &selectSet{u: NewUnbounded[int]()}
	for _, capacity := range []int{1, 2, 16} {
		set.bs = append(set.bs, NewBounded[int](capacity))
	}
	l := newLedger(n)
	const producers = 4
	var wg sync.WaitGroup
	var handles []scheduler.JoinHandle[struct{}]
	for p := 0; p < producers; p++ {
		rng := rand.New(rand.NewPCG(uint64(p), 5))
		if p%2 == 0 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for id := p; id < n; id += producers {
					if rng.IntN(4) == 0 {
						if err := set.u.Send(id); err != nil {
							panic(err)
						}
						continue
					}
					r, err := future.Block(context.Background(), sendSelect(set, rng, id))
					if err != nil || r.Value != nil {
						panic(fmt.Sprint(err, r.Value))
					}
				}
			}()
			continue
		}
		id := p
		var f future.Future[future.Selected[error]]
		handles = append(handles, spawnFn(s, func(cx *future.Context) bool {
			for id < n {
				if f == nil {
					if rng.IntN(4) == 0 {
						if err := set.u.Send(id); err != nil {
							panic(err)
						}
						id += producers
						continue
					}
					f = sendSelect(set, rng, id)
				}
				r, ok := f.Poll(cx)
				if !ok {
					return false
				}
				if r.Value != nil {
					panic(r.Value)
				}
				f = nil
				id += producers
			}
			return true
		}))
	}
	var consumers []scheduler.JoinHandle[struct{}]
	for k := 0; k < 3; k++ {
		sel := newSelector(set, k == 0, l, uint64(k))
		consumers = append(consumers, spawnFn(s, sel.poll))
	}
	gdone := make(chan struct{})
	go func() { // a goroutine consumer of the bounded channels only
		defer close(gdone)
		sel := newSelector(set, false, l, 77)
		for {
			sel.build()
			r, err := future.Block(context.Background(), sel.sel)
			if err != nil {
				panic(err)
			}
			if sel.done(r) {
				return
			}
		}
	}()
	wg.Wait()
	waitAll(t, handles...)
	for _, b := range set.bs {
		b.Close()
	}
	set.u.Close()
	waitAll(t, consumers...)
	<-gdone
	l.check(t, false)
	for _, b := range set.bs {
		snd, rcv := b.waiters()
		require.Zero(t, snd+rcv)
		require.Zero(t, b.Len())
	}
	require.Zero(t, set.u.waiters())
	require.Zero(t, set.u.Len())
}
