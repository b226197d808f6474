package httpserver_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/httpserver"
	"github.com/stretchr/testify/require"
)

// No more than MaxHandlerGoroutines handlers run at once; the requests
// beyond wait and are all answered.
func TestMaxHandlerGoroutines(t *testing.T) {
	var running, peak atomic.Int32
	ts := startServer(t, blitz.Config{Workers: 2}, &httpserver.Server{
		MaxHandlerGoroutines: 2,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			// Wait (boundedly) for a second handler, so that the bound is
			// reached whatever the machine's load.
			for end := time.Now().Add(2 * time.Second); running.Load() < 2 && time.Now().Before(end); {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(10 * time.Millisecond)
			running.Add(-1)
			_, _ = io.WriteString(w, "ok")
		}),
	})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newClient(t)
			resp, err := c.Get(ts.url("/"))
			if err != nil {
				errs <- err
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "ok" {
				errs <- fmt.Errorf("got %q", b)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	require.Equal(t, int32(2), peak.Load(), "two handlers at most, and the bound was reached")
}

// A body the handler leaves unread is drained when small (the connection
// serves the next request) and makes the connection close when large.
func TestUnreadBody(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		ts := startServer(t, cfg, &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, r.URL.Path)
		})})
		c, br := rawConn(t, ts)
		_, err := io.WriteString(c, "POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789"+
			"POST /chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"+
			"GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		for _, want := range []string{"/small", "/chunked", "/next"} {
			resp, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			require.Equal(t, want, string(b))
			require.False(t, resp.Close, want)
		}

		c2, br2 := rawConn(t, ts)
		_, err = fmt.Fprintf(c2, "POST /large HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", 10<<20)
		require.NoError(t, err)
		resp, err := http.ReadResponse(br2, nil)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		require.Equal(t, "/large", string(b))
		require.True(t, resp.Close, "a large unread body closes the connection")
	})
}

// A body that stalls past ReadTimeout fails the handler's read with a
// timeout; the handler's answer still goes out, then the connection
// closes.
func TestReadTimeoutBody(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		readErr := make(chan error, 1)
		ts := startServer(t, cfg, &httpserver.Server{ReadTimeout: 200 * time.Millisecond, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, err := io.ReadAll(r.Body)
			readErr <- err
			http.Error(w, "slow body", http.StatusRequestTimeout)
		})})
		c, br := rawConn(t, ts)
		_, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly some")
		require.NoError(t, err)
		err = <-readErr
		require.ErrorIs(t, err, os.ErrDeadlineExceeded)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
		b, _ := io.ReadAll(resp.Body)
		require.True(t, strings.HasPrefix(string(b), "slow body"))
		require.True(t, resp.Close)
	})
}
