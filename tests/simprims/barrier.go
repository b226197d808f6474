package simprims

import (
	"errors"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// barrierState is the Barrier workload's shared state.
type barrierState struct {
	b       *syncprim.Barrier
	parties int
	// released counts, per generation, the waits it completed, and leaders
	// the waits among them that led it.
	released, leaders map[uint64]int
}

// barrierWorkload runs parties tasks through rounds rounds of one Barrier.
// One of them, the flaky party, first arrives with a timeout each round
// and, when the timeout withdraws its arrival (the documented effect of
// cancelling before the round completes), arrives again for good. It
// checks that each party goes through generations 0, 1, 2, ... in order,
// and that every generation released exactly parties waits, one of them
// its leader: a withdrawn arrival that still counted would complete a
// round one party short, and the rounds would come apart.
//
//blitz:async
func barrierWorkload(parties, rounds int) error {
	s := &barrierState{
		b:        syncprim.NewBarrier(parties),
		parties:  parties,
		released: map[uint64]int{},
		leaders:  map[uint64]int{},
	}
	fs := make([]future.Future[error], 0, parties)
	for i := range parties {
		fs = append(fs, s.partyAsync(rounds, i == 0))
	}
	if err := future.Await(allAsync(fs)); err != nil {
		return err
	}
	for g := range uint64(rounds) {
		if s.released[g] != parties || s.leaders[g] != 1 {
			return violation("barrier: generation %d released %d waits with %d leaders, want %d and 1", g, s.released[g], s.leaders[g], parties)
		}
	}
	return nil
}

// party waits at the barrier rounds times; a flaky one arrives with a
// timeout first.
//
//blitz:async
func (s *barrierState) party(rounds int, flaky bool) error {
	for round := range uint64(rounds) {
		future.Await(pauseAsync())
		var r syncprim.BarrierResult
		withdrawn := true
		if flaky {
			// blitz.Timeout polls the wait before its timer, so a round
			// that completed is seen; a wait cancelled after its round
			// completed (giveUp's) would not know that it took part.
			t := future.Await(blitz.Timeout(between(future.Cx(), 3), s.b.Wait()))
			if t.Err != nil && !errors.Is(t.Err, blitz.ErrTimeout) {
				return t.Err
			}
			r, withdrawn = t.Value, t.Err != nil
		}
		if withdrawn {
			r = future.Await(s.b.Wait())
		}
		if r.Generation != round {
			return violation("barrier: a party's round %d completed as generation %d", round, r.Generation)
		}
		s.released[r.Generation]++
		if r.Leader {
			s.leaders[r.Generation]++
		}
	}
	return nil
}
