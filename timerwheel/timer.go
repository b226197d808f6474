package timerwheel

import "time"

// Timer is a timer of a Service, created by AfterFunc. Its methods are safe
// for concurrent use.
type Timer struct {
	// entry links the Timer into its shard's wheel; entry.Value points
	// back to the Timer. Under shard.mu.
	entry Entry[*Timer]
	// f is the function to run. Written by AfterFunc, read-only after.
	f func()
	// shard is the shard the Timer lives in for its whole life. Written by
	// AfterFunc, read-only after.
	shard *shard
}

// AfterFunc waits for the duration to elapse and then calls f, on a goroutine
// of its own or, with WithInlineCallbacks, on the shard's driver goroutine. It
// returns a Timer that can cancel the call with Stop or reschedule it with
// Reset. A d of zero or less fires at the driver's next wake, within about a
// tick. f never runs before d has passed and runs no later than one tick
// after it, plus the Go runtime's timer and scheduling latency (see "Time and
// ticks").
//
// After Close, AfterFunc returns a Timer that never fires. AfterFunc panics
// with ErrNilFunc if f is nil and ErrUninitializedService on a Service not
// made by NewService.
// Safe for concurrent use.
func (svc *Service) AfterFunc(d time.Duration, f func()) *Timer {
	svc.checkInit()
	if f == nil {
		panic(ErrNilFunc)
	}
	t := &Timer{f: f, shard: svc.pick()}
	t.entry.Value = t
	t.shard.schedule(t, d)
	return t
}

// Stop prevents the Timer from firing. It returns true if the call stops the
// timer, false if the timer has already expired (its f has been started, or
// is about to be started by the driver that collected it), has been stopped,
// or was discarded by Close. As with time.Timer, Stop does not wait for a
// running f to return.
// Safe for concurrent use.
func (t *Timer) Stop() bool {
	if t.shard == nil {
		panic(ErrUninitializedTimer)
	}
	return t.shard.cancel(t)
}

// Reset changes the timer to expire after duration d and reports whether it
// had been active (true) or had expired or been stopped (false), as
// time.Timer.Reset does for an AfterFunc timer. Either way f runs again after
// d, unless the Service is closed: then Reset schedules nothing and returns
// false. As with time.Timer, if the previous expiry's f is still running it
// may overlap the next one when f runs on its own goroutine.
// Safe for concurrent use.
func (t *Timer) Reset(d time.Duration) bool {
	if t.shard == nil {
		panic(ErrUninitializedTimer)
	}
	return t.shard.schedule(t, d)
}
