// Package echotest is the test every echo server of the examples passes
// (the async one, the hand-written one, the plain-Go one): it runs the
// server and talks to it over TCP.
package echotest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Serve is an echo server's serve function: it serves on addr until ctx
// ends, gives connections grace to finish after the stop, writes its report
// to out, and sends its address to ready once it listens.
type Serve func(ctx context.Context, addr string, grace time.Duration, out io.Writer, ready chan<- string) error

// Server runs serve: it echoes for several clients, then stops: the
// clients that finished are counted, and one still connected when the stop
// comes is cut after the grace period.
func Server(t *testing.T, serve Serve) {
	ctx, stop := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- serve(ctx, "127.0.0.1:0", 100*time.Millisecond, &out, ready) }()
	addr := <-ready

	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer c.Close()
			for j := range 20 {
				msg := fmt.Sprintf("client %d line %d\n", i, j)
				_, err := c.Write([]byte(msg))
				require.NoError(t, err)
				got := make([]byte, len(msg))
				_, err = io.ReadFull(c, got)
				require.NoError(t, err)
				require.Equal(t, msg, string(got))
			}
		}()
	}
	wg.Wait()
	lingering, err := net.Dial("tcp", addr) // still open at the stop
	require.NoError(t, err)
	defer lingering.Close()
	_, err = lingering.Write([]byte("x"))
	require.NoError(t, err)
	_, err = io.ReadFull(lingering, make([]byte, 1))
	require.NoError(t, err)

	stop()
	require.NoError(t, <-done)
	// The lingering connection was closed by the shutdown.
	_ = lingering.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = lingering.Read(make([]byte, 1))
	require.Error(t, err)
	require.False(t, errors.Is(err, os.ErrDeadlineExceeded), "the cut connection was left open: %v", err)
	s := out.String()
	require.Contains(t, s, "echo: listening on")
	require.Contains(t, s, "served 5 connections (4 finished in the grace period)")
	// 4 clients × (10 lines of 16 bytes + 10 of 17), and the byte echoed
	// to the connection cut by the shutdown.
	require.Contains(t, s, "echoed 1321 bytes")
}

// CountsConnectionsOpenAtStop runs serve with a client that is still
// connected when the server stops: its bytes were echoed, and the final
// report counts them (it once said "echoed 0 bytes": only connections that
// ended in the grace period were added up).
func CountsConnectionsOpenAtStop(t *testing.T, serve Serve) {
	ctx, stop := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- serve(ctx, "127.0.0.1:0", 50*time.Millisecond, &out, ready) }()
	addr := <-ready

	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	msg := []byte("hello, echo\n")
	_, err = c.Write(msg)
	require.NoError(t, err)
	got := make([]byte, len(msg))
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	require.Equal(t, msg, got)

	stop()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return within 30s of the stop")
	}
	require.Contains(t, out.String(),
		fmt.Sprintf("served 1 connections (0 finished in the grace period), echoed %d bytes", len(msg)))
}
