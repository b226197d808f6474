package runtime

import "sync/atomic"

// atomicCounter and atomicCounter32 name the counters of the net types.
type (
	atomicCounter   = atomic.Uint64
	atomicCounter32 = atomic.Int32
)

// noCopy makes go vet report copies of a future after its first poll.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
