// Command httpserver is plain net/http served over the blitz runtime's I/O:
// runtime.NetListener adapts a runtime TCP listener to net.Listener, and
// each connection it accepts is a net.Conn whose reads and writes are the
// runtime's operations (io_uring, epoll, kqueue or IOCP). The handlers are
// ordinary Go code; nothing in them knows about the runtime.
//
// On interrupt (Ctrl-C) or SIGTERM it stops gracefully: http.Server.Shutdown
// closes the listener and waits for the requests in flight, then the
// runtime shuts down.
//
//	go run ./examples/httpserver               # serve on 127.0.0.1:8080
//	curl http://127.0.0.1:8080/hello
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/blitz-go/blitz/runtime"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, *addr, os.Stdout, nil); err != nil {
		log.Fatal(err)
	}
}

// handler is the application: ordinary net/http code.
func handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from blitz, %s\n", r.RemoteAddr)
	})
	mux.HandleFunc("POST /count", func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%d bytes\n", n)
	})
	return mux
}

// serve runs the server until ctx ends; ready, if not nil, receives the
// address once it listens.
func serve(ctx context.Context, addr string, out io.Writer, ready chan<- string) error {
	rt, err := runtime.New(runtime.Config{})
	if err != nil {
		return err
	}
	defer rt.Shutdown(context.Background())
	l, err := runtime.ListenTCP(rt.Handle(), addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "httpserver: listening on http://%s (backend %s)\n", l.Addr(), rt.Backend())
	if ready != nil {
		ready <- l.AddrPort().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(runtime.NetListener(l)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(out, "httpserver: stopping")
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(out, "httpserver: stopped")
	return nil
}
