package scheduler

import "github.com/blitz-go/blitz/future"

// Seams for the external tests.

// IsParking reports whether the worker that cx belongs to is transitioning
// to park (its parking flag, seed 003's transitioning_to_park). Called only
// on that worker's goroutine: from a poll or from Driver.Maintain with the
// cx it was given.
func IsParking(s *Scheduler, cx *future.Context) bool {
	w := s.localWorker(cx)
	return w != nil && w.parking
}

// ParkedWorkers returns how many workers the idle state counts as parked.
// Any goroutine may call it.
func ParkedWorkers(s *Scheduler) int { return s.idle.Parked() }
