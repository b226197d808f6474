package blitz_test

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/stretchr/testify/require"
)

// TestCloseNoCrossTalk closes a connection while goroutines keep writing
// to it, then at once opens a new one, which usually gets the closed
// descriptor's number: the new connection's peer must never receive the
// old connection's bytes (a write that passed its closed check before the
// close must not reach the reused descriptor).
func TestCloseNoCrossTalk(t *testing.T) {
	rounds := 200
	if testing.Short() {
		rounds = 40
	}
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		peers := make(chan net.Conn, 4)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					close(peers)
					return
				}
				peers <- c
			}
		}()
		dial := func() (net.Conn, net.Conn) {
			s := ok(t, await(t, rt, blitz.DialTCP(rt.Handle(), ln.Addr().String(), 5*time.Second)))
			return blitz.NetConn(s), <-peers
		}
		old, oldPeer := dial()
		for i := range rounds {
			var wg sync.WaitGroup
			for range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					junk := bytes.Repeat([]byte{'X'}, 512)
					for {
						if _, err := old.Write(junk); err != nil {
							return
						}
					}
				}()
			}
			time.Sleep(time.Duration(i%3) * 100 * time.Microsecond)
			require.NoError(t, old.Close())
			fresh, freshPeer := dial()
			_, err := fresh.Write([]byte("clean"))
			require.NoError(t, err)
			wg.Wait()
			_ = freshPeer.SetReadDeadline(time.Now().Add(5 * time.Second))
			got := make([]byte, 5)
			_, err = io.ReadFull(freshPeer, got)
			require.NoError(t, err)
			require.Equal(t, "clean", string(got), "round %d: the new connection carried the old one's bytes", i)
			oldPeer.Close()
			old, oldPeer = fresh, freshPeer
		}
		old.Close()
		oldPeer.Close()
	})
}
