package simprims

import (
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// rwState is the RwLock workload's shared state.
type rwState struct {
	l syncprim.RwLock
	// readers and writers count the holders of each kind.
	readers, writers int
	// queuedWriters counts the writers waiting for the lock; writes counts
	// the write acquisitions.
	queuedWriters, writes int
}

// rwLockWorkload checks, in two phases, the RwLock's policy: first that
// readers hold the lock together (parties readers all hold a read lock
// while they meet at a Barrier, which could not complete otherwise); then,
// with readers and writers looping, that a writer holds it alone, readers
// never beside a writer, and that a reader arriving while a writer waits
// does not get in before that writer (the FIFO phase policy that keeps a
// stream of readers from starving writers).
//
//blitz:async
func rwLockWorkload(readers, writers, rounds int) error {
	s := &rwState{}
	meet := syncprim.NewBarrier(readers)
	fs := make([]future.Future[error], 0, readers+writers)
	for range readers {
		fs = append(fs, s.readTogetherAsync(meet))
	}
	if err := future.Await(allAsync(fs)); err != nil {
		return err
	}
	fs = fs[:0]
	for range readers {
		fs = append(fs, s.readerAsync(rounds))
	}
	for range writers {
		fs = append(fs, s.writerAsync(rounds))
	}
	if err := future.Await(allAsync(fs)); err != nil {
		return err
	}
	if _, ok := s.l.TryLock(); !ok {
		return violation("rwlock: not free for a writer at the end")
	}
	return nil
}

// readTogether holds a read lock while it waits at meet for the other
// readers, who must all get theirs meanwhile.
//
//blitz:async
func (s *rwState) readTogether(meet *syncprim.Barrier) error {
	future.Await(pauseAsync())
	g := future.Await(s.l.RLock())
	future.Await(meet.Wait())
	g.Unlock()
	return nil
}

// reader takes the read lock rounds times.
//
//blitz:async
func (s *rwState) reader(rounds int) error {
	for range rounds {
		waiting, writes := s.queuedWriters, s.writes
		g := future.Await(s.l.RLock())
		if waiting > 0 && s.writes == writes {
			return violation("rwlock: a reader arriving behind %d waiting writers got in before them", waiting)
		}
		s.readers++
		if s.writers != 0 {
			return violation("rwlock: a reader beside a writer")
		}
		future.Await(pauseAsync())
		s.readers--
		g.Unlock()
		future.Await(pauseAsync())
	}
	return nil
}

// writer takes the write lock rounds times.
//
//blitz:async
func (s *rwState) writer(rounds int) error {
	for range rounds {
		future.Await(pauseAsync())
		s.queuedWriters++
		g := future.Await(s.l.Lock())
		s.queuedWriters--
		s.writes++
		s.writers++
		if s.writers != 1 || s.readers != 0 {
			return violation("rwlock: a writer with %d writers and %d readers", s.writers, s.readers)
		}
		future.Await(pauseAsync())
		s.writers--
		g.Unlock()
	}
	return nil
}
