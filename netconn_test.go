package blitz_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/nettest"
)

// netPipe makes a connected pair of NetConn adapters over the runtime: one
// accepted, one dialled.
func netPipe(t *testing.T, rt *blitz.Runtime) (net.Conn, net.Conn, error) {
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	defer l.Close()
	nl := blitz.NetListener(l)
	type res struct {
		c   net.Conn
		err error
	}
	accepted := make(chan res, 1)
	go func() {
		c, err := nl.Accept()
		accepted <- res{c, err}
	}()
	d, err := blitz.BlockOn(context.Background(), rt.Handle(), future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(rt.Handle(), l.AddrPort().String(), 5*time.Second)))
	if err == nil {
		err = d.Err
	}
	if err != nil {
		return nil, nil, err
	}
	a := <-accepted
	if a.err != nil {
		d.Value.Close()
		return nil, nil, a.err
	}
	return a.c, blitz.NetConn(d.Value), nil
}

// TestNetConnConformance runs x/net's net.Conn conformance suite on the
// adapter: basic I/O, ping-pong, racy reads and writes, every deadline
// case, close while blocked, concurrent methods.
func TestNetConnConformance(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		if underWine() && os.Getenv("BLITZ_WINE_NETTEST") == "" {
			// Under Wine, about one run in 60 of PastTimeout reads bytes
			// that the previous subtest's connection carried (a closed
			// socket's data on a new socket); not yet known whether Wine's
			// handle reuse or backend-iocp is at fault. The Windows CI
			// runner runs this for real; BLITZ_WINE_NETTEST=1 runs it here.
			t.Skip("nettest on IOCP under Wine: see the comment (BLITZ_WINE_NETTEST=1 to run)")
		}
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		nettest.TestConn(t, func() (c1, c2 net.Conn, stop func(), err error) {
			c1, c2, err = netPipe(t, rt)
			if err != nil {
				return nil, nil, nil, err
			}
			stop = func() {
				c1.Close()
				c2.Close()
			}
			return c1, c2, stop, nil
		})
	})
}

// TestHTTPOverAdapter serves plain net/http through NetListener and checks
// it with net/http's client (over Go's own net) and over the adapter too.
func TestHTTPOverAdapter(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s %d", r.Method, r.URL.Path, len(body))
		})}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = srv.Serve(blitz.NetListener(l))
		}()
		url := "http://" + l.AddrPort().String()
		viaAdapter := &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			r, err := blitz.BlockOn(ctx, rt.Handle(), future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(rt.Handle(), addr, 5*time.Second)))
			if err == nil {
				err = r.Err
			}
			if err != nil {
				return nil, err
			}
			return blitz.NetConn(r.Value), nil
		}}
		for _, client := range []*http.Client{{}, {Transport: viaAdapter}} {
			for i := range 20 {
				resp, err := client.Post(url+"/x", "text/plain", io.LimitReader(zeros{}, int64(i*1000)))
				require.NoError(t, err)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprintf("POST /x %d", i*1000), string(body))
			}
			if tr, ok := client.Transport.(*http.Transport); ok {
				tr.CloseIdleConnections()
			}
		}
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.NoError(t, srv.Shutdown(ctx))
		wg.Wait()
	})
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
