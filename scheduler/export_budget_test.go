package scheduler

import "github.com/blitz-go/blitz/future"

// Seams for budget_test.go: the adaptive global-queue interval as a worker
// sees it.

// GlobalState is a worker's adaptive global-queue state (see the package
// doc, "Work-finding order").
type GlobalState struct {
	// Interval is the number of polls between two periodic looks at the
	// global queue, from the last tick's adaptation.
	Interval int
	// UntilGlobal is the number of polls left before the next periodic
	// look, the current poll already counted.
	UntilGlobal int
	// AvgPollNs is the EWMA of the poll duration Interval comes from.
	AvgPollNs float64
	// TickAt is when the tick in progress began (nanoseconds since the
	// scheduler's epoch), which tells one tick from the next; -1 between
	// ticks.
	TickAt int64
}

// GlobalStateOf returns the adaptive global-queue state of the worker that
// cx belongs to, or false when cx is not one of s's workers' Contexts.
// Called only on that worker's goroutine: from a poll or from
// Driver.Maintain with the cx it was given.
func GlobalStateOf(s *Scheduler, cx *future.Context) (GlobalState, bool) {
	w := s.localWorker(cx)
	if w == nil {
		return GlobalState{}, false
	}
	return GlobalState{
		Interval:    int(w.interval),
		UntilGlobal: int(w.untilGlobal),
		AvgPollNs:   w.avgPollNs,
		TickAt:      w.tickAt.Load(), // tickAt: stored by this same goroutine
	}, true
}
