package httpserver_test

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/httpserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// malformedCorpus reads the malformed requests of FuzzParseRequest's seed
// corpus (the files named malformed*).
func malformedCorpus(t *testing.T) map[string][]byte {
	files, err := filepath.Glob("testdata/fuzz/FuzzParseRequest/malformed*")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string][]byte{}
	for _, name := range files {
		raw, err := os.ReadFile(name)
		require.NoError(t, err)
		lines := strings.SplitN(string(raw), "\n", 3)
		require.Equal(t, "go test fuzz v1", lines[0], name)
		lit := strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")")
		s, err := strconv.Unquote(lit)
		require.NoError(t, err, name)
		out[filepath.Base(name)] = []byte(s)
	}
	return out
}

// Every malformed request of the fuzz corpus gets a 4xx from a live
// server (from the parser, or from a handler whose body read failed), its
// connection closes, and the server serves normally afterwards.
func TestMalformedCorpusLive(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		ts := startServer(t, cfg, &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.ReadAll(r.Body); err != nil {
				http.Error(w, "bad body", http.StatusBadRequest)
				return
			}
			_, _ = io.WriteString(w, "ok")
		})})
		for name, req := range malformedCorpus(t) {
			c, _ := rawConn(t, ts)
			br := bufio.NewReader(c)
			_, err := c.Write(req)
			require.NoError(t, err, name)
			resp, err := http.ReadResponse(br, nil)
			require.NoError(t, err, "%s: %q", name, req)
			assert.True(t, resp.StatusCode >= 400 && resp.StatusCode < 500, "%s: %q: status %d", name, req, resp.StatusCode)
			_, _ = io.Copy(io.Discard, resp.Body)
			_, err = br.ReadByte()
			assert.Error(t, err, "%s: the connection closes", name)
			c.Close()
		}
		resp, err := newClient(t).Get(ts.url("/after"))
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, "ok", string(b))
	})
}
