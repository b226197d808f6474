package iodriver

import (
	"sync/atomic"

	"github.com/blitz-go/blitz/backend"
)

// OpKinds bounds the backend's operation kinds (backend.Kind values are
// small integers from 1).
const OpKinds = 32

// OpCounters count a ring's operations by kind. Any goroutine that submits
// to the ring adds to submitted before the op can complete (Ring.Submit,
// which also counts a refused op as completed); the worker collecting the
// ring adds to completed (Driver.collect). So completed never passes
// submitted, and Counts, which loads completed first, never sees it pass.
type OpCounters struct {
	submitted, completed [OpKinds]atomic.Uint64
}

// submit counts an op of kind k submitted.
func (c *OpCounters) submit(k backend.Kind) {
	if int(k) < OpKinds {
		c.submitted[k].Add(1)
	}
}

// complete counts the final completion of an op of kind k.
func (c *OpCounters) complete(k backend.Kind) {
	if int(k) < OpKinds {
		c.completed[k].Add(1)
	}
}

// Counts returns how many ops of kind k (1 to OpKinds-1) were submitted
// and completed. Any goroutine (Metrics).
func (c *OpCounters) Counts(k backend.Kind) (submitted, completed uint64) {
	completed = c.completed[k].Load() // before submitted: no completion without its submission
	submitted = c.submitted[k].Load()
	return submitted, completed
}
