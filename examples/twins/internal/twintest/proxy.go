package twintest

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// upstream is a TCP server of the test that runs handle for each
// connection.
func upstream(t *testing.T, handle func(c *net.TCPConn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(2 * wait))
				handle(c.(*net.TCPConn))
			}()
		}
	}()
	return l.Addr().String()
}

// Proxy drives a version of examples/twins/proxy; start starts it
// forwarding to the address given.
func Proxy(t *testing.T, start func(t *testing.T, upstream string) (addr string, stop func())) {
	t.Run("HalfCloseFromClient", func(t *testing.T) {
		// The upstream reads to the end (which it sees only if the proxy
		// passed the client's CloseWrite on), then answers and closes.
		got := make(chan []byte, 1)
		up := upstream(t, func(c *net.TCPConn) {
			b, _ := io.ReadAll(c)
			got <- b
			_, _ = c.Write([]byte("read " + string(b)))
		})
		addr, stop := start(t, up)
		defer stop()
		c := Dial(t, addr)
		_, _ = c.Raw().Write([]byte("hello, upstream"))
		c.CloseWrite()
		if b := <-got; string(b) != "hello, upstream" {
			t.Errorf("upstream read %q", b)
		}
		reply, err := io.ReadAll(c.Raw())
		if err != nil || string(reply) != "read hello, upstream" {
			t.Errorf("client read %q, %v", reply, err)
		}
	})
	t.Run("HalfCloseFromUpstream", func(t *testing.T) {
		// The upstream says bye and shuts its sending half, then still reads
		// what the client sends after it.
		got := make(chan []byte, 1)
		up := upstream(t, func(c *net.TCPConn) {
			_, _ = c.Write([]byte("bye"))
			_ = c.CloseWrite()
			b, _ := io.ReadAll(c)
			got <- b
		})
		addr, stop := start(t, up)
		defer stop()
		c := Dial(t, addr)
		bye, err := io.ReadAll(c.Raw()) // to the end: the proxy passed the CloseWrite on
		if err != nil || string(bye) != "bye" {
			t.Fatalf("client read %q, %v", bye, err)
		}
		_, _ = c.Raw().Write([]byte("late words"))
		c.CloseWrite()
		if b := <-got; string(b) != "late words" {
			t.Errorf("upstream read %q", b)
		}
	})
	t.Run("Conversation", func(t *testing.T) {
		// A line echo upstream: each line comes back before the next goes.
		up := upstream(t, func(c *net.TCPConn) { _, _ = io.Copy(c, c) })
		addr, stop := start(t, up)
		defer stop()
		c := Dial(t, addr)
		for _, l := range []string{"one", "two", "three"} {
			if got := c.Ask(l); got != l {
				t.Errorf("sent %q, got %q", l, got)
			}
		}
	})
	t.Run("BothWaysAtOnce", func(t *testing.T) {
		// 1 MiB each way at the same time: neither direction waits for the
		// other, and every byte arrives in order.
		down, upData := random(t, 1<<20), random(t, 1<<20)
		got := make(chan []byte, 1)
		up := upstream(t, func(c *net.TCPConn) {
			wrote := make(chan struct{})
			go func() { _, _ = c.Write(down); _ = c.CloseWrite(); close(wrote) }()
			b, _ := io.ReadAll(c)
			got <- b
			<-wrote
		})
		addr, stop := start(t, up)
		defer stop()
		const conns = 4
		var wg sync.WaitGroup
		for range conns {
			c := Dial(t, addr)
			wg.Add(1)
			go func() {
				defer wg.Done()
				go func() { _, _ = c.Raw().Write(upData); _ = c.Raw().(*net.TCPConn).CloseWrite() }()
				b, err := io.ReadAll(c.Raw())
				if err != nil || !bytes.Equal(b, down) {
					t.Errorf("client read %d bytes (%v), want %d", len(b), err, len(down))
				}
			}()
		}
		wg.Wait()
		for range conns {
			if b := <-got; !bytes.Equal(b, upData) {
				t.Errorf("upstream read %d bytes, want %d", len(b), len(upData))
			}
		}
	})
	t.Run("UpstreamReset", func(t *testing.T) {
		// The upstream aborts the connection: the proxy closes the client's.
		up := upstream(t, func(c *net.TCPConn) {
			b := make([]byte, 4)
			_, _ = io.ReadFull(c, b)
			_ = c.SetLinger(0) // Close sends a reset
		})
		addr, stop := start(t, up)
		defer stop()
		c := Dial(t, addr)
		_, _ = c.Raw().Write([]byte("ping"))
		c.EOF(wait)
	})
	t.Run("UpstreamDown", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		down := l.Addr().String()
		l.Close() // nothing listens there now
		addr, stop := start(t, down)
		defer stop()
		Dial(t, addr).EOF(wait)
	})
	t.Run("Stop", func(t *testing.T) {
		up := upstream(t, func(c *net.TCPConn) { _, _ = io.Copy(c, c) })
		addr, stop := start(t, up)
		c := Dial(t, addr)
		if got := c.Ask("hi"); got != "hi" {
			t.Fatal(got)
		}
		stop() // closes the proxied connections
		c.EOF(wait)
		Refused(t, addr)
	})
}

func random(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}
