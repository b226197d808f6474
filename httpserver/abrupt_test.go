package httpserver_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/httpserver"
	"github.com/stretchr/testify/require"
)

// Clients that vanish at every stage of a request (mid-header, mid-body
// while the handler reads, while the handler writes a large response)
// leave nothing behind: the server goes on serving, and Shutdown (in the
// cleanup) finds every connection gone; goleak checks the handler
// goroutines.
func TestAbruptClients(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		big := bytes.Repeat([]byte("B"), 1<<20)
		// WriteTimeout bounds the response to a client that vanished
		// where the platform does not fail the pending send (Wine's
		// emulation of Windows sockets keeps it pending).
		ts := startServer(t, cfg, &httpserver.Server{WriteTimeout: 3 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/read":
				_, _ = io.Copy(io.Discard, r.Body)
			case "/write":
				for i := 0; i < 8; i++ {
					if _, err := w.Write(big); err != nil {
						return
					}
				}
			}
			_, _ = io.WriteString(w, "ok")
		})})
		n := 20
		if testing.Short() {
			n = 6
		}
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := net.DialTimeout("tcp", ts.addr, 5*time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				switch i % 4 {
				case 0:
					_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHo")
				case 1:
					_, _ = io.WriteString(c, "POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nsome")
				case 2:
					_, _ = io.WriteString(c, "POST /read HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc")
				case 3:
					_, _ = io.WriteString(c, "GET /write HTTP/1.1\r\nHost: x\r\n\r\n")
					_, _ = c.Read(make([]byte, 100))
				}
				time.Sleep(time.Duration(i%5) * 5 * time.Millisecond)
				if tc, ok := c.(*net.TCPConn); ok && i%2 == 0 {
					_ = tc.SetLinger(0) // a reset rather than a FIN
				}
			}()
		}
		wg.Wait()
		for i := 0; i < 3; i++ {
			resp, err := newClient(t).Get(ts.url(fmt.Sprintf("/after%d", i)))
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, "ok", string(b))
		}
	})
}
