package main

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

// queueLen is how many lines may wait for a client that is slow to read;
// it loses the lines broadcast while its queue is full.
const queueLen = 64

// client is one connected client: its number and its queue of lines to
// send.
type client struct {
	id  int
	out *channels.Bounded[string]
}

// hub is the set of connected clients. Its lock is never held across an
// await, so a plain sync.Mutex serves.
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
	c := &client{id: h.last, out: channels.NewBounded[string](queueLen)}
	_ = c.out.TrySend("welcome " + strconv.Itoa(c.id))
	h.clients[c] = struct{}{}
	return c
}

// leave removes c and closes its queue.
func (h *hub) leave(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.clients, c)
	c.out.Close()
}

// broadcast queues line, from from, for every other client.
func (h *hub) broadcast(from *client, line string) {
	msg := fmt.Sprintf("%d: %s", from.id, line)
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		if c != from {
			_ = c.out.TrySend(msg) // full: c is too slow and loses the line
		}
	}
}

// server is the chat server: a reading and a writing task per client.
type server struct {
	hub hub
}

func newServer() *server {
	return &server{hub: hub{clients: map[*client]struct{}{}}}
}

// serve accepts connections on l until ctx ends, then closes every
// connection (their handlers are cancelled, which runs their deferred
// calls).
func (s *server) serve(ctx context.Context, l *blitz.TCPListener) *blitz.ServeFuture[*blitz.TCPStream] {
	return blitz.Serve(l, s.handleAsync, blitz.ServeConfig{Stop: ctx, Grace: -1})
}

// handle broadcasts the lines conn sends until it ends, while a task of its
// own writes the client's queue to it.
//
//blitz:async
func (s *server) handle(conn *blitz.TCPStream) error {
	c := s.hub.join()
	defer s.hub.leave(c) // closes c.out: the writer sends what is queued and returns
	rd, wr := conn.Split()
	defer rd.Close()
	blitz.Spawn(future.Cx(), writeAsync(wr, c.out)).Detach()
	r := blitz.NewBufReader(rd, 0)
	for {
		line, err := future.Try(r.ReadLine())
		if err != nil {
			return nil
		}
		s.hub.broadcast(c, line)
	}
}

// write sends the lines of out to w until out is closed or a write fails,
// then closes w.
//
//blitz:async
func write(w *blitz.WriteHalf, out *channels.Bounded[string]) error {
	defer w.Close()
	for {
		msg, err := future.Try(out.Recv())
		if err != nil {
			return nil // closed: the client left
		}
		if _, err := future.Try(w.WriteAll([]byte(msg + "\n"))); err != nil {
			return err
		}
	}
}
