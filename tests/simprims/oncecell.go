package simprims

import (
	"errors"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// errInit is the failure of an initializer that fails on purpose.
var errInit = errors.New("simprims: the initializer failed")

// onceState is the OnceCell workload's shared state.
type onceState struct {
	cell syncprim.OnceCell[int]
	// running counts the initializers in progress, succeeded those that
	// returned a value; failures is how many more may fail on purpose.
	running, succeeded, failures int
}

// onceCellWorkload runs callers tasks calling GetOrInit at once, each
// with an initializer of its own that pauses and may fail; some callers
// wait with a timeout, which cancels their initializer if they hold the
// right to initialize. It checks that initializers never run two at a
// time, that exactly one succeeds, that every caller that gets a value
// gets that one, and that the cell holds it.
//
//blitz:async
func onceCellWorkload(callers, failures int) error {
	s := &onceState{failures: failures}
	values := make([]int, callers)
	fs := make([]future.Future[error], 0, callers)
	for i := range callers {
		fs = append(fs, s.callerAsync(i+1, &values[i]))
	}
	if err := future.Await(allAsync(fs)); err != nil {
		return err
	}
	v, ok := s.cell.Get()
	if !ok || s.succeeded != 1 {
		return violation("oncecell: %d initializers succeeded, cell set: %v", s.succeeded, ok)
	}
	for i, got := range values {
		if got != 0 && got != v {
			return violation("oncecell: caller %d got %d, the cell holds %d", i+1, got, v)
		}
	}
	return nil
}

// caller gets the cell's value into *got, initializing it with id if it
// gets the right; it tries again after a failed initializer or a timeout.
//
//blitz:async
func (s *onceState) caller(id int, got *int) error {
	init := func() future.Future[future.Result[int]] { return s.initAsync(id) }
	for {
		future.Await(pauseAsync())
		var v int
		var err error
		if chance(future.Cx(), 3) {
			r := future.Await(withTimeout(future.Cx(), 3, s.cell.GetOrInit(init)))
			v, err = r.Value.Value, errors.Join(r.Err, r.Value.Err)
		} else {
			v, err = future.Try(s.cell.GetOrInit(init))
		}
		if err == nil {
			*got = v
			return nil
		}
		if !errors.Is(err, errInit) && !timedOut(err) {
			return err
		}
	}
}

// init is caller id's initializer: it pauses, then fails while failures
// are left (one time in 2), or returns id.
//
//blitz:async
func (s *onceState) init(id int) (int, error) {
	s.running++
	defer s.leave()
	if s.running > 1 {
		return 0, violation("oncecell: %d initializers at once", s.running)
	}
	future.Await(pauseAsync())
	if s.failures > 0 && chance(future.Cx(), 2) {
		s.failures--
		return 0, errInit
	}
	s.succeeded++
	return id, nil
}

// leave counts an initializer out, also one cancelled mid-way.
func (s *onceState) leave() { s.running-- }
