package httpserver_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/blitz-go/blitz/httpserver"
	"github.com/blitz-go/blitz/runtime"
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
	forEachBackend(t, func(t *testing.T, cfg runtime.Config) {
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
