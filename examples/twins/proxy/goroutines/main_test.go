package main

import (
	"context"
	"net"
	"testing"

	"github.com/blitz-go/blitz/examples/twins/internal/twintest"
)

func TestMain(m *testing.M) { twintest.Main(m) }

func start(t testing.TB, upstream string) (string, func()) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- newServer(upstream).serve(ctx, l.(*net.TCPListener)) }()
	return l.Addr().String(), func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func TestProxy(t *testing.T) {
	twintest.Proxy(t, func(t *testing.T, upstream string) (string, func()) { return start(t, upstream) })
}

// BenchmarkIdleConnMemory: go test -run '^$' -bench IdleConnMemory -benchtime 1x.
func BenchmarkIdleConnMemory(b *testing.B) {
	twintest.IdleConnMemory(b, twintest.ProxyClients, 6, func(upstream string) (string, func()) { return start(b, upstream) })
}
