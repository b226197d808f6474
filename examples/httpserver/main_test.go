package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestHTTPServer(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- serve(ctx, "127.0.0.1:0", &out, ready) }()
	base := "http://" + <-ready
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	resp, err := client.Get(base + "/hello")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.True(t, strings.HasPrefix(string(body), "hello from blitz, 127.0.0.1:"), string(body))

	resp, err = client.Post(base+"/count", "application/octet-stream", strings.NewReader(strings.Repeat("x", 1<<20)))
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, "1048576 bytes\n", string(body))

	for path, want := range map[string]string{
		"/debug/tasks":    "blitz tasks:",
		"/metrics":        "blitz_tasks_live ",
		"/debug/console/": "<title>blitz console</title>",
	} {
		resp, err := client.Get(base + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		require.Contains(t, string(body), want, path)
	}

	resp, err = client.Get(base + "/missing")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	client.CloseIdleConnections()
	stop()
	require.NoError(t, <-done)
	require.Contains(t, out.String(), "httpserver: stopped")
}
