package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/inspect"
)

// debugAddr is where serveDebug listens; empty turns it off. Set by the
// -debug flag.
var debugAddr string

// serveDebug serves, on debugAddr, the runtime's console (/console/), its
// task dump (/debug/tasks), its metrics (/metrics) and Go's pprof
// (/debug/pprof/), on Go's own net/http server: a debugging endpoint
// should not depend on the runtime it inspects being healthy. It returns
// the function that stops it.
func serveDebug(rt *blitz.Runtime, out io.Writer) (stop func(), err error) {
	if debugAddr == "" {
		return func() {}, nil
	}
	l, err := net.Listen("tcp", debugAddr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/console/", http.StripPrefix("/console", inspect.Console(rt)))
	mux.Handle("/debug/tasks", inspect.DumpHandler(rt))
	mux.Handle("/metrics", inspect.MetricsHandler(rt))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	fmt.Fprintf(out, "echo: console on http://%s/console/, task dump on /debug/tasks, metrics on /metrics\n", l.Addr())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}, nil
}
