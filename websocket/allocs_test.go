package websocket

import (
	"context"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// loopTransport replays one frame for ever and discards writes.
type loopTransport struct {
	frame []byte
	off   int
}

func (l *loopTransport) PollRead(_ *future.Context, p []byte) (future.Result[int], bool) {
	n := copy(p, l.frame[l.off:])
	l.off = (l.off + n) % len(l.frame)
	return future.Ok(n), true
}
func (l *loopTransport) CancelRead() {}
func (l *loopTransport) PollWrite(_ *future.Context, p []byte) (future.Result[int], bool) {
	return future.Ok(len(p)), true
}
func (l *loopTransport) CancelWrite() {}
func (l *loopTransport) Close() error { return nil }

// Reading and echoing a message that fits the buffers allocates nothing
// once the buffers are made.
func TestSteadyStateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, client := range []bool{false, true} {
		fr := frame(0x81, []byte("hello, steady state"))
		if client {
			fr = appendHeader(nil, true, opText, 5, false, [4]byte{})
			fr = append(fr, "hello"...)
		}
		c := newConn(&loopTransport{frame: fr}, client, "", nil, nil)
		cx := future.NewContext(waker.Noop())
		echo := func() {
			r, ok := c.ReadMessage().Poll(cx)
			if !ok || r.Err != nil {
				t.Fatalf("read: %v %v", ok, r.Err)
			}
			w, ok := c.WriteMessage(r.Value.Type, r.Value.Data).Poll(cx)
			if !ok || w.Err != nil {
				t.Fatalf("write: %v %v", ok, w.Err)
			}
		}
		echo()
		if n := testing.AllocsPerRun(1000, echo); n != 0 {
			t.Errorf("client=%v: %v allocations per message", client, n)
		}
	}
}

// The blocking API, from a goroutine: a Write allocates nothing once warm
// (future.Block reuses its Signal and Context), and a Read only the copy
// of the message it returns.
func TestBlockingSteadyStateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c := newConn(&loopTransport{frame: frame(0x82, []byte("hello, blocking"))}, false, "", nil, nil)
	ctx := context.Background()
	msg := []byte("an answer")
	write := func() {
		if err := c.Write(ctx, BinaryMessage, msg); err != nil {
			t.Fatal(err)
		}
	}
	read := func() {
		if _, _, err := c.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	write()
	read()
	if n := testing.AllocsPerRun(500, write); n != 0 {
		t.Errorf("Write: %v allocations per message, want 0", n)
	}
	if n := testing.AllocsPerRun(500, read); n != 1 {
		t.Errorf("Read: %v allocations per message, want 1 (the copy it returns)", n)
	}
}
