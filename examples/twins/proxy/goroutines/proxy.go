package main

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// dialTimeout bounds the connection to the upstream server.
const dialTimeout = 5 * time.Second

// server forwards every connection it accepts to upstream.
type server struct {
	upstream string

	mu    sync.Mutex
	conns map[net.Conn]struct{} // open client connections, closed at a stop
	wg    sync.WaitGroup
}

func newServer(upstream string) *server {
	return &server{upstream: upstream, conns: map[net.Conn]struct{}{}}
}

// serve accepts connections on l until ctx ends, then closes every
// connection and waits for their handlers.
func (s *server) serve(ctx context.Context, l *net.TCPListener) error {
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	var err error
	for {
		var c *net.TCPConn
		c, err = l.AcceptTCP()
		if err != nil {
			break
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			_ = s.proxy(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
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

// proxy connects client to upstream and copies both ways until both
// directions have ended, or one fails.
func (s *server) proxy(client *net.TCPConn) error {
	defer client.Close()
	c, err := net.DialTimeout("tcp", s.upstream, dialTimeout)
	if err != nil {
		return err
	}
	up := c.(*net.TCPConn)
	defer up.Close()
	errc := make(chan error, 2)
	go func() { errc <- pipe(up, client) }()
	go func() { errc <- pipe(client, up) }()
	for range 2 {
		if e := <-errc; e != nil && err == nil {
			err = e
			client.Close() // stop the other direction too
			up.Close()
		}
	}
	return err
}

// pipe copies src to dst until src ends, then closes dst's sending side,
// so that dst's peer reads the end too.
func pipe(dst, src *net.TCPConn) error {
	if _, err := io.Copy(dst, src); err != nil {
		return err
	}
	return dst.CloseWrite()
}
