package httpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptrace"
	"os/exec"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/httpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A keep-alive client reuses its connection for every request.
func TestKeepAliveReuse(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		ts := startServer(t, cfg, &httpserver.Server{Handler: helloHandler()})
		c := newClient(t)
		var reused atomic.Int32
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
			if i.Reused {
				reused.Add(1)
			}
		}}
		for i := 0; i < 10; i++ {
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", ts.url("/hello"), nil)
			resp, err := c.Do(req)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			require.Equal(t, 200, resp.StatusCode)
			require.NotEmpty(t, resp.Header.Get("Date"))
			require.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
		}
		require.Equal(t, int32(9), reused.Load(), "every request after the first reuses the connection")
	})
}

// Pipelined requests are answered in order on one connection.
func TestPipelining(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		ts := startServer(t, cfg, &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				time.Sleep(20 * time.Millisecond)
			}
			body, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, body)
		})})
		c, br := rawConn(t, ts)
		var reqs bytes.Buffer
		for i := 0; i < 10; i++ {
			path := "/r" + strconv.Itoa(i)
			if i%3 == 0 {
				path = "/slow"
			}
			if i%2 == 0 {
				fmt.Fprintf(&reqs, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
			} else {
				fmt.Fprintf(&reqs, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nab%d", path, i)
			}
		}
		_, err := c.Write(reqs.Bytes())
		require.NoError(t, err)
		for i := 0; i < 10; i++ {
			resp, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			path := "/r" + strconv.Itoa(i)
			if i%3 == 0 {
				path = "/slow"
			}
			want := "GET " + path + " "
			if i%2 == 1 {
				want = "POST " + path + " ab" + strconv.Itoa(i)
			}
			require.Equal(t, want, string(body), "response %d", i)
		}

		// Header blocks split over reads, the second arriving with the
		// end of the first.
		_, err = io.WriteString(c, "GET /a HTTP/1.1\r\nHo")
		require.NoError(t, err)
		time.Sleep(20 * time.Millisecond)
		_, err = io.WriteString(c, "st: x\r\n\r\nGET /b HTTP/1.1\r\nHo")
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		require.Equal(t, "GET /a ", string(body))
		time.Sleep(20 * time.Millisecond)
		_, err = io.WriteString(c, "st: x\r\nX-A: 1\r\n")
		require.NoError(t, err)
		time.Sleep(20 * time.Millisecond)
		_, err = io.WriteString(c, "\r\n")
		require.NoError(t, err)
		resp, err = http.ReadResponse(br, nil)
		require.NoError(t, err)
		body, _ = io.ReadAll(resp.Body)
		require.Equal(t, "GET /b ", string(body))
	})
}

// A chunked request body is decoded; a response flushed before the end is
// chunked; trailers of the request are read past.
func TestChunkedBodies(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		ts := startServer(t, cfg, &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			for i := 0; i < 3; i++ {
				fmt.Fprintf(w, "part%d:%d;", i, len(body))
				w.(http.Flusher).Flush()
			}
		})})
		c := newClient(t)
		pr, pw := io.Pipe()
		go func() {
			for i := 0; i < 5; i++ {
				_, _ = pw.Write(bytes.Repeat([]byte{'a'}, 1000))
			}
			pw.Close()
		}()
		req, _ := http.NewRequest("POST", ts.url("/"), pr)
		resp, err := c.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, []string{"chunked"}, resp.TransferEncoding)
		require.Equal(t, "part0:5000;part1:5000;part2:5000;", string(body))

		// Raw: chunk extensions and a trailer.
		conn, br := rawConn(t, ts)
		_, err = io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"+
			"3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: yes\r\n\r\n"+
			"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		resp, err = http.ReadResponse(br, nil)
		require.NoError(t, err)
		body, _ = io.ReadAll(resp.Body)
		require.Equal(t, "part0:5;part1:5;part2:5;", string(body))
		resp, err = http.ReadResponse(br, nil)
		require.NoError(t, err)
		body, _ = io.ReadAll(resp.Body)
		require.Equal(t, "part0:0;part1:0;part2:0;", string(body))
	})
}

// With Expect: 100-continue the client sends the body only after the
// server's 100 Continue, which the server sends when the handler reads;
// a handler that answers without reading gets no body.
func TestExpectContinue(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		ts := startServer(t, cfg, &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/reject" {
				http.Error(w, "no", http.StatusUnauthorized)
				return
			}
			n, _ := io.Copy(io.Discard, r.Body)
			fmt.Fprintf(w, "%d", n)
		})})
		tr := &http.Transport{ExpectContinueTimeout: 10 * time.Second}
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr, Timeout: 20 * time.Second}

		var sent atomic.Bool
		body := &notingReader{r: strings.NewReader(strings.Repeat("z", 100000)), read: &sent}
		req, _ := http.NewRequest("PUT", ts.url("/accept"), body)
		req.ContentLength = 100000
		req.Header.Set("Expect", "100-continue")
		start := time.Now()
		resp, err := c.Do(req)
		require.NoError(t, err)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, "100000", string(got))
		require.Less(t, time.Since(start), 5*time.Second, "the body went after a 100 Continue, not after the client's timeout")

		sent.Store(false)
		body = &notingReader{r: strings.NewReader(strings.Repeat("z", 100000)), read: &sent}
		req, _ = http.NewRequest("PUT", ts.url("/reject"), body)
		req.ContentLength = 100000
		req.Header.Set("Expect", "100-continue")
		resp, err = c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		require.False(t, sent.Load(), "the client sent no body: no 100 Continue came")
	})
}

type notingReader struct {
	r    io.Reader
	read *atomic.Bool
}

func (n *notingReader) Read(p []byte) (int, error) {
	n.read.Store(true)
	return n.r.Read(p)
}

// HEAD gets the headers (with the Content-Length a GET would have) and no
// body; 204 and 304 have no body either.
func TestNoBodyResponses(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		ts := startServer(t, cfg, &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/204":
				w.WriteHeader(http.StatusNoContent)
				_, err := w.Write([]byte("x"))
				if err != http.ErrBodyNotAllowed {
					panic("write to a 204 should fail")
				}
			case "/304":
				w.WriteHeader(http.StatusNotModified)
			default:
				_, _ = io.WriteString(w, "twelve bytes")
			}
		})})
		c, br := rawConn(t, ts)
		_, err := io.WriteString(c, "HEAD / HTTP/1.1\r\nHost: x\r\n\r\nGET /204 HTTP/1.1\r\nHost: x\r\n\r\nGET /304 HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, &http.Request{Method: "HEAD"})
		require.NoError(t, err)
		require.Equal(t, "12", resp.Header.Get("Content-Length"))
		resp, err = http.ReadResponse(br, nil)
		require.NoError(t, err)
		require.Equal(t, 204, resp.StatusCode)
		require.Empty(t, resp.Header.Get("Content-Length"))
		require.Empty(t, resp.TransferEncoding)
		resp, err = http.ReadResponse(br, nil)
		require.NoError(t, err)
		require.Equal(t, 304, resp.StatusCode)
		resp, err = http.ReadResponse(br, nil)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		require.Equal(t, "twelve bytes", string(b), "the responses without a body left nothing behind")
	})
}

// Large bodies both ways, intact.
func TestLargeBodies(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		size := 8 << 20
		if testing.Short() {
			size = 1 << 20
		}
		payload := make([]byte, size)
		for i := range payload {
			payload[i] = byte(i * 7)
		}
		sum := sha256.Sum256(payload)
		ts := startServer(t, cfg, &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == "GET" {
				_, _ = w.Write(payload)
				return
			}
			h := sha256.New()
			n, err := io.Copy(h, r.Body)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
		})})
		c := newClient(t)
		resp, err := c.Post(ts.url("/"), "application/octet-stream", bytes.NewReader(payload))
		require.NoError(t, err)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, fmt.Sprintf("%d %x", size, sum), string(got))

		resp, err = c.Get(ts.url("/"))
		require.NoError(t, err)
		got, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, sum, sha256.Sum256(got))
	})
}

// Many clients at once, each on its own connection.
func TestConcurrentClients(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		ts := startServer(t, cfg, &httpserver.Server{Handler: helloHandler(), MaxHandlerGoroutines: 4})
		clients, reqs := 32, 20
		if testing.Short() {
			clients, reqs = 8, 10
		}
		var wg sync.WaitGroup
		errs := make(chan error, clients)
		for i := 0; i < clients; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tr := &http.Transport{}
				defer tr.CloseIdleConnections()
				c := &http.Client{Transport: tr, Timeout: 20 * time.Second}
				for j := 0; j < reqs; j++ {
					body := strings.Repeat("q", j*100)
					resp, err := c.Post(ts.url("/echo"), "text/plain", strings.NewReader(body))
					if err != nil {
						errs <- err
						return
					}
					got, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || string(got) != body {
						errs <- fmt.Errorf("request %d: %v, %d bytes", j, err, len(got))
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// curl, when installed, gets what it asks for.
func TestCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	ts := startServer(t, blitz.Config{Workers: 2}, &httpserver.Server{Handler: helloHandler()})
	out, err := exec.Command(curl, "-sS", "--max-time", "10", ts.url("/hello"), ts.url("/hello")).CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, 2, strings.Count(string(out), "hello, 127.0.0.1:"), string(out))
	out, err = exec.Command(curl, "-sS", "--max-time", "10", "--http1.0", "-d", "posted-data", ts.url("/echo")).CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, "posted-data", string(out))
	out, err = exec.Command(curl, "-sS", "--max-time", "10", "-H", "Transfer-Encoding: chunked", "-d", "chunky", ts.url("/echo")).CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, "chunky", string(out))
	out, err = exec.Command(curl, "-sS", "--max-time", "10", "-I", ts.url("/hello")).CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "HTTP/1.1 200 OK")
}

// A client sending its header a byte at a time is cut off at
// ReadHeaderTimeout; an idle keep-alive connection is closed after
// IdleTimeout.
func TestSlowClientTimeouts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		ts := startServer(t, cfg, &httpserver.Server{Handler: helloHandler(), ReadHeaderTimeout: 200 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
		// The bound runs from the accept, which comes after start.
		start := time.Now()
		c, br := rawConn(t, ts)
		req := "GET /hello HTTP/1.1\r\nHost: x\r\nX-Padding: " + strings.Repeat("p", 200) + "\r\n\r\n"
		var werr error
		for i := 0; i < len(req) && werr == nil; i++ {
			_, werr = c.Write([]byte{req[i]})
			time.Sleep(5 * time.Millisecond)
		}
		_, rerr := br.ReadByte()
		require.Error(t, rerr, "the slow client gets no response")
		el := time.Since(start)
		require.GreaterOrEqual(t, el, 200*time.Millisecond)
		require.Less(t, el, 5*time.Second)

		// Idle: one request, then nothing.
		c2, br2 := rawConn(t, ts)
		// The idle time starts after the response, so after idleStart.
		idleStart := time.Now()
		_, err := io.WriteString(c2, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(br2, nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		_, err = br2.ReadByte()
		require.ErrorIs(t, err, io.EOF, "the server closes the idle connection")
		el = time.Since(idleStart)
		require.GreaterOrEqual(t, el, 300*time.Millisecond)
		require.Less(t, el, 5*time.Second)
	})
}

// A header block past MaxHeaderBytes gets 431 and the connection closes.
func TestHeaderLimit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		ts := startServer(t, cfg, &httpserver.Server{Handler: helloHandler(), MaxHeaderBytes: 4096})
		c, br := rawConn(t, ts)
		_, err := io.WriteString(c, "GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: "+strings.Repeat("b", 8000)+"\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
		_, _ = io.Copy(io.Discard, resp.Body)
		_, err = br.ReadByte()
		require.ErrorIs(t, err, io.EOF)

		// Just under the limit is served.
		resp2, err := newClient(t).Do(func() *http.Request {
			r, _ := http.NewRequest("GET", ts.url("/hello"), nil)
			r.Header.Set("X-Big", strings.Repeat("b", 3000))
			return r
		}())
		require.NoError(t, err)
		resp2.Body.Close()
		require.Equal(t, 200, resp2.StatusCode)
	})
}

// Shutdown waits for a request in flight, which completes, and closes the
// idle connections; the listener refuses new connections.
func TestGracefulShutdown(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		entered := make(chan struct{})
		release := make(chan struct{})
		srv := &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				close(entered)
				<-release
			}
			_, _ = io.WriteString(w, "done")
		})}
		ts := startServer(t, cfg, srv)
		// An idle keep-alive connection.
		idle, idleBr := rawConn(t, ts)
		_, err := io.WriteString(idle, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(idleBr, nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)

		c := newClient(t)
		got := make(chan string, 1)
		go func() {
			resp, err := c.Get(ts.url("/slow"))
			if err != nil {
				got <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got <- fmt.Sprintf("%s close=%v", b, resp.Close)
		}()
		<-entered
		shut := make(chan error, 1)
		go func() { shut <- srv.Shutdown(context.Background()) }()
		// The idle connection is closed.
		_, err = idleBr.ReadByte()
		require.ErrorIs(t, err, io.EOF)
		select {
		case err := <-shut:
			t.Fatalf("Shutdown returned %v with a request in flight", err)
		case <-time.After(50 * time.Millisecond):
		}
		close(release)
		require.Equal(t, "done close=true", <-got)
		select {
		case err := <-shut:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("Shutdown did not return")
		}
	})
}

// Shutdown's context ending closes the connections left and cancels the
// requests' contexts.
func TestShutdownDeadline(t *testing.T) {
	entered := make(chan struct{})
	srv := &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-r.Context().Done()
	})}
	ts := startServer(t, blitz.Config{Workers: 2}, srv)
	c := newClient(t)
	errc := make(chan error, 1)
	go func() {
		resp, err := c.Get(ts.url("/"))
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, srv.Shutdown(ctx), context.DeadlineExceeded)
	require.Error(t, <-errc, "the client's connection was closed")
}

// A panicking handler is logged, its connection closed, and the server
// goes on serving.
func TestHandlerPanic(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		var logs syncBuffer
		ts := startServer(t, cfg, &httpserver.Server{ErrorLog: log.New(&logs, "", 0), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/panic" {
				panic("boom")
			}
			_, _ = io.WriteString(w, "fine")
		})})
		c, br := rawConn(t, ts)
		_, err := io.WriteString(c, "GET /panic HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		_, err = br.ReadByte()
		require.ErrorIs(t, err, io.EOF, "the connection closes without a response")
		require.Contains(t, logs.String(), "panic serving")
		require.Contains(t, logs.String(), "boom")
		resp, err := newClient(t).Get(ts.url("/ok"))
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, "fine", string(b))
	})
}

// A handler that calls runtime.Goexit (t.FailNow in a handler under test,
// for one) ends its request as a panic does: the connection is closed
// without a response and nothing logged, and the server goes on serving;
// the client is not left waiting.
func TestHandlerGoexit(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		var logs syncBuffer
		ts := startServer(t, cfg, &httpserver.Server{ErrorLog: log.New(&logs, "", 0), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/goexit" {
				_, _ = io.WriteString(w, "partial")
				goruntime.Goexit()
			}
			_, _ = io.WriteString(w, "fine")
		})})
		for range 3 { // more than once: the pool's goroutine is gone each time
			c, br := rawConn(t, ts)
			require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
			_, err := io.WriteString(c, "GET /goexit HTTP/1.1\r\nHost: x\r\n\r\n")
			require.NoError(t, err)
			_, err = br.ReadByte()
			require.ErrorIs(t, err, io.EOF, "the connection closes without a response")
		}
		require.Empty(t, logs.String())
		resp, err := newClient(t).Get(ts.url("/ok"))
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, "fine", string(b))
	})
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// HTTP/1.0: closed after the response unless keep-alive was asked for.
func TestHTTP10(t *testing.T) {
	ts := startServer(t, blitz.Config{Workers: 2}, &httpserver.Server{Handler: helloHandler()})
	c, br := rawConn(t, ts)
	_, err := io.WriteString(c, "GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.Equal(t, "keep-alive", resp.Header.Get("Connection"))
	_, err = io.WriteString(c, "GET /hello HTTP/1.0\r\n\r\n")
	require.NoError(t, err)
	resp, err = http.ReadResponse(br, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_, err = br.ReadByte()
	require.ErrorIs(t, err, io.EOF)
}

// Malformed requests get their 4xx or 5xx and the connection closes.
func TestMalformedRequests(t *testing.T) {
	cases := []struct {
		req    string
		status int
	}{
		{"GET / HTTP/1.1\r\n\r\n", 400},                                                       // no Host
		{"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},                                 // two Hosts
		{"GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505},                                            // version
		{"GET / HTTX/1.1\r\nHost: x\r\n\r\n", 400},                                            // not HTTP
		{"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501},                // unknown coding
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400}, // conflicting
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400},                     // negative
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400},        // obs-fold
		{"GET / HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n", 400},    // space in name
		{"GET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n", 400},               // control in target
		{"G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 400},                   // bad method
		{"GET / HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n", 417}, // unknown expectation
		{"GET / HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n", 400},      // NUL in a value
		{"GET\r\n\r\n", 400}, // short
		{"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400}, // bad chunk size (read by handler)
	}
	ts := startServer(t, blitz.Config{Workers: 2}, &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})})
	for _, tc := range cases {
		c, br := rawConn(t, ts)
		_, err := io.WriteString(c, tc.req)
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err, "%q", tc.req)
		assert.Equal(t, tc.status, resp.StatusCode, "%q", tc.req)
		_, _ = io.Copy(io.Discard, resp.Body)
		_, err = br.ReadByte()
		assert.Error(t, err, "%q: the connection closes", tc.req)
		c.Close()
	}
}

// A request's context ends when the server is closed.
func TestRequestContextCancelledByClose(t *testing.T) {
	entered := make(chan struct{})
	done := make(chan error, 1)
	srv := &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		select {
		case <-r.Context().Done():
			done <- r.Context().Err()
		case <-time.After(10 * time.Second):
			done <- fmt.Errorf("not cancelled")
		}
	})}
	ts := startServer(t, blitz.Config{Workers: 2}, srv)
	c, _ := rawConn(t, ts)
	_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	<-entered
	require.NoError(t, srv.Close())
	require.ErrorIs(t, <-done, context.Canceled)
}

// Unused import guards.
var _ = bufio.NewReader

// A client that closes its connection while its request is being handled
// cancels the request's context, as with net/http.
func TestClientGoneCancelsContext(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		entered := make(chan struct{})
		done := make(chan error, 1)
		ts := startServer(t, cfg, &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			close(entered)
			select {
			case <-r.Context().Done():
				done <- r.Context().Err()
			case <-time.After(10 * time.Second):
				done <- fmt.Errorf("the context was not cancelled")
			}
		})})
		c, _ := rawConn(t, ts)
		_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		<-entered
		require.NoError(t, c.Close())
		require.ErrorIs(t, <-done, context.Canceled)
	})
}
