package main

import (
	"context"
	"testing"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/examples/twins/internal/twintest"
)

func TestMain(m *testing.M) { twintest.Main(m) }

func start(t testing.TB, rt *blitz.Runtime, upstream string) (string, func()) {
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := &server{upstream: upstream}
	h := blitz.SpawnOn(rt.Handle(), srv.serve(ctx, l))
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

func TestProxy(t *testing.T) {
	twintest.Proxy(t, func(t *testing.T, upstream string) (string, func()) {
		return start(t, twintest.Runtime(t), upstream)
	})
}

// BenchmarkIdleConnMemory: go test -run '^$' -bench IdleConnMemory -benchtime 1x.
func BenchmarkIdleConnMemory(b *testing.B) {
	rt := twintest.Runtime(b)
	twintest.IdleConnMemory(b, twintest.ProxyClients, 2, func(upstream string) (string, func()) { return start(b, rt, upstream) })
}
