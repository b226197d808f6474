package simprims

import (
	"errors"

	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

// msg is a value a producer sends: its number and its place in the
// producer's sequence.
type msg struct{ from, seq int }

// ledger records what happened to the messages of a channel workload:
// those a send accepted, those it gave back (the channel closed), and how
// often each was received.
type ledger struct {
	accepted, returned map[msg]bool
	received           map[msg]int
}

func newLedger() *ledger {
	return &ledger{accepted: map[msg]bool{}, returned: map[msg]bool{}, received: map[msg]int{}}
}

// check reports a message lost (accepted, never received), duplicated
// (received twice), or received although its send failed or never
// happened; want is the number of messages that must have been accepted
// (-1: any, the channel was closed early).
func (l *ledger) check(kind string, want int) error {
	for m, n := range l.received {
		if n != 1 || !l.accepted[m] || l.returned[m] {
			return violation("%s: message %v received %d times, accepted %v, given back %v", kind, m, n, l.accepted[m], l.returned[m])
		}
	}
	for m := range l.accepted {
		if l.received[m] != 1 {
			return violation("%s: message %v accepted but never received", kind, m)
		}
	}
	if want >= 0 && len(l.accepted) != want {
		return violation("%s: %d messages accepted, want %d", kind, len(l.accepted), want)
	}
	return nil
}

// inOrder checks that m comes after the last message a receiver saw from
// its producer, and records it there: a channel is FIFO per sender.
func inOrder(kind string, last map[int]int, m msg) error {
	if prev, ok := last[m.from]; ok && m.seq <= prev {
		return violation("%s: message %v received after %d of the same producer", kind, m, prev)
	}
	last[m.from] = m.seq
	return nil
}

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
	for i := range consumers {
		fs = append(fs, s.consumerAsync(i > 0))
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

// givenBack records the failed send of m, whose error must be a
// *SendError holding m with ErrClosed.
func (l *ledger) givenBack(m msg, err error) error {
	var se *channels.SendError[msg]
	if !errors.As(err, &se) || se.Value != m || !errors.Is(err, channels.ErrClosed) {
		return violation("a failed send of %v: %v, want a SendError with it and ErrClosed", m, err)
	}
	l.returned[m] = true
	return nil
}

// consumer receives until the channel is closed and drained, closing it
// after the last message (see boundedWorkload); one time in 3 with a
// timeout, after which one that may leave leaves one time in 2.
//
//blitz:async
func (s *boundedState) consumer(mayLeave bool) error {
	last := map[int]int{}
	for {
		future.Await(pauseAsync())
		var m msg
		var err error
		if chance(future.Cx(), 3) {
			r := future.Await(withTimeout(future.Cx(), 2, s.c.Recv()))
			if timedOut(r.Err) {
				if mayLeave && chance(future.Cx(), 2) {
					return nil
				}
				continue
			}
			m, err = r.Value.Value, errors.Join(r.Err, r.Value.Err)
		} else {
			m, err = future.Try(s.c.Recv())
		}
		if errors.Is(err, channels.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		s.log.received[m]++
		if s.received++; s.received == s.total {
			s.c.Close()
		}
		if err := inOrder("bounded", last, m); err != nil {
			return err
		}
	}
}
