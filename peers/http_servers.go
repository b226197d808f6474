//go:build linux

package peers

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/lesismal/nbio/nbhttp"
	"github.com/valyala/fasthttp"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/httpserver"
)

// helloBody is every HTTP server's answer to GET /.
var helloBody = []byte("Hello, World!")

// hello is the net/http handler every net/http-based server runs.
func hello(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/plain")
	h.Set("Content-Length", strconv.Itoa(len(helloBody)))
	_, _ = w.Write(helloBody)
}

// serveHTTP runs net/http's server with hello on l.
func serveHTTP(l net.Listener, after func() error) *Server {
	srv := &http.Server{Handler: http.HandlerFunc(hello), ReadHeaderTimeout: time.Minute}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	return &Server{Addr: l.Addr().String(), Stop: func() error {
		err := srv.Close()
		if e := <-done; !errors.Is(e, http.ErrServerClosed) {
			err = errors.Join(err, e)
		}
		if after != nil {
			err = errors.Join(err, after())
		}
		return err
	}}
}

// startNetHTTP is net/http on Go's listener.
func startNetHTTP(addr string) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return serveHTTP(l, nil), nil
}

// startBlitzNetListenerHTTP is net/http over the runtime's listener
// adapter: every connection is a runtime stream driven by net/http's
// goroutine.
func startBlitzNetListenerHTTP(addr string) (*Server, error) {
	rt, l, err := listenBlitz(addr, blitz.Config{})
	if err != nil {
		return nil, err
	}
	return serveHTTP(blitz.NetListener(l), func() error { return rt.Shutdown(context.Background()) }), nil
}

// startNbHTTP is nbio's HTTP engine with the same net/http handler.
func startNbHTTP(addr string) (*Server, error) {
	addr, err := fixedPort(addr)
	if err != nil {
		return nil, err
	}
	e := nbhttp.NewEngine(nbhttp.Config{
		Network: "tcp", Addrs: []string{addr},
		Handler: http.HandlerFunc(hello), MaxLoad: 1 << 20,
	})
	if err := e.Start(); err != nil {
		return nil, err
	}
	return &Server{Addr: addr, Stop: func() error { e.Stop(); return nil }}, nil
}

// startFastHTTP is fasthttp with its own handler type answering the same.
func startFastHTTP(addr string) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("text/plain")
		ctx.SetBody(helloBody)
	}}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	return &Server{Addr: l.Addr().String(), Stop: func() error {
		return errors.Join(srv.Shutdown(), <-done)
	}}, nil
}

// startBlitzHTTP is blitz's own HTTP/1.1 server (package httpserver) with
// the same net/http handler: connections are tasks, and a handler
// goroutine is taken only while a request is being answered.
func startBlitzHTTP(addr string) (*Server, error) {
	rt, l, err := listenBlitz(addr, blitz.Config{})
	if err != nil {
		return nil, err
	}
	srv := &httpserver.Server{Handler: http.HandlerFunc(hello), ReadHeaderTimeout: time.Minute}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(rt.Handle(), l) }()
	return &Server{Addr: l.AddrPort().String(), Stop: func() error {
		err := srv.Close()
		if e := <-done; !errors.Is(e, http.ErrServerClosed) {
			err = errors.Join(err, e)
		}
		return errors.Join(err, rt.Shutdown(context.Background()))
	}}, nil
}
