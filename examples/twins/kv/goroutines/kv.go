package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// store is the key-value map the connections share.
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

// server serves the store, one goroutine per connection, and closes the
// connections idle for longer than idle.
type server struct {
	store store
	idle  time.Duration

	mu    sync.Mutex
	conns map[net.Conn]struct{} // open connections, closed at a stop
	wg    sync.WaitGroup
}

func newServer(idle time.Duration) *server {
	return &server{store: store{m: map[string]string{}}, idle: idle, conns: map[net.Conn]struct{}{}}
}

// serve accepts connections on l until ctx ends, then closes every
// connection and waits for their handlers.
func (s *server) serve(ctx context.Context, l net.Listener) error {
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	var err error
	for {
		var c net.Conn
		c, err = l.Accept()
		if err != nil {
			break
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			_ = s.handle(c)
		}()
	}
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	if ctx.Err() != nil && errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// handle answers the commands of one connection until the client closes it,
// it stays idle for s.idle, or the server stops.
func (s *server) handle(c net.Conn) error {
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	sc := bufio.NewScanner(c)
	for {
		if err := c.SetReadDeadline(time.Now().Add(s.idle)); err != nil {
			return err
		}
		if !sc.Scan() {
			return sc.Err() // nil at EOF; a timeout when idle
		}
		if _, err := io.WriteString(c, s.store.do(sc.Text())+"\n"); err != nil {
			return err
		}
	}
}
