package simprims

import (
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// notifyState is the Notify workload's shared state: a queue of items
// (a count) that a producer fills and consumers drain.
type notifyState struct {
	// n tells the consumers of an item, drained the producer of a take.
	n, drained syncprim.Notify
	// items is the queue; consumed counts what consumers took, of total.
	items, consumed, total int
}

// notifyWorkload first checks the permit rules with nobody waiting
// (NotifyWaiters stores no permit, NotifyOne stores one and permits do not
// accumulate), then runs a producer of items items, each followed by
// NotifyOne (and half the time by a wait until a consumer took it), and
// consumers that wait on Notified whenever the queue is empty. All but one consumer sometimes wait with a timeout and, when it
// runs out, leave for good: a notification handed to a waiter that is
// cancelled must pass on to another waiter or into the permit, or the
// consumers left may wait for ever beside an item (a deadlock of the run).
// The consumer that takes the last item calls NotifyWaiters, which must
// reach every consumer still waiting.
//
//blitz:async
func notifyWorkload(consumers, items int) error {
	s := &notifyState{total: items}
	if err := s.checkPermits(); err != nil {
		return err
	}
	fs := []future.Future[error]{s.producerAsync(items)}
	for i := range consumers {
		fs = append(fs, s.consumerAsync(i > 0))
	}
	if err := future.Await(allAsync(fs)); err != nil {
		return err
	}
	if s.consumed != items || s.items != 0 {
		return violation("notify: %d items consumed of %d, %d left", s.consumed, items, s.items)
	}
	return nil
}

// checkPermits checks the permit rules on a Notify nobody waits on.
func (s *notifyState) checkPermits() error {
	s.n.NotifyWaiters()
	if s.n.TryNotified() {
		return violation("notify: NotifyWaiters with nobody waiting stored a permit")
	}
	s.n.NotifyOne()
	s.n.NotifyOne()
	if !s.n.TryNotified() || s.n.TryNotified() {
		return violation("notify: two NotifyOne with nobody waiting did not store exactly one permit")
	}
	return nil
}

// producer adds items one at a time, notifying one consumer each time,
// and one time in 2 waits until the queue is empty before the next: then
// each notification must reach a consumer, where a later one would
// otherwise make up for a lost one.
//
//blitz:async
func (s *notifyState) producer(items int) error {
	for range items {
		future.Await(pauseAsync())
		s.items++
		s.n.NotifyOne()
		if chance(future.Cx(), 2) {
			for s.items > 0 {
				future.Await(s.drained.Notified())
			}
		}
	}
	return nil
}

// consumer takes items until all were consumed, waiting for a
// notification whenever the queue is empty; the one that takes the last
// item releases the others with NotifyWaiters. A consumer that may give
// up waits one time in 3 with a timeout and leaves when it runs out.
//
//blitz:async
func (s *notifyState) consumer(mayGiveUp bool) error {
	for {
		if s.items > 0 {
			s.items--
			s.drained.NotifyOne()
			if s.consumed++; s.consumed == s.total {
				s.n.NotifyWaiters()
			}
			future.Await(pauseAsync())
			continue
		}
		if s.consumed == s.total {
			return nil
		}
		if mayGiveUp && chance(future.Cx(), 3) {
			r := future.Await(withTimeout(future.Cx(), 3, s.n.Notified()))
			if timedOut(r.Err) {
				return nil // gone: a notification it was handed must go on
			}
			continue
		}
		future.Await(s.n.Notified())
	}
}
