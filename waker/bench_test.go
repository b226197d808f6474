package waker_test

import (
	"container/list"
	"context"
	"sync"
	"testing"

	"github.com/blitz-go/blitz/waker"
)

// The benchmarks run each operation side by side with the standard
// library's way of doing it. Keep "waker" first in each group.

// BenchmarkWaitWake measures one round trip between two goroutines: A wakes
// B, B wakes A; one op is the pair. "waker" is two events built from List,
// Signal and sync.Mutex (helpers_test.go: the blocking tier of a
// primitive); "chan" is two unbuffered channels; "cond" is two flags under
// one sync.Mutex with two sync.Conds.
func BenchmarkWaitWake(b *testing.B) {
	b.Run("waker", func(b *testing.B) {
		var ping, pong event
		b.ReportAllocs()
		done := make(chan struct{})
		go func() {
			defer close(done)
			var sig waker.Signal
			var w waker.Waiter[struct{}]
			for {
				if _, err := ping.wait(context.Background(), &w, &sig, true); err != nil {
					return
				}
				if ping.stop() {
					return
				}
				pong.notifyOne()
			}
		}()
		var sig waker.Signal
		var w waker.Waiter[struct{}]
		for b.Loop() {
			ping.notifyOne()
			_, _ = pong.wait(context.Background(), &w, &sig, true)
		}
		ping.mu.Lock()
		ping.stopped = true
		ping.mu.Unlock()
		ping.notifyOne()
		<-done
	})
	b.Run("chan", func(b *testing.B) {
		ping, pong := make(chan struct{}), make(chan struct{})
		b.ReportAllocs()
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range ping {
				pong <- struct{}{}
			}
		}()
		for b.Loop() {
			ping <- struct{}{}
			<-pong
		}
		close(ping)
		<-done
	})
	b.Run("cond", func(b *testing.B) {
		var mu sync.Mutex
		pingC, pongC := sync.NewCond(&mu), sync.NewCond(&mu)
		var pinged, ponged, stop bool
		b.ReportAllocs()
		done := make(chan struct{})
		go func() {
			defer close(done)
			mu.Lock()
			defer mu.Unlock()
			for {
				for !pinged && !stop {
					pingC.Wait()
				}
				if stop {
					return
				}
				pinged, ponged = false, true
				pongC.Signal()
			}
		}()
		for b.Loop() {
			mu.Lock()
			pinged = true
			pingC.Signal()
			for !ponged {
				pongC.Wait()
			}
			ponged = false
			mu.Unlock()
		}
		mu.Lock()
		stop = true
		pingC.Signal()
		mu.Unlock()
		<-done
	})
}

// BenchmarkListPushRemove measures a remove from anywhere in a list of 64
// waiters and a push at the back; one op is the pair. container/list
// allocates an Element per push; the intrusive List allocates nothing.
func BenchmarkListPushRemove(b *testing.B) {
	const n = 64
	b.Run("waker", func(b *testing.B) {
		var l waker.List[int]
		ws := make([]waker.Waiter[int], n)
		var c counter
		wk := waker.New(&c)
		for i := range ws {
			l.PushBack(&ws[i], wk)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			w := &ws[(i*7)&(n-1)]
			l.Remove(w)
			l.PushBack(w, wk)
		}
	})
	b.Run("containerlist", func(b *testing.B) {
		l := list.New()
		es := make([]*list.Element, n)
		var c counter
		for i := range es {
			es[i] = l.PushBack(&c) // a pointer: boxing it does not allocate
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			j := (i * 7) & (n - 1)
			l.Remove(es[j])
			es[j] = l.PushBack(&c)
		}
	})
}
