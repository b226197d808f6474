package channels

import "github.com/blitz-go/blitz/waker"

// signals recycles the waker.Signal that a goroutine waits on in the
// blocking tier, so that a blocking wait allocates nothing in steady state
// (and none crosses a testing/synctest bubble: see waker.SignalPool). A
// Signal returned here may still receive a late Wake (a waking party took
// its Waker from a list before the waiter gave up); the next user then sees
// one spurious wakeup, which the waiting protocol tolerates: a goroutine
// always rechecks "Unlinked means woken" under the primitive's lock.
var signals waker.SignalPool

// getSignal takes a Signal for one blocking call.
func getSignal() *waker.Signal { return signals.Get() }

// putSignal returns s once its waiter is unlinked and will not be read again.
func putSignal(s *waker.Signal) { signals.Put(s) }
