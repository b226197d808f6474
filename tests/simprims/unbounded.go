package simprims

import (
	"errors"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

// unboundedState is the Unbounded workload's shared state.
type unboundedState struct {
	u   *channels.Unbounded[msg]
	log *ledger
}

// unboundedWorkload runs producers producers of n messages each into an
// Unbounded channel and its one consumer, which receives sometimes with a
// timeout, until the channel, closed after the producers finished, is
// drained. It checks per-producer order and that every message is
// received exactly once.
//
//blitz:async
func unboundedWorkload(producers, n int) error {
	s := &unboundedState{u: channels.NewUnbounded[msg](), log: newLedger()}
	r := &receiving{kind: "unbounded", recv: func() future.Future[future.Result[msg]] { return s.u.Recv() }, log: s.log}
	recv := blitz.Spawn(future.Cx(), r.consumeAsync(false))
	ps := make([]future.Future[error], 0, producers)
	for i := range producers {
		ps = append(ps, s.producerAsync(i, n))
	}
	perr := future.Await(allAsync(ps))
	s.u.Close()
	cerr, jerr := future.Try(recv)
	if err := errors.Join(perr, cerr, jerr); err != nil {
		return err
	}
	if err := s.u.Send(msg{}); !errors.Is(err, channels.ErrClosed) {
		return violation("unbounded: a send after the close: %v, want ErrClosed", err)
	}
	return s.log.check("unbounded", producers*n)
}

// producer sends n messages in order, pausing between them.
//
//blitz:async
func (s *unboundedState) producer(id, n int) error {
	for seq := range n {
		future.Await(pauseAsync())
		m := msg{id, seq}
		if err := s.u.Send(m); err != nil {
			return err
		}
		s.log.accepted[m] = true
	}
	return nil
}
