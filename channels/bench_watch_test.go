package channels

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// wtBenchReceivers is the number of receivers in BenchmarkWatch.
const wtBenchReceivers = 4

// BenchmarkWatch: one sender sends b.N versions; 4 receivers wait for
// changes and read the latest value until the watch closes. op = one send
// observed by all 4 receivers: the last receiver to read a version hands
// the sender a token through a Go channel (the same in every sub-benchmark)
// before the next send, so nobody coalesces. A free-running sender would
// mostly measure how many sends the receivers skip; the metric seen/op (the
// fraction of sends each receiver observed) shows that it is 1 here.
// blitz: receiver tasks awaiting Changed;
// blitzBlocking: goroutines in ChangedBlocking; mutexCond: the Go
// equivalent, a value and version under a sync.Mutex with a sync.Cond
// broadcast on every send.
func BenchmarkWatch(b *testing.B) {
	b.Run("blitz", func(b *testing.B) {
		s := newScheduler(b, 2)
		w := NewWatch(0)
		var seen atomic.Int64
		ack := newWtAck()
		hs := make([]scheduler.JoinHandle[struct{}], wtBenchReceivers)
		for i := range hs {
			r := w.Subscribe()
			var f ChangedFuture[int]
			waiting := false
			n := int64(0)
			hs[i] = spawnFn(s, func(cx *future.Context) bool {
				for {
					if !waiting {
						f, waiting = *r.Changed(), true
					}
					err, ok := f.Poll(cx)
					if !ok {
						return false
					}
					waiting = false
					if err != nil {
						seen.Add(n)
						return true
					}
					_ = r.BorrowAndUpdate()
					n++
					ack.done()
				}
			})
		}
		wtBenchSend(b, w, ack)
		waitAll(b, hs...)
		wtBenchReport(b, seen.Load())
	})
	b.Run("blitzBlocking", func(b *testing.B) {
		w := NewWatch(0)
		var seen atomic.Int64
		ack := newWtAck()
		var wg sync.WaitGroup
		for range wtBenchReceivers {
			r := w.Subscribe()
			wg.Go(func() {
				n := int64(0)
				for r.ChangedBlocking(context.Background()) == nil {
					_ = r.BorrowAndUpdate()
					n++
					ack.done()
				}
				seen.Add(n)
			})
		}
		wtBenchSend(b, w, ack)
		wg.Wait()
		wtBenchReport(b, seen.Load())
	})
	b.Run("mutexCond", func(b *testing.B) {
		var (
			mu      sync.Mutex
			cond    = sync.NewCond(&mu)
			value   int
			version uint64
			closed  bool
			seen    atomic.Int64
			wg      sync.WaitGroup
			ack     = newWtAck()
		)
		for range wtBenchReceivers {
			wg.Go(func() {
				last, n := uint64(0), int64(0)
				mu.Lock()
				for {
					for version == last && !closed {
						cond.Wait()
					}
					if version == last { // closed, nothing unseen
						break
					}
					_, last = value, version
					n++
					mu.Unlock()
					ack.done()
					mu.Lock()
				}
				mu.Unlock()
				seen.Add(n)
			})
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			mu.Lock()
			value, version = i, version+1
			mu.Unlock()
			cond.Broadcast()
			<-ack.ch
		}
		mu.Lock()
		closed = true
		mu.Unlock()
		cond.Broadcast()
		wg.Wait()
		wtBenchReport(b, seen.Load())
	})
}

// wtAck counts the receivers that saw the current version; the last one
// hands the sender its token.
type wtAck struct {
	n  atomic.Int32
	ch chan struct{}
}

func newWtAck() *wtAck { return &wtAck{ch: make(chan struct{}, 1)} }

// done records one receiver's observation.
func (a *wtAck) done() {
	if a.n.Add(1) == wtBenchReceivers {
		a.n.Store(0)
		a.ch <- struct{}{}
	}
}

// wtBenchSend sends b.N versions, each after the previous was observed by
// every receiver, and closes w.
func wtBenchSend(b *testing.B, w *Watch[int], ack *wtAck) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := w.Send(i); err != nil {
			b.Fatal(err)
		}
		<-ack.ch
	}
	w.Close()
}

// wtBenchReport reports the fraction of sends each receiver observed.
func wtBenchReport(b *testing.B, seen int64) {
	b.ReportMetric(float64(seen)/float64(b.N)/wtBenchReceivers, "seen/op")
}
