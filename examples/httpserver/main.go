// Command httpserver serves ordinary net/http handlers on the blitz runtime
// with its HTTP/1.1 server (package httpserver): every connection is a task,
// a keep-alive connection waiting for its next request holds no goroutine
// and no buffer, and a handler runs on a goroutine from a bounded pool only
// while it has a request. The handlers are ordinary Go code; nothing in them
// knows about the runtime. (blitz.NetListener is the other way: net/http's
// own server over the runtime's sockets, a goroutine per connection.)
//
// The same server shows what the runtime is doing: the live console at
// /debug/console/, the task dump at /debug/tasks and the metrics at
// /metrics. Polls are timed (Config.PollTiming) for the console's figures.
//
// On interrupt (Ctrl-C) or SIGTERM it stops gracefully: Shutdown closes the
// listener and the idle connections and waits for the requests in flight,
// then the runtime shuts down.
//
//	go run ./examples/httpserver               # serve on 127.0.0.1:8080
//	curl http://127.0.0.1:8080/hello
//	curl http://127.0.0.1:8080/debug/tasks
//	open http://127.0.0.1:8080/debug/console/
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

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/httpserver"
	"github.com/blitz-go/blitz/inspect"
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

// handler is the application: ordinary net/http code, and rt's debugging
// pages under /debug/ and /metrics.
func handler(rt *blitz.Runtime) http.Handler {
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
	mux.Handle("/debug/console/", http.StripPrefix("/debug/console", inspect.Console(rt)))
	mux.Handle("GET /debug/tasks", inspect.DumpHandler(rt))
	mux.Handle("GET /metrics", inspect.MetricsHandler(rt))
	return mux
}

// serve runs the server until ctx ends; ready, if not nil, receives the
// address once it listens.
func serve(ctx context.Context, addr string, out io.Writer, ready chan<- string) error {
	rt, err := blitz.New(blitz.Config{PollTiming: true, SpawnSites: true}) // for the console and the dump
	if err != nil {
		return err
	}
	defer rt.Shutdown(context.Background())
	l, err := blitz.ListenTCP(rt.Handle(), addr)
	if err != nil {
		return err
	}
	srv := &httpserver.Server{Handler: handler(rt), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	fmt.Fprintf(out, "httpserver: listening on http://%s (backend %s)\n", l.Addr(), rt.Backend())
	if ready != nil {
		ready <- l.AddrPort().String()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(rt.Handle(), l) }() // Serve blocks its goroutine; the accept loop is a task
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
