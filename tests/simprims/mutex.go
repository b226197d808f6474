package simprims

import (
	"errors"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// mutexState is the Mutex workload's shared state. Tasks touch it only
// between their awaits, and a simulated runtime polls one task at a time,
// so no lock of Go's is needed.
type mutexState struct {
	mu syncprim.Mutex
	// holders counts the tasks between a Lock and its Unlock.
	holders int
	// count is incremented under the lock by a read, a pause and a write:
	// a lost update unless the lock excludes.
	count int
	// locks counts the acquisitions.
	locks int
}

// mutexWorkload runs tasks lockers of rounds rounds each on one Mutex and
// checks mutual exclusion, that no update was lost, and that the lock is
// free and usable at the end.
//
//blitz:async
func mutexWorkload(tasks, rounds int) error {
	s := &mutexState{}
	fs := make([]future.Future[error], 0, tasks)
	for i := range tasks {
		fs = append(fs, s.lockerAsync(rounds, i > 0))
	}
	if err := future.Await(allAsync(fs)); err != nil {
		return err
	}
	if s.count != s.locks {
		return violation("mutex: %d increments under the lock gave %d", s.locks, s.count)
	}
	g, ok := s.mu.TryLock()
	if !ok {
		return violation("mutex: locked after every task unlocked")
	}
	g.Unlock()
	return nil
}

// locker locks s.mu rounds times, one time in 3 with a timeout that
// cancels the wait (a cancelled waiter must leave the lock usable and,
// woken or handed the lock, pass it on), after which one that may leave
// leaves one time in 2: a wake it lost would then leave the others
// waiting for ever. One time in 4 it unlocks its guard a second time (it
// must panic with ErrGuardReleased and leave the lock alone, whoever
// holds it now).
//
//blitz:async
func (s *mutexState) locker(rounds int, mayLeave bool) error {
	for range rounds {
		var g syncprim.MutexGuard
		if chance(future.Cx(), 3) {
			r := future.Await(withTimeout(future.Cx(), 2, s.mu.Lock()))
			if r.Err != nil {
				if !timedOut(r.Err) {
					return r.Err
				}
				if mayLeave && chance(future.Cx(), 2) {
					return nil
				}
				future.Await(pauseAsync())
				continue
			}
			g = r.Value
		} else {
			g = future.Await(s.mu.Lock())
		}
		if err := s.enter(); err != nil {
			return err
		}
		future.Await(pauseAsync())
		n := s.count
		future.Await(pauseAsync())
		s.count = n + 1
		s.holders--
		g.Unlock()
		if chance(future.Cx(), 4) {
			future.Await(pauseAsync())
			if err := unlockAgain(g); err != nil {
				return err
			}
		}
		future.Await(pauseAsync())
	}
	return nil
}

// enter counts a holder in, failing if another holds the lock too.
func (s *mutexState) enter() error {
	s.holders++
	s.locks++
	if s.holders > 1 {
		return violation("mutex: %d holders at once", s.holders)
	}
	return nil
}

// unlockAgain unlocks a guard already unlocked: it must panic with
// ErrGuardReleased (and, as the holder count checks, release nothing).
func unlockAgain(g syncprim.MutexGuard) (err error) {
	defer func() {
		p := recover()
		if e, ok := p.(error); !ok || !errors.Is(e, syncprim.ErrGuardReleased) {
			err = violation("mutex: a second Unlock of a guard panicked with %v, want ErrGuardReleased", p)
		}
	}()
	g.Unlock()
	return nil
}
