package simprims

import (
	"errors"

	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

// boundedState is the Bounded workload's shared state.
type boundedState struct {
	c   *channels.Bounded[msg]
	log *ledger
	// total is the number of messages to receive before the channel is
	// closed, -1 when a task closes it early.
	total int
	// received counts the messages received.
	received int
}

// boundedWorkload runs producers producers of n messages each and
// consumers consumers on a Bounded channel of capacity capacity, sends
// and receives sometimes with a timeout (a cancelled send must not place
// its value, a cancelled receive must not take one, and one cancelled
// after its wake must pass the wake on). All consumers but the first may
// leave for good when a receive times out. Without earlyClose, the
// consumer that receives the last message closes the channel (which
// releases the others); nothing else would wake a consumer left waiting
// beside a message, so a lost wake ends the run in a deadlock. With
// earlyClose, a task of its own closes the channel at a random point, and
// sends start failing with the value given back. It checks that each
// consumer sees each producer's messages in order, and that every message
// accepted is received exactly once and every message given back never.
//
//blitz:async
func boundedWorkload(capacity, producers, consumers, n int, earlyClose bool) error {
	s := &boundedState{c: channels.NewBounded[msg](capacity), log: newLedger(), total: producers * n}
	if earlyClose {
		s.total = -1
	}
	fs := make([]future.Future[error], 0, producers+consumers+1)
	for i := range producers {
		fs = append(fs, s.producerAsync(i, n))
	}
	r := s.receiving()
	for i := range consumers {
		fs = append(fs, r.consumeAsync(i > 0))
	}
	if earlyClose {
		fs = append(fs, closeLaterAsync(s.c))
	}
	if err := future.Await(allAsync(fs)); err != nil {
		return err
	}
	return s.log.check("bounded", s.total)
}

// closeLater closes c after a pause.
//
//blitz:async
func closeLater(c *channels.Bounded[msg]) error {
	future.Await(pauseAsync())
	future.Await(pauseAsync())
	c.Close()
	return nil
}

// producer sends n messages in order, stopping at the first one the
// closed channel gives back; a send that times out is tried again.
//
//blitz:async
func (s *boundedState) producer(id, n int) error {
	for seq := 0; seq < n; {
		m := msg{id, seq}
		future.Await(pauseAsync())
		var err error
		if chance(future.Cx(), 3) {
			r := future.Await(withTimeout(future.Cx(), 2, s.c.Send(m)))
			if timedOut(r.Err) {
				continue // not sent: the same message again
			}
			err = errors.Join(r.Err, r.Value)
		} else {
			err = future.Await(s.c.Send(m))
		}
		if err != nil {
			return s.log.givenBack(m, err)
		}
		s.log.accepted[m] = true
		seq++
	}
	return nil
}

// receiving returns the receiving side of the workload: the consumer
// that receives the last message closes the channel.
func (s *boundedState) receiving() *receiving {
	return &receiving{
		kind: "bounded",
		recv: func() future.Future[future.Result[msg]] { return s.c.Recv() },
		log:  s.log,
		received: func() {
			if s.received++; s.received == s.total {
				s.c.Close()
			}
		},
	}
}
