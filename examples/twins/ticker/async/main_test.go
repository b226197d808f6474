package main

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/examples/twins/internal/twintest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTicker(t *testing.T) {
	twintest.Ticker(t, func(t *testing.T, period time.Duration) twintest.Batcher {
		rt := twintest.Runtime(t)
		pr, pw := io.Pipe() // as standard input
		t.Cleanup(func() { pr.Close() })
		out := make(chan []string, 1000)
		in := blitz.NewBufReader(blitz.FromIOReader(pr), 4096)
		h := blitz.SpawnOn(rt.Handle(), batchAsync(in, period, func(b []string) { out <- b }))
		go func() {
			defer close(out)
			if _, err := h.Wait(context.Background()); err != nil && !errors.Is(err, blitz.ErrCancelled) {
				t.Error(err)
			}
		}()
		return twintest.Batcher{
			Send: func(m string) {
				if _, err := io.WriteString(pw, m+"\n"); err != nil {
					t.Error(err)
				}
			},
			End:  func() { pw.Close() },
			Stop: func() { h.Cancel() }, // as the interrupt's context cancels Run's future
			Out:  out,
		}
	})
}
