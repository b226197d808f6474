package main

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

import (
	"context"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// dialTimeout bounds the connection to the upstream server.
const dialTimeout = 5 * time.Second

// server forwards every connection it accepts to upstream.
type server struct {
	upstream string
}

// serve accepts connections on l until ctx ends, then closes every
// connection (their handlers are cancelled, which runs their deferred Close).
func (s *server) serve(ctx context.Context, l *blitz.TCPListener) *blitz.ServeFuture[*blitz.TCPStream] {
	return blitz.Serve(l, s.proxyAsync, blitz.ServeConfig{Stop: ctx, Grace: -1})
}

// proxy connects client to upstream and copies both ways until both
// directions have ended, or one fails (which cancels the other).
//
//blitz:async
func (s *server) proxy(client *blitz.TCPStream) error {
	defer client.Close()
	h, _ := blitz.Current(future.Cx())
	up, err := future.Try(blitz.DialTCP(h, s.upstream, dialTimeout))
	if err != nil {
		return err
	}
	defer up.Close()
	_, err = future.Try(future.TryJoin2(pipeAsync(up, client), pipeAsync(client, up)))
	return err
}

// pipe copies src to dst until src ends, then closes dst's sending side,
// so that dst's peer reads the end too; it returns the bytes copied.
//
//blitz:async
func pipe(dst, src *blitz.TCPStream) (int64, error) {
	n, err := future.Try(blitz.Copy(dst, src))
	if err != nil {
		return n, err
	}
	return n, dst.CloseWrite()
}
