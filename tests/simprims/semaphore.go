package simprims

import (
	"errors"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// semState is the Semaphore workload's shared state.
type semState struct {
	sem     *syncprim.Semaphore
	permits int
	// inUse counts the permits the tasks hold.
	inUse int
}

// semaphoreWorkload runs tasks that acquire 1 to permits permits at a
// time, some with a timeout that cancels the wait, and checks that the
// permits held never exceed the semaphore's, and that every permit is
// back at the end (a cancelled waiter's partial grant included).
//
//blitz:async
func semaphoreWorkload(permits, tasks, rounds int) error {
	s := &semState{sem: syncprim.NewSemaphore(permits), permits: permits}
	fs := make([]future.Future[error], 0, tasks)
	for range tasks {
		fs = append(fs, s.acquirerAsync(rounds))
	}
	if err := future.Await(allAsync(fs)); err != nil {
		return err
	}
	if got := s.sem.Available(); got != permits {
		return violation("semaphore: %d permits available at the end, want %d", got, permits)
	}
	return nil
}

// acquirer takes n permits rounds times, n from 1 to all of them, one
// time in 3 with a timeout that cancels the wait, holds them across a
// pause and releases them.
//
//blitz:async
func (s *semState) acquirer(rounds int) error {
	for range rounds {
		n := 1 + pick(future.Cx(), s.permits)
		if chance(future.Cx(), 3) {
			r := future.Await(withTimeout(future.Cx(), 2, s.sem.Acquire(n)))
			if timedOut(r.Err) {
				future.Await(pauseAsync())
				continue
			}
			if err := errors.Join(r.Err, r.Value); err != nil {
				return err
			}
		} else if err := future.Await(s.sem.Acquire(n)); err != nil {
			return err
		}
		s.inUse += n
		if s.inUse > s.permits {
			return violation("semaphore: %d permits held of %d", s.inUse, s.permits)
		}
		future.Await(pauseAsync())
		s.inUse -= n
		s.sem.Release(n)
		future.Await(pauseAsync())
	}
	return nil
}
