package channels

// The futures of this package are future.Movable: each is returned as a new
// pointer that nothing else holds, and registers nothing until its first
// Poll, so that an await may hold it by value (see future.Movable).

func (*SendFuture[T]) MovableBeforePoll()          {}
func (*RecvFuture[T]) MovableBeforePoll()          {}
func (*BroadcastRecvFuture[T]) MovableBeforePoll() {}
func (*OneshotRecvFuture[T]) MovableBeforePoll()   {}
func (*UnboundedRecvFuture[T]) MovableBeforePoll() {}
func (*ChangedFuture[T]) MovableBeforePoll()       {}
