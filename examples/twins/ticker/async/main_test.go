package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/examples/twins/internal/twintest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTicker(t *testing.T) {
	twintest.Ticker(t, func(t *testing.T, period time.Duration) twintest.Batcher {
		rt := twintest.Runtime(t)
		stop, stopped := channels.NewOneshot[os.Signal]() // as a signal would
		in := channels.NewBounded[string](1)
		out := make(chan []string, 1000)
		h := blitz.SpawnOn(rt.Handle(), batchAsync(in, period, stopped.Recv(), func(b []string) { out <- b }))
		go func() {
			defer close(out)
			if _, err := h.Wait(context.Background()); err != nil {
				t.Error(err)
			}
		}()
		return twintest.Batcher{
			Send: func(m string) {
				if err := in.SendBlocking(context.Background(), m); err != nil {
					t.Error(err)
				}
			},
			End:  func() { in.Close() },
			Stop: func() { _ = stop.Send(os.Interrupt) },
			Out:  out,
		}
	})
}
