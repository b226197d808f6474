package channels

import (
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// Every future this package returns says it may be held by value.
var (
	_ future.Movable = (*SendFuture[int])(nil)
	_ future.Movable = (*RecvFuture[int])(nil)
	_ future.Movable = (*BroadcastRecvFuture[int])(nil)
	_ future.Movable = (*OneshotRecvFuture[int])(nil)
	_ future.Movable = (*UnboundedRecvFuture[int])(nil)
	_ future.Movable = (*ChangedFuture[int])(nil)
)

// TestMovableCopyBeforePoll holds a future by value, copied out of the
// pointer its method returns, and awaits it in place, as generated code
// does: the copy works and allocates nothing.
func TestMovableCopyBeforePoll(t *testing.T) {
	c := NewBounded[int](1)
	cx := future.NewContext(waker.Noop())
	var holder struct {
		send SendFuture[int]
		recv RecvFuture[int]
	}
	allocs := testing.AllocsPerRun(100, func() {
		holder.send = *c.Send(7)
		if err, ok := holder.send.Poll(cx); !ok || err != nil {
			t.Fatalf("send: %v %v", err, ok)
		}
		holder.recv = *c.Recv()
		if r, ok := holder.recv.Poll(cx); !ok || r.Err != nil || r.Value != 7 {
			t.Fatalf("recv: %+v %v", r, ok)
		}
	})
	if allocs != 0 {
		t.Fatalf("a send and a receive held by value allocated %v times", allocs)
	}
}
