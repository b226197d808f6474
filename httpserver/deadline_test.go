package httpserver_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/httpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deadlineOutcome is what a deadline test observed, on either server: what
// the handler's calls returned (nil, a timeout, or another error) and what
// the client received.
type deadlineOutcome struct {
	handler   []string
	body      string
	clientErr bool
}

// errKind names an error as the tests compare them across servers.
func errKind(err error) string {
	var ne net.Error
	switch {
	case err == nil:
		return "nil"
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, http.ErrNotSupported):
		return "not supported"
	}
	return "error"
}

// timeouts are the server timeouts a deadline test sets, on either server.
type timeouts struct{ read, write time.Duration }

// onBoth serves handler with the timeouts of cfg on net/http's server and
// on ours (on each backend), runs client against each, and checks that
// both observed want.
func onBoth(t *testing.T, cfg timeouts, handler func(w http.ResponseWriter, r *http.Request, note func(error)), client func(t *testing.T, addr string) (string, bool), want deadlineOutcome) {
	t.Helper()
	run := func(t *testing.T, start func(h http.Handler) string) {
		notes := make(chan string, 16)
		done := make(chan struct{})
		addr := start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer close(done)
			handler(w, r, func(err error) { notes <- errKind(err) })
		}))
		body, cerr := client(t, addr)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the handler did not return")
		}
		close(notes)
		var got deadlineOutcome
		for n := range notes {
			got.handler = append(got.handler, n)
		}
		got.body, got.clientErr = body, cerr
		assert.Equal(t, want, got)
	}
	t.Run("net/http", func(t *testing.T) {
		run(t, func(h http.Handler) string {
			ts := httptest.NewUnstartedServer(h)
			ts.Config.ReadTimeout, ts.Config.WriteTimeout = cfg.read, cfg.write
			ts.Start()
			t.Cleanup(ts.Close)
			return ts.Listener.Addr().String()
		})
	})
	forEachBackend(t, func(t *testing.T, bcfg blitz.Config) {
		run(t, func(h http.Handler) string {
			return startServer(t, bcfg, &httpserver.Server{ReadTimeout: cfg.read, WriteTimeout: cfg.write, Handler: h}).addr
		})
	})
}

// get GETs / and returns what the body held and whether the request or
// the reading of the body failed.
func get(t *testing.T, addr string) (string, bool) {
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 20 * time.Second}).Get("http://" + addr + "/")
	if err != nil {
		return "", true
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err != nil
}

// A streaming handler lifts WriteTimeout with http.ResponseController's
// SetWriteDeadline first thing and goes on writing past it; without that
// its late write fails with a timeout and the client gets no response.
// Both as net/http's server does. The handler's first act is the one that
// counts, and its late write is late by design, so a slow machine only
// makes the outcome surer.
func TestResponseControllerWriteDeadline(t *testing.T) {
	stream := func(extend bool) func(w http.ResponseWriter, r *http.Request, note func(error)) {
		return func(w http.ResponseWriter, r *http.Request, note func(error)) {
			rc := http.NewResponseController(w)
			if extend {
				note(rc.SetWriteDeadline(time.Now().Add(20 * time.Second)))
				_, _ = w.Write([]byte("a"))
				note(rc.Flush())
			}
			time.Sleep(400 * time.Millisecond)
			_, _ = w.Write([]byte("b"))
			note(rc.Flush())
		}
	}
	cfg := timeouts{write: 150 * time.Millisecond}
	t.Run("extended", func(t *testing.T) {
		onBoth(t, cfg, stream(true), get, deadlineOutcome{handler: []string{"nil", "nil", "nil"}, body: "ab"})
	})
	t.Run("not extended", func(t *testing.T) {
		onBoth(t, cfg, stream(false), get, deadlineOutcome{handler: []string{"timeout"}, clientErr: true})
	})
}

// A write deadline already past makes the next flush fail with a timeout;
// the zero time lifts WriteTimeout's.
func TestResponseControllerWriteDeadlinePastAndNone(t *testing.T) {
	cfg := timeouts{write: 100 * time.Millisecond}
	t.Run("past", func(t *testing.T) {
		onBoth(t, cfg, func(w http.ResponseWriter, r *http.Request, note func(error)) {
			rc := http.NewResponseController(w)
			note(rc.SetWriteDeadline(time.Now().Add(-time.Second)))
			_, _ = w.Write([]byte("x"))
			note(rc.Flush())
		}, func(t *testing.T, addr string) (string, bool) {
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer c.Close()
			_, err = c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
			require.NoError(t, err)
			require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Second)))
			b, _ := io.ReadAll(c)
			return string(b), false
		}, deadlineOutcome{handler: []string{"nil", "timeout"}})
	})
	t.Run("none", func(t *testing.T) {
		onBoth(t, cfg, func(w http.ResponseWriter, r *http.Request, note func(error)) {
			rc := http.NewResponseController(w)
			note(rc.SetWriteDeadline(time.Time{})) // first thing: nothing was written under the old bound
			time.Sleep(300 * time.Millisecond)
			_, _ = w.Write([]byte("late"))
			note(rc.Flush())
		}, get, deadlineOutcome{handler: []string{"nil", "nil"}, body: "late"})
	})
}

// A handler extends ReadTimeout with SetReadDeadline and reads a body that
// comes slowly; without the extension the read fails with a timeout.
func TestResponseControllerReadDeadline(t *testing.T) {
	slowBody := func(t *testing.T, addr string) (string, bool) {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		_, err = c.Write([]byte("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab"))
		require.NoError(t, err)
		time.Sleep(time.Second)      // five ReadTimeouts: a slow machine only delays the handler's look further
		_, _ = c.Write([]byte("cd")) // fails if the server closed already: what counts is what the handler saw
		require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Second)))
		_, _ = io.ReadAll(c)
		return "", false
	}
	read := func(extend bool) func(w http.ResponseWriter, r *http.Request, note func(error)) {
		return func(w http.ResponseWriter, r *http.Request, note func(error)) {
			if extend {
				note(http.NewResponseController(w).SetReadDeadline(time.Now().Add(5 * time.Second)))
			}
			b, err := io.ReadAll(r.Body)
			note(err)
			if err == nil && string(b) != "abcd" {
				note(errors.New("body " + string(b)))
			}
			w.Header().Set("Connection", "close")
		}
	}
	cfg := timeouts{read: 200 * time.Millisecond}
	t.Run("extended", func(t *testing.T) {
		onBoth(t, cfg, read(true), slowBody, deadlineOutcome{handler: []string{"nil", "nil"}})
	})
	t.Run("not extended", func(t *testing.T) {
		onBoth(t, cfg, read(false), slowBody, deadlineOutcome{handler: []string{"timeout"}})
	})
}

// EnableFullDuplex is the one method of http.ResponseController the
// server does not have: it reports http.ErrNotSupported, as documented.
func TestResponseControllerFullDuplexUnsupported(t *testing.T) {
	got := make(chan error, 1)
	ts := startServer(t, blitz.Config{}, &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- http.NewResponseController(w).EnableFullDuplex()
	})})
	body, failed := get(t, ts.addr)
	require.False(t, failed)
	require.Empty(t, body)
	require.ErrorIs(t, <-got, http.ErrNotSupported)
}
