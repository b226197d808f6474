package syncprim

import "github.com/blitz-go/blitz/future"

// Every future this package returns says it may be held by value.
var (
	_ future.Movable = (*BarrierFuture)(nil)
	_ future.Movable = (*LockFuture)(nil)
	_ future.Movable = (*NotifiedFuture)(nil)
	_ future.Movable = (*InitFuture[int])(nil)
	_ future.Movable = (*PermitFuture)(nil)
	_ future.Movable = (*RLockFuture)(nil)
	_ future.Movable = (*WLockFuture)(nil)
	_ future.Movable = (*AcquireFuture)(nil)
)
