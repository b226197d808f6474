package blocking

// Pause points for white-box tests (export_test.go installs the hook).

// hookPoint names a moment of the worker protocol at which Pool.hook is
// called.
type hookPoint uint8

const (
	// hookIdleTimedOut: a parked worker's idle timer fired and the worker
	// has not yet taken Pool.mu to leave the idle list ("Idle workers").
	hookIdleTimedOut hookPoint = iota
)
