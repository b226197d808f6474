// Package lookuptest is the test every lookup server passes: it runs the
// server and talks to it over TCP.
package lookuptest

import (
	"bufio"
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

	"github.com/blitz-go/blitz/examples/lookup/internal/kv"
)

// Serve is a lookup server's serve function: it serves cfg until ctx ends,
// writes what it does to out, and sends its address to ready once it
// listens.
type Serve func(ctx context.Context, cfg kv.Config, out io.Writer, ready chan<- string) error

// Run tests serve: concurrent clients look keys up (one line at a time and
// several lines in one write), a slow lookup times out and the connection
// goes on, and at the stop a connection still open keeps being served
// through the grace period and is cut when it ends.
func Run(t *testing.T, serve Serve) {
	const timeout = 300 * time.Millisecond
	cfg := kv.Config{
		Addr:    "127.0.0.1:0",
		DB:      kv.Sample(0, time.Hour),
		Timeout: timeout,
		Grace:   time.Second, // long enough for the closed clients' handlers to see EOF on a loaded machine
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ready := make(chan string, 1)
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, &out, ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve returned before listening: %v", err)
	}

	keys := []string{"ada", "grace", "nobody", "barbara", "edsger"}
	want := map[string]string{"ada": "Lovelace", "grace": "Hopper", "nobody": "ERR not found", "barbara": "Liskov", "edsger": "Dijkstra"}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dial(t, addr)
			defer c.Close()
			r := bufio.NewReader(c)
			for j := range 10 {
				key := keys[(i+j)%len(keys)]
				require.Equal(t, want[key], ask(t, c, r, key))
			}
			// Several requests in one write are answered in order.
			_, err := io.WriteString(c, "edsger\nnobody\nada\n")
			require.NoError(t, err)
			for _, key := range []string{"edsger", "nobody", "ada"} {
				require.Equal(t, want[key], readLine(t, r))
			}
		}()
	}
	wg.Add(1)
	go func() { // a slow lookup times out; the connection goes on
		defer wg.Done()
		c := dial(t, addr)
		defer c.Close()
		r := bufio.NewReader(c)
		start := time.Now()
		require.Equal(t, "ERR timeout", ask(t, c, r, "sloth"))
		require.GreaterOrEqual(t, time.Since(start), timeout-20*time.Millisecond, "answered before the timeout")
		require.Equal(t, "Hopper", ask(t, c, r, "grace"))
	}()
	wg.Wait()

	// A connection open at the stop, with a lookup in flight.
	lingering := dial(t, addr)
	defer lingering.Close()
	r := bufio.NewReader(lingering)
	require.Equal(t, "Lovelace", ask(t, lingering, r, "ada"))
	_, err := io.WriteString(lingering, "sloth\n")
	require.NoError(t, err)
	stop()
	// Served through the grace period: its lookup times out and is answered.
	require.Equal(t, "ERR timeout", readLine(t, r))
	// Then cut: closed by the server, not left to time out.
	_ = lingering.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err = r.ReadByte()
	require.Error(t, err)
	require.False(t, errors.Is(err, os.ErrDeadlineExceeded), "the cut connection was left open: %v", err)

	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return within 30s of the stop")
	}
	s := out.String()
	require.Contains(t, s, "lookup: listening on")
	require.Contains(t, s, "lookup: served 6 connections, 1 cut after the grace period")
}

func dial(t *testing.T, addr string) net.Conn {
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	// A watchdog: a server that never answers fails the test, not hangs it.
	require.NoError(t, c.SetDeadline(time.Now().Add(30*time.Second)))
	return c
}

// ask sends key and returns the reply line.
func ask(t *testing.T, c net.Conn, r *bufio.Reader, key string) string {
	_, err := fmt.Fprintf(c, "%s\n", key)
	require.NoError(t, err)
	return readLine(t, r)
}

func readLine(t *testing.T, r *bufio.Reader) string {
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	return line[:len(line)-1]
}

// syncBuffer is a bytes.Buffer that the server and the test may use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
