//go:build !race

package httpserver_test

import (
	"bufio"
	"bytes"
	"net"
	"runtime"
	"strconv"
	"testing"
)

// maxAllocsPerRequest pins what serving a keep-alive request costs in
// allocations: with a net/http Handler, the request's header block (one
// string for the target and every value), its Header map, the exchange
// (the request with the ResponseWriter's state) and the request's copy
// with its context (Request.WithContext); a TaskHandler's adds its
// future. net/http takes 14 for the same request.
var maxAllocsPerRequest = map[string]int{"blitz": 4, "blitz-task": 5}

// TestAllocationsPerRequest pins the server's allocations per keep-alive
// request: a raw client on one connection (fixed buffers, nothing
// allocated per request) sends requests one at a time to benchHandler,
// and the process's allocations over the requests, after a warm-up, are
// at most maxAllocsPerRequest[kind] each, on both the goroutine Handler and the
// TaskHandler paths. Not under the race detector, whose instrumentation
// allocates.
func TestAllocationsPerRequest(t *testing.T) {
	for _, kind := range []string{"blitz", "blitz-task"} {
		t.Run(kind, func(t *testing.T) {
			addr, stop := benchServer(t, kind)
			defer stop()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			req := []byte("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
			br := bufio.NewReaderSize(c, 4096)
			head := []byte("\r\n\r\n")
			roundTrip := func() {
				if _, err := c.Write(req); err != nil {
					t.Fatal(err)
				}
				// The response: its head, then Content-Length bytes.
				length := -1
				for {
					line, err := br.ReadSlice('\n')
					if err != nil {
						t.Fatal(err)
					}
					if bytes.Equal(line, head[2:]) {
						break
					}
					if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
						length, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
					}
				}
				if length < 0 {
					t.Fatal("no Content-Length")
				}
				if _, err := br.Discard(length); err != nil {
					t.Fatal(err)
				}
			}
			for range 200 {
				roundTrip()
			}
			const n = 2000
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range n {
				roundTrip()
			}
			runtime.ReadMemStats(&after)
			per := float64(after.Mallocs-before.Mallocs) / n
			t.Logf("%s: %.2f allocations, %.0f bytes per request", kind, per, float64(after.TotalAlloc-before.TotalAlloc)/n)
			if max := maxAllocsPerRequest[kind]; per > float64(max)+0.25 {
				t.Errorf("%s: %.2f allocations per request; want at most %d", kind, per, max)
			}
		})
	}
}
