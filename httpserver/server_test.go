package httpserver_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/httpserver"
	"github.com/stretchr/testify/require"
)

func helloHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello, %s", r.RemoteAddr)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(w, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_ = n
	})
	return mux
}

func TestGetKeepAlive(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		ts := startServer(t, cfg, &httpserver.Server{Handler: helloHandler()})
		c := newClient(t)
		for i := 0; i < 5; i++ {
			resp, err := c.Get(ts.url("/hello"))
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, 200, resp.StatusCode)
			require.True(t, strings.HasPrefix(string(body), "hello, 127.0.0.1:"), string(body))
		}
	})
}

// Successive requests are served by parked handler goroutines (of 50
// requests made one after another, some run on a goroutine that served an
// earlier one), which end with the server (goleak, in TestMain, checks
// that none is left), and a request's context carries the connection's
// local address.
func TestHandlerGoroutinesReusedAndLocalAddr(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		var mu sync.Mutex
		seen := make(map[string]bool)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var buf [64]byte
			id, _, _ := strings.Cut(string(buf[:goruntime.Stack(buf[:], false)]), " [")
			mu.Lock()
			seen[id] = true
			mu.Unlock()
			a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
			if !ok {
				http.Error(w, "no local address", http.StatusInternalServerError)
				return
			}
			fmt.Fprint(w, a.String())
		})
		ts := startServer(t, cfg, &httpserver.Server{Handler: h})
		c := newClient(t)
		const n = 50
		for i := 0; i < n; i++ {
			resp, err := c.Get(ts.url("/"))
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, 200, resp.StatusCode, string(body))
			require.Equal(t, ts.addr, string(body))
		}
		ts.stop(t)
		mu.Lock()
		defer mu.Unlock()
		require.Less(t, len(seen), n, "every request ran on a goroutine of its own")
	})
}
