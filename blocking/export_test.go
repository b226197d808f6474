package blocking

// The seam for the black-box tests in package blocking_test: the pause
// points of the worker protocol.

// HookPoint names a pause point; see hook.go.
type HookPoint = hookPoint

// The pause points.
const HookIdleTimedOut = hookIdleTimedOut

// SetHook installs f at every pause point of p's workers. Call it before
// the first Submit.
func SetHook(p *Pool, f func(HookPoint)) { p.hook = f }
