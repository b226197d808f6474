package channels

import (
	"context"
	"sync"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// benchSplit splits n operations among k workers.
func benchSplit(n, k, i int) int {
	q := n / k
	if i < n%k {
		q++
	}
	return q
}

// benchSender is a task that sends count values with the future tier. Its
// state is one padded object, as a real task's state machine is: closure
// variables of eight tasks, allocated side by side, would share cache lines
// and measure false sharing instead of the channel.
type benchSender struct {
	_       ringPad
	c       *Bounded[int]
	count   int
	pending bool
	f       SendFuture[int]
	_       ringPad
}

// Poll runs the sender.
func (t *benchSender) Poll(cx *future.Context) (struct{}, bool) {
	for t.count > 0 {
		if !t.pending {
			t.f = *t.c.Send(t.count)
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

// benchReceiver is a task that receives count values with the future tier.
type benchReceiver struct {
	_       ringPad
	c       *Bounded[int]
	count   int
	pending bool
	f       RecvFuture[int]
	_       ringPad
}

// Poll runs the receiver.
func (t *benchReceiver) Poll(cx *future.Context) (struct{}, bool) {
	for t.count > 0 {
		if !t.pending {
			t.f = *t.c.Recv()
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

// BenchmarkChannelMPMC moves b.N messages from 4 producers to 4 consumers
// through a channel of capacity 1024: tasks with the future tier (on two
// workers, and on one, where no cache line moves between cores), goroutines
// with the blocking tier, goroutines with a buffered Go channel. Op = one
// message moved.
func BenchmarkChannelMPMC(b *testing.B) {
	const producers, consumers, capacity = 4, 4, 1024
	for _, run := range []struct {
		name    string
		workers int
	}{{"blitz", 2}, {"blitzOneWorker", 1}} {
		b.Run(run.name, func(b *testing.B) {
			s := newScheduler(b, run.workers)
			c := NewBounded[int](capacity)
			b.ReportAllocs()
			b.ResetTimer()
			hs := make([]scheduler.JoinHandle[struct{}], 0, producers+consumers)
			for i := 0; i < producers; i++ {
				hs = append(hs, spawnFuture[struct{}](s, &benchSender{c: c, count: benchSplit(b.N, producers, i)}))
			}
			for i := 0; i < consumers; i++ {
				hs = append(hs, spawnFuture[struct{}](s, &benchReceiver{c: c, count: benchSplit(b.N, consumers, i)}))
			}
			waitAll(b, hs...)
		})
	}
	b.Run("blitzBlocking", func(b *testing.B) {
		c := NewBounded[int](capacity)
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		var wg sync.WaitGroup
		for i := 0; i < producers; i++ {
			wg.Add(1)
			go func(n int) {
				defer wg.Done()
				for ; n > 0; n-- {
					_ = c.SendBlocking(ctx, n)
				}
			}(benchSplit(b.N, producers, i))
		}
		for i := 0; i < consumers; i++ {
			wg.Add(1)
			go func(n int) {
				defer wg.Done()
				for ; n > 0; n-- {
					_, _ = c.RecvBlocking(ctx)
				}
			}(benchSplit(b.N, consumers, i))
		}
		wg.Wait()
	})
	b.Run("chan", func(b *testing.B) {
		c := make(chan int, capacity)
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
		for i := 0; i < consumers; i++ {
			wg.Add(1)
			go func(n int) {
				defer wg.Done()
				for ; n > 0; n-- {
					<-c
				}
			}(benchSplit(b.N, consumers, i))
		}
		wg.Wait()
	})
}

// pingTask sends on out then receives on in, rounds times (the initiator,
// first true); with first false it receives first (the echo). One padded
// object, as benchSender.
type pingTask struct {
	_       ringPad
	out, in *Bounded[int]
	rounds  int
	first   bool
	sending bool
	pending bool
	sf      SendFuture[int]
	rf      RecvFuture[int]
	_       ringPad
}

func newPingTask(out, in *Bounded[int], rounds int, first bool) *pingTask {
	return &pingTask{out: out, in: in, rounds: rounds, first: first, sending: first}
}

// Poll runs the ping-pong.
func (t *pingTask) Poll(cx *future.Context) (struct{}, bool) {
	for t.rounds > 0 {
		if t.sending {
			if !t.pending {
				t.sf = *t.out.Send(t.rounds)
				t.pending = true
			}
			if _, ok := t.sf.Poll(cx); !ok {
				return struct{}{}, false
			}
			t.pending, t.sending = false, false
			if !t.first {
				t.rounds--
			}
			continue
		}
		if !t.pending {
			t.rf = *t.in.Recv()
			t.pending = true
		}
		if _, ok := t.rf.Poll(cx); !ok {
			return struct{}{}, false
		}
		t.pending, t.sending = false, true
		if t.first {
			t.rounds--
		}
	}
	return struct{}{}, true
}

// BenchmarkChannelRoundTrip: two parties ping-pong over two channels of
// capacity 1. Op = one round trip.
func BenchmarkChannelRoundTrip(b *testing.B) {
	b.Run("blitz", func(b *testing.B) {
		s := newScheduler(b, 2)
		ping, pong := NewBounded[int](1), NewBounded[int](1)
		b.ReportAllocs()
		b.ResetTimer()
		h1 := spawnFuture[struct{}](s, newPingTask(ping, pong, b.N, true))
		h2 := spawnFuture[struct{}](s, newPingTask(pong, ping, b.N, false))
		waitAll(b, h1, h2)
	})
	b.Run("blitzBlocking", func(b *testing.B) {
		ping, pong := NewBounded[int](1), NewBounded[int](1)
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; i < b.N; i++ {
				v, _ := ping.RecvBlocking(ctx)
				_ = pong.SendBlocking(ctx, v)
			}
		}()
		for i := 0; i < b.N; i++ {
			_ = ping.SendBlocking(ctx, i)
			_, _ = pong.RecvBlocking(ctx)
		}
		<-done
	})
	b.Run("chan", func(b *testing.B) {
		ping, pong := make(chan int, 1), make(chan int, 1)
		b.ReportAllocs()
		b.ResetTimer()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; i < b.N; i++ {
				pong <- <-ping
			}
		}()
		for i := 0; i < b.N; i++ {
			ping <- i
			<-pong
		}
		<-done
	})
}
