package simprims

import (
	"errors"

	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

// The check shared by the workloads of the multi-producer channels,
// Bounded and Unbounded: every message accepted is received exactly once,
// in order per producer, and none given back is received.

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

// inOrder checks that m comes after the last message a receiver saw from
// its producer, and records it there: a channel is FIFO per sender.
func inOrder(kind string, last map[int]int, m msg) error {
	if prev, ok := last[m.from]; ok && m.seq <= prev {
		return violation("%s: message %v received after %d of the same producer", kind, m, prev)
	}
	last[m.from] = m.seq
	return nil
}

// receiving is the receiving side of a channel workload, what consume
// needs of it.
type receiving struct {
	// kind names the channel in a violation ("bounded", "unbounded").
	kind string
	// recv returns a future of one receive: Recv of the channel.
	recv func() future.Future[future.Result[msg]]
	log  *ledger
	// received, if set, is called after each message received and
	// recorded (the Bounded workload closes the channel after the last).
	received func()
}

// consume receives from r until the channel is closed and drained,
// recording each message in the ledger and checking the order per
// producer; one receive in 3 is bounded by a timeout, after which a
// consumer that may leave leaves for good one time in 2.
//
//blitz:async
func (r *receiving) consume(mayLeave bool) error {
	last := map[int]int{}
	for {
		future.Await(pauseAsync())
		var m msg
		var err error
		if chance(future.Cx(), 3) {
			res := future.Await(withTimeout(future.Cx(), 2, r.recv()))
			if timedOut(res.Err) {
				if mayLeave && chance(future.Cx(), 2) {
					return nil
				}
				continue
			}
			m, err = res.Value.Value, errors.Join(res.Err, res.Value.Err)
		} else {
			m, err = future.Try(r.recv())
		}
		if errors.Is(err, channels.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		r.log.received[m]++
		if r.received != nil {
			r.received()
		}
		if err := inOrder(r.kind, last, m); err != nil {
			return err
		}
	}
}
