// Command wschat is a chat room in the browser: an HTML page (embedded in
// the binary) whose script opens a WebSocket to the server, and a room
// that sends every message to every member. Each connection is a task of
// the blitz runtime that reads and broadcasts, and a Broadcaster sends
// each message, prepared once, to every member (package room): no
// goroutine per connection. Messages are compressed (permessage-deflate)
// when the browser offers it, as browsers do, once for all the members.
//
//	go run ./examples/wschat           # then open http://127.0.0.1:8090/
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/examples/wschat/room"
	"github.com/blitz-go/blitz/httpserver"
	"github.com/blitz-go/blitz/websocket"
)

//go:embed index.html
var page embed.FS

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "address to listen on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	s, err := start(rt, *addr, nil)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("wschat: open http://%s/", s.addr)
	<-ctx.Done()
	if err := s.stop(); err != nil {
		log.Fatal(err)
	}
}

// chatServer is the HTTP server of the page and the room.
type chatServer struct {
	room *room.Room
	srv  *httpserver.Server
	addr net.Addr
	errc chan error
}

// handler serves the page at / and the room's WebSocket at /ws.
func handler(rt *blitz.Runtime, rm *room.Room) http.Handler {
	up := &websocket.Upgrader{
		Compression: &websocket.CompressionOptions{},
		Options:     websocket.Options{ReadLimit: 1 << 20},
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(page))
	mux.HandleFunc("GET /ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return // Upgrade answered the request
		}
		// The connection is a task from now on: the handler returns.
		blitz.SpawnOn[error](rt.Handle(), rm.ServeAsync(c)).Detach()
	})
	return mux
}

// start serves on addr; left, if not nil, is told of every departure.
func start(rt *blitz.Runtime, addr string, left func(room.Departure)) (*chatServer, error) {
	l, err := blitz.ListenTCP(rt.Handle(), addr)
	if err != nil {
		return nil, err
	}
	s := &chatServer{room: room.New(rt.Handle(), left), addr: l.Addr(), errc: make(chan error, 1)}
	s.srv = &httpserver.Server{Handler: handler(rt, s.room)}
	go func() { s.errc <- s.srv.Serve(rt.Handle(), l) }()
	return s, nil
}

// stop stops the HTTP server and ends the room's connections.
func (s *chatServer) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	s.room.Close()
	if serr := <-s.errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
