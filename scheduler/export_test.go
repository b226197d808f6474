package scheduler

import (
	"time"

	"github.com/blitz-go/blitz/future"
)

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

// Asleep reports whether worker i is in its park proper, past the counters
// it publishes on the way in: read after ParkedWorkers counted it, the
// park clock runs only once the park has begun (a spin's clock stops
// before the worker prepares to park). Any goroutine may call it.
func Asleep(s *Scheduler, i int) bool {
	return s.idle.IsParked(i) && s.workers[i].parks.since.Load() >= 0
}

// GlobalInterval returns the global-queue interval a worker uses when its
// polls take avgPollNs on average.
func GlobalInterval(avgPollNs float64) int { return int(globalInterval(avgPollNs)) }

// Adapt runs one step of a worker's adaptation from an average poll time of
// avgPollNs, for a tick that made n polls in d, and returns the new average
// and interval.
func Adapt(avgPollNs float64, n int, d time.Duration) (float64, int) {
	w := &worker{avgPollNs: avgPollNs, interval: DefaultGlobalInterval}
	w.adapt(n, d)
	return w.avgPollNs, int(w.interval)
}

// InitialAvgPollNs is the average poll time a new worker starts from.
func InitialAvgPollNs() float64 {
	return float64(targetGlobalLatency.Nanoseconds()) / DefaultGlobalInterval
}

// OnWorkerByLookup is OnWorker's slow path alone: it finds the function of
// each outermost frame, as OnWorker did before the first worker noted
// runWorker's return address.
func OnWorkerByLookup() bool {
	saved := workerReturn.Swap(0)
	defer workerReturn.Store(saved)
	return OnWorker()
}

// SetWakeSysmon replaces the worker's sysmon wake with f and returns the
// restore. Tests that use it must not run in parallel.
func SetWakeSysmon(f func()) (restore func()) {
	old := wakeSysmon
	wakeSysmon = f
	return func() { wakeSysmon = old }
}
