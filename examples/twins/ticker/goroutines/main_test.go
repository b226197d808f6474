package main

import (
	"context"
	"testing"
	"time"

	"github.com/blitz-go/blitz/examples/twins/internal/twintest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTicker(t *testing.T) {
	twintest.Ticker(t, func(t *testing.T, period time.Duration) twintest.Batcher {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		in := make(chan string)
		out := make(chan []string, 1000)
		go func() {
			defer close(out)
			batch(ctx, in, period, func(b []string) { out <- b })
		}()
		return twintest.Batcher{
			Send: func(m string) { in <- m },
			End:  func() { close(in) },
			Stop: cancel,
			Out:  out,
		}
	})
}
