package selectasync

import (
	"context"
	"testing"

	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

// BenchmarkSelect measures one select between two receives, both channels
// holding values: an async function's select over futures of the channels
// package (ours) and Go's select over two buffered channels (baseline),
// side by side. The unit is one select; the channels are refilled between
// batches, outside the timer.
func BenchmarkSelect(b *testing.B) {
	const batch = 1024
	b.Run("blitz", func(b *testing.B) {
		x, y := channels.NewBounded[int](batch), channels.NewBounded[int](batch)
		b.ReportAllocs()
		for done := 0; done < b.N; done += batch {
			b.StopTimer()
			for i := range batch {
				_ = x.TrySend(i)
				_ = y.TrySend(i)
			}
			b.StartTimer()
			if _, err := future.Block(context.Background(), drainAsync(x, y, batch)); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			for x.Len() > 0 {
				_, _ = x.TryRecv()
			}
			for y.Len() > 0 {
				_, _ = y.TryRecv()
			}
			b.StartTimer()
		}
	})
	b.Run("goSelect", func(b *testing.B) {
		x, y := make(chan int, batch), make(chan int, batch)
		b.ReportAllocs()
		for done := 0; done < b.N; done += batch {
			b.StopTimer()
			for i := range batch {
				x <- i
				y <- i
			}
			b.StartTimer()
			sum := 0
			for range batch {
				select {
				case v := <-x:
					sum += v
				case v := <-y:
					sum += v
				}
			}
			b.StopTimer()
			for len(x) > 0 {
				<-x
			}
			for len(y) > 0 {
				<-y
			}
			b.StartTimer()
			_ = sum
		}
	})
}
