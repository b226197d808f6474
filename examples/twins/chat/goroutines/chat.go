package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
)

// queueLen is how many lines may wait for a client that is slow to read;
// it loses the lines broadcast while its queue is full.
const queueLen = 64

// client is one connected client: its number and its queue of lines to
// send.
type client struct {
	id  int
	out chan string
}

// hub is the set of connected clients.
type hub struct {
	mu      sync.Mutex
	clients map[*client]struct{}
	last    int // the last client's number
}

// join adds a client, with its welcome line queued.
func (h *hub) join() *client {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last++
	c := &client{id: h.last, out: make(chan string, queueLen)}
	c.out <- "welcome " + strconv.Itoa(c.id)
	h.clients[c] = struct{}{}
	return c
}

// leave removes c and closes its queue.
func (h *hub) leave(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.clients, c)
	close(c.out)
}

// broadcast queues line, from from, for every other client.
func (h *hub) broadcast(from *client, line string) {
	msg := fmt.Sprintf("%d: %s", from.id, line)
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		if c != from {
			select {
			case c.out <- msg:
			default: // c is too slow: it loses the line
			}
		}
	}
}

// server is the chat server: a reading and a writing goroutine per client.
type server struct {
	hub hub

	mu    sync.Mutex
	conns map[net.Conn]struct{} // open connections, closed at a stop
	wg    sync.WaitGroup
}

func newServer() *server {
	return &server{hub: hub{clients: map[*client]struct{}{}}, conns: map[net.Conn]struct{}{}}
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
			s.handle(c)
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

// handle broadcasts the lines conn sends until it ends, while a goroutine
// of its own writes the client's queue to it.
func (s *server) handle(conn net.Conn) {
	defer conn.Close()
	c := s.hub.join()
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		write(conn, c.out)
	}()
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		s.hub.broadcast(c, sc.Text())
	}
	s.hub.leave(c) // closes c.out: the writer sends what is queued and returns
	<-wrote
}

// write sends the lines of out to conn until out is closed or a write
// fails.
func write(conn net.Conn, out <-chan string) {
	for msg := range out {
		if _, err := io.WriteString(conn, msg+"\n"); err != nil {
			return
		}
	}
}
