package channels

import (
	"context"
	"sync"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// oneshotClients is the number of clients in BenchmarkOneshot.
const oneshotClients = 4

// BenchmarkOneshot is the request/reply pattern a oneshot exists for: each
// of 4 clients creates a oneshot, sends its sending half to a server
// goroutine through a Go channel (the same request queue in every
// sub-benchmark) and waits for the reply. op = one oneshot created, sent
// and received. blitz: the clients are tasks awaiting Recv; blitzBlocking:
// goroutines in RecvBlocking; chan: goroutines with a make(chan int, 1)
// per request.
func BenchmarkOneshot(b *testing.B) {
	b.Run("blitz", func(b *testing.B) {
		s := newScheduler(b, 2)
		reqs := make(chan OneshotSender[int], 64)
		go func() {
			for tx := range reqs {
				_ = tx.Send(1)
			}
		}()
		defer close(reqs)
		per := b.N / oneshotClients
		b.ReportAllocs()
		b.ResetTimer()
		hs := make([]scheduler.JoinHandle[struct{}], oneshotClients)
		for c := range hs {
			n := per
			if c == 0 {
				n += b.N % oneshotClients
			}
			var f OneshotRecvFuture[int]
			waiting := false
			hs[c] = spawnFn(s, func(cx *future.Context) bool {
				for n > 0 {
					if !waiting {
						tx, rx := NewOneshot[int]()
						reqs <- tx // the buffer exceeds the clients: never blocks
						f, waiting = *rx.Recv(), true
					}
					if _, ok := f.Poll(cx); !ok {
						return false
					}
					waiting = false
					n--
				}
				return true
			})
		}
		waitAll(b, hs...)
	})
	b.Run("blitzBlocking", func(b *testing.B) {
		reqs := make(chan OneshotSender[int], 64)
		go func() {
			for tx := range reqs {
				_ = tx.Send(1)
			}
		}()
		defer close(reqs)
		oneshotClientsRun(b, func(n int) {
			ctx := context.Background()
			for range n {
				tx, rx := NewOneshot[int]()
				reqs <- tx
				if _, err := rx.RecvBlocking(ctx); err != nil {
					panic(err)
				}
			}
		})
	})
	b.Run("chan", func(b *testing.B) {
		reqs := make(chan chan int, 64)
		go func() {
			for ch := range reqs {
				ch <- 1
			}
		}()
		defer close(reqs)
		oneshotClientsRun(b, func(n int) {
			for range n {
				ch := make(chan int, 1)
				reqs <- ch
				<-ch
			}
		})
	})
}

// oneshotClientsRun splits b.N over oneshotClients goroutines running fn.
func oneshotClientsRun(b *testing.B, fn func(n int)) {
	per := b.N / oneshotClients
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for c := range oneshotClients {
		n := per
		if c == 0 {
			n += b.N % oneshotClients
		}
		wg.Go(func() { fn(n) })
	}
	wg.Wait()
}
