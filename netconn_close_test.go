package blitz_test

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/stretchr/testify/require"
)

// TestNetConnCloseEndsEcho is x/net's ConcurrentMethods case made a stress
// test: one side echoes with io.Copy while the other side's reads, writes
// and deadlines race on many goroutines; closing both must end the echo
// promptly, every time. (A nettest run once left the echo's Read blocked
// after the close.)
func TestNetConnCloseEndsEcho(t *testing.T) {
	rounds := 200
	if testing.Short() {
		rounds = 20
	}
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		for round := range rounds {
			c1, c2, err := netPipe(t, rt)
			require.NoError(t, err)
			echoDone := make(chan error, 1)
			go func() {
				_, err := io.CopyBuffer(struct{ io.Writer }{c2}, struct{ io.Reader }{c2}, make([]byte, 1024))
				echoDone <- err
			}()
			hammer(c1, 10+round%20)
			c1.Close()
			c2.Close()
			select {
			case <-echoDone:
			case <-time.After(5 * time.Second):
				t.Fatalf("round %d: the echo's Read or Write did not end after Close", round)
			}
		}
	})
}

// hammer races reads, writes and deadline changes on c from n goroutines
// of each kind, and waits for them.
func hammer(c net.Conn, n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(4)
		go func() { defer wg.Done(); _, _ = c.Read(make([]byte, 1024)) }()
		go func() { defer wg.Done(); _, _ = c.Write(make([]byte, 1024)) }()
		go func() { defer wg.Done(); _ = c.SetDeadline(time.Now().Add(10 * time.Millisecond)) }()
		go func() { defer wg.Done(); _ = c.SetReadDeadline(time.Now().Add(time.Millisecond)) }()
	}
	wg.Wait()
}
