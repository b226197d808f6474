package channels

import (
	"context"
	"sync"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// benchBudget is how many sends a producer task of BenchmarkUnbounded makes
// before it yields.
const benchBudget = 128

// uBenchSender is a producer task of BenchmarkUnbounded: one padded object
// (see benchSender). Send never waits, so it yields every benchBudget sends,
// as a cooperative task does (Tokio's budget); without it four producers
// hold both workers and the consumer runs only once they are done.
type uBenchSender struct {
	_     ringPad
	u     *Unbounded[int]
	count int
	_     ringPad
}

// Poll runs the producer.
func (t *uBenchSender) Poll(cx *future.Context) (struct{}, bool) {
	for k := 0; t.count > 0; t.count-- {
		_ = t.u.Send(t.count)
		if k++; k == benchBudget {
			cx.Waker().Wake()
			t.count--
			return struct{}{}, false
		}
	}
	return struct{}{}, true
}

// uBenchReceiver is the consumer task of BenchmarkUnbounded.
type uBenchReceiver struct {
	_       ringPad
	u       *Unbounded[int]
	count   int
	pending bool
	f       UnboundedRecvFuture[int]
	_       ringPad
}

// Poll runs the consumer.
func (t *uBenchReceiver) Poll(cx *future.Context) (struct{}, bool) {
	for t.count > 0 {
		if !t.pending {
			t.f = *t.u.Recv()
			t.pending = true
		}
		if _, ok := t.f.Poll(cx); !ok {
			return struct{}{}, false
		}
		t.pending = false
		t.count--
	}
	return struct{}{}, true
}

// BenchmarkUnbounded: 4 producers send b.N values in all to 1 consumer. The
// Go side has no unbounded channel; its closest equivalent is a buffered
// channel big enough (1<<16) that producers rarely wait. Op = one message.
//
// Producer tasks yield every benchBudget sends (see below).
func BenchmarkUnbounded(b *testing.B) {
	const producers = 4
	b.Run("blitz", func(b *testing.B) {
		s := newScheduler(b, 2)
		u := NewUnbounded[int]()
		b.ReportAllocs()
		b.ResetTimer()
		hs := make([]scheduler.JoinHandle[struct{}], 0, producers+1)
		for i := 0; i < producers; i++ {
			hs = append(hs, spawnFuture[struct{}](s, &uBenchSender{u: u, count: benchSplit(b.N, producers, i)}))
		}
		hs = append(hs, spawnFuture[struct{}](s, &uBenchReceiver{u: u, count: b.N}))
		waitAll(b, hs...)
	})
	b.Run("blitzBlocking", func(b *testing.B) {
		u := NewUnbounded[int]()
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		var wg sync.WaitGroup
		for i := 0; i < producers; i++ {
			wg.Add(1)
			go func(n int) {
				defer wg.Done()
				for ; n > 0; n-- {
					_ = u.Send(n)
				}
			}(benchSplit(b.N, producers, i))
		}
		for i := 0; i < b.N; i++ {
			_, _ = u.RecvBlocking(ctx)
		}
		wg.Wait()
	})
	b.Run("chan", func(b *testing.B) {
		c := make(chan int, 1<<16)
		b.ReportAllocs()
		b.ResetTimer()
		var wg sync.WaitGroup
		for i := 0; i < producers; i++ {
			wg.Add(1)
			go func(n int) {
				defer wg.Done()
				for ; n > 0; n-- {
					c <- n
				}
			}(benchSplit(b.N, producers, i))
		}
		for i := 0; i < b.N; i++ {
			<-c
		}
		wg.Wait()
	})
}
