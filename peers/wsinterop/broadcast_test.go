package wsinterop

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/httpserver"
	"github.com/blitz-go/blitz/websocket"
)

// startOurBroadcaster starts a blitz httpserver whose connections join a
// Broadcaster (with permessage-deflate as m asks) and read on a
// goroutine until the client closes.
func startOurBroadcaster(t *testing.T, m mode) (string, *websocket.Broadcaster) {
	t.Helper()
	rt := ourRuntime(t)
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := websocket.NewBroadcaster(rt.Handle(), nil)
	up := &websocket.Upgrader{Options: ourOptions, CheckOrigin: func(*http.Request) bool { return true }, Compression: m.options()}
	var conns sync.WaitGroup
	srv := &httpserver.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		b.Add(c)
		conns.Add(1)
		go func() {
			defer conns.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for {
				if _, _, err := c.Read(ctx); err != nil {
					break
				}
			}
			b.Remove(c)
			_ = c.CloseContext(ctx, websocket.StatusNormalClosure, "")
		}()
	})}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(rt.Handle(), l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
		conns.Wait()
	})
	return "ws://" + l.AddrPort().String() + "/ws", b
}

// Prepared messages broadcast by our server reach every peer's clients
// whole: a small text message, a large text message in fragments, a
// binary message, plain and compressed (without and with our side's
// context takeover, where the peer allows it).
func TestBroadcastToPeers(t *testing.T) {
	msgs := []struct {
		binary bool
		p      []byte
		frag   int
	}{
		{false, []byte("hello, room"), 0},
		{false, payload(big(), false), 16 << 10},
		{true, payload(100<<10, true), 0},
	}
	for _, pr := range peers {
		for _, m := range []mode{plain, deflate, takeover} {
			if m != plain && !pr.deflate {
				continue
			}
			t.Run(pr.name+"/"+m.String(), func(t *testing.T) {
				url, b := startOurBroadcaster(t, m)
				const n = 3
				var clients []peerClient
				for range n {
					c, err := pr.dial(t, url, m, &counter{})
					if err != nil {
						t.Fatal(err)
					}
					clients = append(clients, c)
				}
				for start := time.Now(); b.Len() < n; time.Sleep(time.Millisecond) {
					if time.Since(start) > ioTimeout {
						t.Fatalf("%d members, want %d", b.Len(), n)
					}
				}
				for _, msg := range msgs {
					typ := websocket.TextMessage
					if msg.binary {
						typ = websocket.BinaryMessage
					}
					pm, err := websocket.NewPreparedMessage(typ, msg.p, &websocket.PrepareOptions{FragmentSize: msg.frag})
					if err != nil {
						t.Fatal(err)
					}
					if got := b.Broadcast(pm); got != n {
						t.Fatalf("queued for %d, want %d", got, n)
					}
				}
				for i, c := range clients {
					for j, msg := range msgs {
						bin, p, err := c.recv()
						if err != nil || bin != msg.binary || !bytes.Equal(p, msg.p) {
							t.Fatalf("client %d, message %d: binary %v, %d bytes, %v", i, j, bin, len(p), err)
						}
					}
				}
				for _, c := range clients {
					_, _ = c.closeHandshake(clientCode, clientReason)
				}
			})
		}
	}
}
