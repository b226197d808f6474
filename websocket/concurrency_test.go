package websocket

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// Writers on several goroutines: each frame arrives whole.
func TestConcurrentWriters(t *testing.T) {
	ts := startEcho(t, nil)
	c := dialTest(t, ts, nil)
	ctx := context.Background()
	const writers, each = 4, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := c.Write(ctx, TextMessage, fmt.Appendf(nil, "w%d-%d-%s", w, i, make([]byte, 100*i))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	next := make([]int, writers)
	for range writers * each {
		_, p, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var w, i int
		if _, err := fmt.Sscanf(string(p), "w%d-%d-", &w, &i); err != nil || i != next[w] || len(p) < 100*i {
			t.Fatalf("message %.20q out of order or cut (want w%d-%d)", p, w, next[w])
		}
		next[w]++
	}
	wg.Wait()
	if err := c.CloseContext(ctx, StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
}

// Close while another goroutine reads: the reader sees the peer's answer
// and Close returns without waiting for its timeout.
func TestCloseWhileReading(t *testing.T) {
	ts := startEcho(t, nil)
	c := dialTest(t, ts, nil)
	errc := make(chan error, 1)
	go func() {
		_, _, err := c.Read(context.Background())
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	if err := c.CloseContext(context.Background(), StatusGoingAway, "bye"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Close took %v", d)
	}
	if err := <-errc; CloseStatus(err) != StatusGoingAway {
		t.Fatalf("reader: %v", err)
	}
}

// A server connection waiting for a message holds no goroutine.
func TestIdleConnectionsHoldNoGoroutine(t *testing.T) {
	ts := startEcho(t, nil)
	before := runtime.NumGoroutine()
	const n = 50
	conns := make([]*rawConn, n)
	for i := range conns {
		conns[i] = openRaw(t, ts)
		conns[i].send(fr(0x81, "x"))
		if _, ok := conns[i].next(); !ok {
			t.Fatal("no echo")
		}
	}
	time.Sleep(50 * time.Millisecond)
	if d := runtime.NumGoroutine() - before; d > n/5 {
		t.Fatalf("%d idle connections added %d goroutines", n, d)
	}
	for _, rc := range conns {
		rc.send(closeFrame(1000, ""))
		rc.next()
		rc.expectEnd()
	}
}
