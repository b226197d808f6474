package main

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// store is the key-value map the connections share. Its lock is never held
// across an await, so a plain sync.Mutex serves.
type store struct {
	mu sync.Mutex
	m  map[string]string
}

// do runs one command line and returns its reply.
func (s *store) do(line string) string {
	cmd, args, _ := strings.Cut(line, " ")
	s.mu.Lock()
	defer s.mu.Unlock()
	switch cmd {
	case "GET":
		if v, ok := s.m[args]; ok {
			return "VALUE " + v
		}
		return "NOT_FOUND"
	case "SET":
		k, v, ok := strings.Cut(args, " ")
		if !ok || k == "" {
			return "ERROR usage: SET key value"
		}
		s.m[k] = v
		return "OK"
	case "DEL":
		if _, ok := s.m[args]; !ok {
			return "NOT_FOUND"
		}
		delete(s.m, args)
		return "DELETED"
	}
	return "ERROR unknown command " + cmd
}

// server serves the store, one task per connection, and closes the
// connections idle for longer than idle.
type server struct {
	store store
	idle  time.Duration
}

func newServer(idle time.Duration) *server {
	return &server{store: store{m: map[string]string{}}, idle: idle}
}

// serve accepts connections on l until ctx ends, then closes every
// connection (their handlers are cancelled, which runs their deferred Close).
func (s *server) serve(ctx context.Context, l *blitz.TCPListener) *blitz.ServeFuture[*blitz.TCPStream] {
	return blitz.Serve(l, s.handleAsync, blitz.ServeConfig{Stop: ctx, Grace: -1})
}

// handle answers the commands of one connection until the client closes it
// or it stays idle for s.idle.
//
//blitz:async
func (s *server) handle(c *blitz.TCPStream) error {
	defer c.Close()
	r := blitz.NewBufReader(c, 0)
	for {
		line, err := future.Try(blitz.TryTimeout(s.idle, r.ReadLine()))
		if err != nil {
			return nil // EOF, or idle for too long
		}
		if _, err := future.Try(c.WriteAll([]byte(s.store.do(line) + "\n"))); err != nil {
			return err
		}
	}
}
