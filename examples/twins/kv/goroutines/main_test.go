package main

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/blitz-go/blitz/examples/twins/internal/twintest"
)

func TestMain(m *testing.M) { twintest.Main(m) }

func start(t testing.TB, idle time.Duration) (string, func()) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- newServer(idle).serve(ctx, l) }()
	return l.Addr().String(), func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func TestKV(t *testing.T) {
	twintest.KV(t, func(t *testing.T, idle time.Duration) (string, func()) { return start(t, idle) })
}

// BenchmarkIdleConnMemory: go test -run '^$' -bench IdleConnMemory -benchtime 1x.
func BenchmarkIdleConnMemory(b *testing.B) {
	twintest.IdleConnMemory(b, twintest.KVClients, 1, func(string) (string, func()) { return start(b, time.Hour) })
}
