package main

import (
	"context"
	"testing"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/examples/twins/internal/twintest"
	"github.com/blitz-go/blitz/future"
)

// handleSelect is handle written as one task, the way Tokio's chat example
// is: a select between the client's next line and the next line queued for
// it, instead of a writer task of its own. It is not the program's handler;
// the test and the benchmark below compare it with handle.
//
//blitz:async
func (s *server) handleSelect(conn *blitz.TCPStream) error {
	defer conn.Close()
	c := s.hub.join()
	defer s.hub.leave(c)
	r := blitz.NewBufReader(conn, 0)
	for {
		select {
		case l := <-future.On(r.ReadLine()):
			if l.Err != nil {
				return nil
			}
			s.hub.broadcast(c, l.Value)
		case m := <-future.On(c.out.Recv()): // c.out closes only when handleSelect returns
			if _, err := future.Try(conn.WriteAll([]byte(m.Value + "\n"))); err != nil {
				return err
			}
		}
	}
}

func startSelect(t testing.TB, rt *blitz.Runtime) (string, func()) {
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := newServer()
	h := blitz.SpawnOn(rt.Handle(), blitz.Serve(l, s.handleSelectAsync, blitz.ServeConfig{Stop: ctx, Grace: -1}))
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

func TestChatSelect(t *testing.T) {
	twintest.Chat(t, func(t *testing.T) (string, func()) { return startSelect(t, twintest.Runtime(t)) })
}

// BenchmarkIdleConnMemorySelect is BenchmarkIdleConnMemory for handleSelect.
func BenchmarkIdleConnMemorySelect(b *testing.B) {
	rt := twintest.Runtime(b)
	twintest.IdleConnMemory(b, twintest.ChatClients, 1, func(string) (string, func()) { return startSelect(b, rt) })
}
