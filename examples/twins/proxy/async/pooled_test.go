package main

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/examples/twins/internal/twintest"
	"github.com/blitz-go/blitz/future"
)

// proxyPooled is proxy with pipePooled for pipe: a copy that reads into
// the runtime's read pool (ReadPooled) instead of blitz.Copy's buffer of
// its own, so that an idle direction holds no buffer. It is not the
// program's handler; the test and the benchmark below compare it.
//
//blitz:async
func (s *server) proxyPooled(client *blitz.TCPStream) error {
	defer client.Close()
	h, _ := blitz.Current(future.Cx())
	up, err := future.Try(blitz.DialTCP(h, s.upstream, dialTimeout))
	if err != nil {
		return err
	}
	defer up.Close()
	_, err = future.Try(future.TryJoin2(pipePooledAsync(up, client), pipePooledAsync(client, up)))
	return err
}

// pipePooled is pipe reading with ReadPooled.
//
//blitz:async
func pipePooled(dst, src *blitz.TCPStream) (int64, error) {
	var n int64
	for {
		data, err := future.Try(src.ReadPooled())
		if errors.Is(err, io.EOF) {
			return n, dst.CloseWrite()
		}
		if err != nil {
			return n, err
		}
		w, err := future.Try(dst.WriteAll(data.Bytes()))
		data.Release()
		n += int64(w)
		if err != nil {
			return n, err
		}
	}
}

func startPooled(t testing.TB, rt *blitz.Runtime, upstream string) (string, func()) {
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := &server{upstream: upstream}
	h := blitz.SpawnOn(rt.Handle(), blitz.Serve(l, srv.proxyPooledAsync, blitz.ServeConfig{Stop: ctx, Grace: -1}))
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

func TestProxyPooled(t *testing.T) {
	twintest.Proxy(t, func(t *testing.T, upstream string) (string, func()) {
		return startPooled(t, twintest.Runtime(t), upstream)
	})
}

// BenchmarkIdleConnMemoryPooled is BenchmarkIdleConnMemory for
// proxyPooled. The read pool is the runtime's fixed cost: it is made
// before the measurement starts.
func BenchmarkIdleConnMemoryPooled(b *testing.B) {
	rt := twintest.Runtime(b)
	if err := rt.PrepareReadPool(); err != nil {
		b.Fatal(err)
	}
	twintest.IdleConnMemory(b, twintest.ProxyClients, 2, func(upstream string) (string, func()) { return startPooled(b, rt, upstream) })
}
