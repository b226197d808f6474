package main

import (
	"context"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/examples/twins/internal/twintest"
)

func TestMain(m *testing.M) { twintest.Main(m) }

func start(t testing.TB, rt *blitz.Runtime, idle time.Duration) (string, func()) {
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := blitz.SpawnOn(rt.Handle(), newServer(idle).serve(ctx, l))
	return l.AddrPort().String(), func() {
		cancel()
		stats, err := h.Wait(context.Background())
		if err == nil {
			err = stats.Err
		}
		if err != nil {
			t.Error(err)
		}
	}
}

func TestKV(t *testing.T) {
	twintest.KV(t, func(t *testing.T, idle time.Duration) (string, func()) {
		rt := twintest.Runtime(t)
		return start(t, rt, idle)
	})
}

// BenchmarkIdleConnMemory: go test -run '^$' -bench IdleConnMemory -benchtime 1x.
func BenchmarkIdleConnMemory(b *testing.B) {
	rt := twintest.Runtime(b)
	twintest.IdleConnMemory(b, twintest.KVClients, 1, func(string) (string, func()) { return start(b, rt, time.Hour) })
}
