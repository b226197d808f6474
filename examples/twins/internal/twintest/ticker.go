package twintest

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// Batcher is a running batcher of examples/twins/ticker: Send and End feed
// and close its input, Stop stops it, and Out receives every batch it
// flushes, closed once it returned.
type Batcher struct {
	Send func(string)
	End  func()
	Stop func()
	Out  <-chan []string
}

// Ticker drives a version of examples/twins/ticker; start runs its batcher
// with the period given.
func Ticker(t *testing.T, start func(t *testing.T, period time.Duration) Batcher) {
	next := func(t *testing.T, b Batcher) []string {
		t.Helper()
		select {
		case batch, ok := <-b.Out:
			if !ok {
				t.Fatal("the batcher returned")
			}
			return batch
		case <-time.After(wait):
			t.Fatal("no batch")
		}
		return nil
	}
	returned := func(t *testing.T, b Batcher) {
		t.Helper()
		select {
		case batch, ok := <-b.Out:
			if ok {
				t.Fatalf("got %q, want the batcher to return", batch)
			}
		case <-time.After(wait):
			t.Fatal("the batcher did not return")
		}
	}
	t.Run("TickFlushes", func(t *testing.T) {
		const period = 30 * time.Millisecond
		b := start(t, period)
		b.Send("a")
		b.Send("b")
		sent := time.Now()
		var got []string
		for len(got) < 2 {
			got = append(got, next(t, b)...)
		}
		if !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("got %q", got)
		}
		if d := time.Since(sent); d > period+time.Second {
			t.Errorf("the batch came %v after the messages, with a tick every %v", d, period)
		}
		// Ticks with nothing pending flush nothing.
		select {
		case batch := <-b.Out:
			t.Errorf("got %q with nothing sent", batch)
		case <-time.After(4 * period):
		}
		b.Send("c")
		if got := next(t, b); !slices.Equal(got, []string{"c"}) {
			t.Errorf("got %q", got)
		}
		b.Stop()
		returned(t, b)
	})
	t.Run("StopFlushes", func(t *testing.T) {
		b := start(t, time.Hour)
		b.Send("x")
		b.Send("y")
		time.Sleep(20 * time.Millisecond) // received, not flushed: no tick
		b.Stop()
		if got := next(t, b); !slices.Equal(got, []string{"x", "y"}) {
			t.Errorf("got %q", got)
		}
		returned(t, b)
	})
	t.Run("EndOfInputFlushes", func(t *testing.T) {
		b := start(t, time.Hour)
		b.Send("p")
		b.Send("q")
		b.End()
		if got := next(t, b); !slices.Equal(got, []string{"p", "q"}) {
			t.Errorf("got %q", got)
		}
		returned(t, b)
	})
	t.Run("Order", func(t *testing.T) {
		// Many messages, many ticks: every message once, in order, and no
		// empty batch.
		b := start(t, time.Millisecond)
		var want []string
		go func() {
			for i := range 2000 {
				b.Send(fmt.Sprint(i))
			}
			b.End()
		}()
		for i := range 2000 {
			want = append(want, fmt.Sprint(i))
		}
		var got []string
		batches := 0
		for batch := range b.Out {
			if len(batch) == 0 {
				t.Error("an empty batch")
			}
			got = append(got, batch...)
			batches++
		}
		if !slices.Equal(got, want) {
			t.Errorf("got %d messages, want the 2000 in order", len(got))
		}
		t.Logf("%d batches", batches)
	})
}
