package httpserver_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/httpserver"
	"github.com/blitz-go/blitz/httpserver/internal/greet"
	"github.com/stretchr/testify/require"
)

// A TaskHandler written as an async function answers on the runtime:
// many requests wait at once with no handler goroutine, each gets its
// body and its answer.
func TestTaskHandlerAsyncFunction(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		ts := startServer(t, cfg, &httpserver.Server{
			// One handler goroutine at most, and none used: the requests
			// below wait concurrently all the same.
			MaxHandlerGoroutines: 1,
			TaskHandler: httpserver.TaskHandlerFunc(func(w http.ResponseWriter, r *http.Request) future.Future[struct{}] {
				return greet.GreetAsync(w, r, 100*time.Millisecond)
			}),
		})
		c := newClient(t)
		n := 20
		var wg sync.WaitGroup
		errs := make(chan error, n)
		start := time.Now()
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := c.Post(ts.url(fmt.Sprintf("/?name=n%d", i)), "text/plain", strings.NewReader(strings.Repeat("b", i)))
				if err != nil {
					errs <- err
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if want := fmt.Sprintf("hello, n%d (%d bytes)\n", i, i); string(b) != want || resp.ContentLength != int64(len(want)) {
					errs <- fmt.Errorf("got %q (length %d), want %q", b, resp.ContentLength, want)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		require.Less(t, time.Since(start), time.Duration(n)*90*time.Millisecond, "the sleeps overlapped")
	})
}

// A task handler's panic is logged and closes its connection; a body over
// MaxTaskBodyBytes is refused with 413.
func TestTaskHandlerPanicAndBodyLimit(t *testing.T) {
	var logs syncBuffer
	ts := startServer(t, blitz.Config{Workers: 2}, &httpserver.Server{
		ErrorLog:         log.New(&logs, "", 0),
		MaxTaskBodyBytes: 1000,
		TaskHandler: httpserver.TaskHandlerFunc(func(w http.ResponseWriter, r *http.Request) future.Future[struct{}] {
			if r.URL.Path == "/panic" {
				return future.PollFn(func(*future.Context) (struct{}, bool) { panic("task boom") })
			}
			_, _ = io.WriteString(w, "ok")
			return nil
		}),
	})
	c := newClient(t)
	_, err := c.Get(ts.url("/panic"))
	require.Error(t, err)
	require.Contains(t, logs.String(), "task boom")
	resp, err := c.Post(ts.url("/"), "text/plain", strings.NewReader(strings.Repeat("x", 2000)))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	resp, err = c.Post(ts.url("/"), "text/plain", strings.NewReader(strings.Repeat("x", 1000)))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, "ok", string(b))
}

// Closing the server cancels a task handler's future.
func TestTaskHandlerCancelledByClose(t *testing.T) {
	cancelled := make(chan struct{})
	entered := make(chan struct{})
	var once sync.Once
	srv := &httpserver.Server{TaskHandler: httpserver.TaskHandlerFunc(func(w http.ResponseWriter, r *http.Request) future.Future[struct{}] {
		return &cancelProbe{entered: entered, cancelled: cancelled, once: &once}
	})}
	ts := startServer(t, blitz.Config{Workers: 2}, srv)
	conn, _ := rawConn(t, ts)
	_, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	<-entered
	require.NoError(t, srv.Close())
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the future was not cancelled")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, srv.Shutdown(ctx))
}

// cancelProbe never completes; it reports its first poll and its Cancel.
type cancelProbe struct {
	entered, cancelled chan struct{}
	once               *sync.Once
	polled             bool
}

func (p *cancelProbe) Poll(*future.Context) (struct{}, bool) {
	if !p.polled {
		p.polled = true
		close(p.entered)
	}
	return struct{}{}, false
}

func (p *cancelProbe) Cancel() { p.once.Do(func() { close(p.cancelled) }) }

// A chunked request's trailer fields reach a TaskHandler's Request.Trailer,
// as a goroutine Handler's, with the declared names as keys.
func TestTaskHandlerRequestTrailer(t *testing.T) {
	ts := startServer(t, blitz.Config{Workers: 2}, &httpserver.Server{
		TaskHandler: httpserver.TaskHandlerFunc(func(w http.ResponseWriter, r *http.Request) future.Future[struct{}] {
			body, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %q %q", body, r.Trailer.Get("X-Sum"), r.Trailer.Get("X-Late"))
			return future.Ready(struct{}{})
		}),
	})
	c, br := rawConn(t, ts)
	_, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n"+
		"5\r\nhello\r\n0\r\nX-Sum: 5\r\nX-Late: yes\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, `hello "5" "yes"`, string(b))
}
