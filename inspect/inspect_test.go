package inspect_test

import (
	"context"
	"encoding/json"
	"errors"
	"expvar"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/inspect"
)

func newRuntime(t *testing.T) *blitz.Runtime {
	t.Helper()
	rt, err := blitz.New(blitz.Config{Workers: 2})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Shutdown(context.Background())) })
	return rt
}

// The handler serves the text format with its media type, figures read at
// each request; HEAD has no body; other methods get 405.
func TestMetricsHandler(t *testing.T) {
	rt := newRuntime(t)
	srv := httptest.NewServer(inspect.MetricsHandler(rt))
	defer srv.Close()

	get := func() string {
		res, err := http.Get(srv.URL)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		assert.Equal(t, "text/plain; version=0.0.4; charset=utf-8", res.Header.Get("Content-Type"))
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return string(b)
	}
	first := get()
	require.Contains(t, first, "# TYPE blitz_tasks_spawned_total counter\n")
	require.Contains(t, first, "blitz_tasks_spawned_total 0\n")
	_, err := blitz.SpawnOn(rt.Handle(), future.Ready(1)).Wait(context.Background())
	require.NoError(t, err)
	require.Contains(t, get(), "blitz_tasks_spawned_total 1\n", "figures read afresh")

	res, err := http.Head(srv.URL)
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Empty(t, b)

	res, err = http.Post(srv.URL, "text/plain", strings.NewReader("x"))
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
	assert.Equal(t, "GET, HEAD", res.Header.Get("Allow"))
}

// PublishExpvar serves Metrics as JSON under its name; a second publish of
// the name is refused with ErrExpvarName.
func TestPublishExpvar(t *testing.T) {
	rt := newRuntime(t)
	require.NoError(t, inspect.PublishExpvar("blitz_test_runtime", rt))
	err := inspect.PublishExpvar("blitz_test_runtime", rt)
	require.True(t, errors.Is(err, inspect.ErrExpvarName), "got %v", err)

	_, err = blitz.SpawnOn(rt.Handle(), future.Ready(1)).Wait(context.Background())
	require.NoError(t, err)
	var m blitz.Metrics
	require.NoError(t, json.Unmarshal([]byte(expvar.Get("blitz_test_runtime").String()), &m))
	assert.Len(t, m.Workers, 2)
	assert.Equal(t, rt.Backend(), m.Backend)
	assert.Equal(t, uint64(1), m.Tasks.Spawned)
}

// ExampleMetricsHandler serves the runtime's figures for a Prometheus
// server to scrape.
func ExampleMetricsHandler() {
	rt, err := blitz.New(blitz.Config{Workers: 2})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())
	mux := http.NewServeMux()
	mux.Handle("/metrics", inspect.MetricsHandler(rt))

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.Contains(line, "blitz_workers") || strings.Contains(line, "blitz_tasks_live") {
			fmt.Println(line)
		}
	}
	// Output:
	// # HELP blitz_workers Scheduler workers.
	// # TYPE blitz_workers gauge
	// blitz_workers 2
	// # HELP blitz_tasks_live Tasks spawned and not finished.
	// # TYPE blitz_tasks_live gauge
	// blitz_tasks_live 0
}
