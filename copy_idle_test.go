package blitz_test

import (
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// TestCopyFromAnIdleSocketHoldsNoBuffer: Copy reads a runtime socket with
// pooled reads, so a copy waiting on a quiet connection holds no buffer of
// its own (io.Copy's 32 KiB): the heap grows by far less than that per
// idle copy. The copies still carry data, and end with their source.
func TestCopyFromAnIdleSocketHoldsNoBuffer(t *testing.T) {
	const n = 64
	rt := newRuntime(t, blitz.Config{Workers: 1})
	h := rt.Handle()
	srcs := make([]*blitz.TCPStream, n)
	peers := make([]net.Conn, n)
	for i := range n {
		srcs[i], peers[i] = tcpPair(t, rt)
	}
	dst := &countingSink{}
	if err := rt.PrepareReadPool(); err != nil { // the pool's memory is the runtime's, not the copies'
		t.Skip("no read pool here:", err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	copies := make([]blitz.JoinHandle[future.Result[int64]], n)
	for i := range n {
		copies[i] = blitz.SpawnOn(h, future.Future[future.Result[int64]](blitz.Copy(dst, srcs[i])))
	}
	time.Sleep(50 * time.Millisecond) // every copy waits for its source
	runtime.GC()
	runtime.ReadMemStats(&after)
	perCopy := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("heap per idle copy: %d bytes", perCopy)
	if perCopy > 8<<10 {
		t.Fatalf("an idle copy holds %d bytes of heap; want no 32 KiB buffer", perCopy)
	}
	for i := range n {
		if _, err := peers[i].Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		peers[i].Close()
	}
	for i, c := range copies {
		r, err := c.Wait(testCtx(t))
		if err != nil || r.Err != nil || r.Value != 1 {
			t.Fatalf("copy %d: %+v, %v; want 1 byte copied", i, r, err)
		}
	}
}

// countingSink is an AsyncWriter that takes every byte at once.
type countingSink struct{ n atomic.Int64 }

func (s *countingSink) PollWrite(_ *future.Context, buf []byte) (future.Result[int], bool) {
	s.n.Add(int64(len(buf)))
	return future.Ok(len(buf)), true
}

func (s *countingSink) CancelWrite() {}
