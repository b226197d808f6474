package syncprim

import (
	"context"
	"testing"

	"github.com/blitz-go/blitz/future"
)

// BenchmarkNotify: ping-pong over two Notify values; op = one notification
// delivered and awaited (a round trip is two ops).
func BenchmarkNotify(b *testing.B) {
	b.Run("blitz", func(b *testing.B) {
		b.ReportAllocs()
		s := newScheduler(b, 2)
		rounds := (b.N + 1) / 2
		var ping, pong Notify
		b.ResetTimer()
		hp := spawnFn(s, notifyPinger(&ping, &pong, rounds, true))
		hq := spawnFn(s, notifyPinger(&pong, &ping, rounds, false))
		waitAll(b, hp, hq)
	})
	b.Run("blitzBlocking", func(b *testing.B) {
		b.ReportAllocs()
		rounds := (b.N + 1) / 2
		var ping, pong Notify
		done := make(chan struct{})
		ctx := context.Background()
		go func() {
			defer close(done)
			for range rounds {
				_ = ping.NotifiedBlocking(ctx)
				pong.NotifyOne()
			}
		}()
		for range rounds {
			ping.NotifyOne()
			_ = pong.NotifiedBlocking(ctx)
		}
		<-done
	})
	b.Run("chan", func(b *testing.B) {
		b.ReportAllocs()
		rounds := (b.N + 1) / 2
		ping, pong := make(chan struct{}, 1), make(chan struct{}, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range rounds {
				<-ping
				pong <- struct{}{}
			}
		}()
		for range rounds {
			ping <- struct{}{}
			<-pong
		}
		<-done
	})
}

// notifyPinger is one side of the ping-pong as a task: it notifies out and
// awaits in, rounds times (the first side notifies first).
func notifyPinger(out, in *Notify, rounds int, first bool) func(cx *future.Context) bool {
	var f NotifiedFuture
	waiting, i := false, 0
	return func(cx *future.Context) bool {
		for i < rounds {
			if !waiting {
				if first {
					out.NotifyOne()
				}
				f = *in.Notified()
				waiting = true
			}
			if _, ok := f.Poll(cx); !ok {
				return false
			}
			waiting = false
			if !first {
				out.NotifyOne()
			}
			i++
		}
		return true
	}
}
