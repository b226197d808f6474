package httpserver_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/httpserver"
)

// A net/http handler served by connection tasks of a blitz runtime.
func Example() {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &httpserver.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello, %s\n", r.URL.Query().Get("name"))
		}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       time.Minute,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(rt.Handle(), l) }()

	tr := &http.Transport{}
	resp, err := (&http.Client{Transport: tr}).Get("http://" + l.AddrPort().String() + "/?name=gopher")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	tr.CloseIdleConnections()
	fmt.Print(resp.Status, ": ", string(body))

	_ = srv.Shutdown(context.Background())
	fmt.Println(<-done)
	// Output:
	// 200 OK: hello, gopher
	// http: Server closed
}

// A TaskHandler answers on the runtime itself: its future waits (here on
// the runtime's timer) without holding a goroutine. An async function
// marked //blitz:async, compiled by blitzgen, makes such a future from
// straight-line code; here future.Map composes one.
func ExampleTaskHandler() {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &httpserver.Server{
		TaskHandler: httpserver.TaskHandlerFunc(func(w http.ResponseWriter, r *http.Request) future.Future[struct{}] {
			return future.Map(blitz.Sleep(10*time.Millisecond), func(struct{}) struct{} {
				fmt.Fprintln(w, "answered by a task")
				return struct{}{}
			})
		}),
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(rt.Handle(), l) }()

	tr := &http.Transport{}
	resp, err := (&http.Client{Transport: tr}).Get("http://" + l.AddrPort().String() + "/")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	tr.CloseIdleConnections()
	fmt.Print(string(body))
	_ = srv.Shutdown(context.Background())
	<-done
	// Output:
	// answered by a task
}

// A server started as net/http's is: ListenAndServe blocks until Shutdown
// (here on SIGINT, as a program would), then returns ErrServerClosed.
func ExampleServer_ListenAndServe() {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	srv := &httpserver.Server{
		Handler:           http.FileServer(http.Dir(".")),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, os.Interrupt)
		<-stop
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}()
	if err := srv.ListenAndServe(rt.Handle(), "localhost:8080"); !errors.Is(err, httpserver.ErrServerClosed) {
		log.Fatal(err)
	}
}
