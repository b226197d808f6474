package channels

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// bcBenchReceivers and bcBenchCap shape BenchmarkBroadcast: 1 sender, 4
// receivers, a ring (or, for chanFanout, each chan buffer) of 256.
const (
	bcBenchReceivers = 4
	bcBenchCap       = 256
)

// bcBenchCounter is a receiver's progress, on its own cache line.
type bcBenchCounter struct {
	n atomic.Int64
	_ [56]byte
}

// bcThrottle holds a broadcast sender back so that no receiver lags: a
// Broadcast never makes its sender wait, where a chan's full buffer does.
// It waits, yielding, until the slowest receiver is within half the ring.
func bcThrottle(sent int64, prog []bcBenchCounter) {
	for {
		slow := prog[0].n.Load()
		for i := 1; i < len(prog); i++ {
			slow = min(slow, prog[i].n.Load())
		}
		if sent-slow < bcBenchCap/2 {
			return
		}
		runtime.Gosched()
	}
}

// BenchmarkBroadcast: one sender broadcasts b.N messages to 4 receivers.
// op = one message delivered to all 4. blitz: receiver tasks awaiting
// Recv; blitzBlocking: receiver goroutines in RecvBlocking; chanFanout:
// the Go equivalent, the sender sending each message to 4 buffered chans
// each read by a goroutine. The blitz sides throttle the sender on the
// slowest receiver (checked every 32 messages) so that nobody lags.
func BenchmarkBroadcast(b *testing.B) {
	b.Run("blitz", func(b *testing.B) {
		s := newScheduler(b, 2)
		bc := NewBroadcast[int](bcBenchCap)
		prog := make([]bcBenchCounter, bcBenchReceivers)
		hs := make([]scheduler.JoinHandle[struct{}], bcBenchReceivers)
		for i := range hs {
			r := bc.Subscribe()
			var f BroadcastRecvFuture[int]
			waiting := false
			hs[i] = spawnFn(s, func(cx *future.Context) bool {
				for {
					if !waiting {
						f, waiting = *r.Recv(), true
					}
					res, ok := f.Poll(cx)
					if !ok {
						return false
					}
					waiting = false
					if res.Err != nil {
						return true
					}
					prog[i].n.Add(1)
				}
			})
		}
		bcBenchSend(b, bc, prog)
		waitAll(b, hs...)
	})
	b.Run("blitzBlocking", func(b *testing.B) {
		bc := NewBroadcast[int](bcBenchCap)
		prog := make([]bcBenchCounter, bcBenchReceivers)
		var wg sync.WaitGroup
		for i := range bcBenchReceivers {
			r := bc.Subscribe()
			wg.Go(func() {
				for {
					if _, err := r.RecvBlocking(context.Background()); err != nil {
						return
					}
					prog[i].n.Add(1)
				}
			})
		}
		bcBenchSend(b, bc, prog)
		wg.Wait()
	})
	b.Run("chanFanout", func(b *testing.B) {
		chs := make([]chan int, bcBenchReceivers)
		var wg sync.WaitGroup
		for i := range chs {
			chs[i] = make(chan int, bcBenchCap)
			ch := chs[i]
			wg.Go(func() {
				for range ch {
				}
			})
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			for _, ch := range chs {
				ch <- i
			}
		}
		for _, ch := range chs {
			close(ch)
		}
		wg.Wait()
	})
}

// bcBenchSend sends b.N messages, throttled, closes bc and reports.
func bcBenchSend(b *testing.B, bc *Broadcast[int], prog []bcBenchCounter) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%32 == 0 {
			bcThrottle(int64(i), prog)
		}
		if _, err := bc.Send(i); err != nil {
			b.Fatal(err)
		}
	}
	bc.Close()
}
