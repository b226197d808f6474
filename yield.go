package blitz

import (
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// YieldFuture is the future of Yield, embeddable and reusable; see
// scheduler.YieldFuture.
type YieldFuture = scheduler.YieldFuture

// Yield returns a future that lets the worker run the other waiting tasks,
// collect I/O completions and fire due timers once before the calling task
// continues; see scheduler.Yield.
func Yield() future.Future[struct{}] { return scheduler.Yield() }
