package syncprim

// The futures of this package are future.Movable: each is returned as a new
// pointer that nothing else holds, and registers nothing until its first
// Poll, so that an await may hold it by value (see future.Movable).

func (*BarrierFuture) MovableBeforePoll()  {}
func (*LockFuture) MovableBeforePoll()     {}
func (*NotifiedFuture) MovableBeforePoll() {}
func (*InitFuture[T]) MovableBeforePoll()  {}
func (*PermitFuture) MovableBeforePoll()   {}
func (*RLockFuture) MovableBeforePoll()    {}
func (*WLockFuture) MovableBeforePoll()    {}
func (*AcquireFuture) MovableBeforePoll()  {}
