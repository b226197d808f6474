package websocket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
)

// hub is an echo server whose connections are also members of a
// Broadcaster.
type hub struct {
	*testServer
	b       *Broadcaster
	mu      sync.Mutex
	conns   []*Conn
	dropped chan error
}

func startHub(t testing.TB, up *Upgrader, queueLen int) *hub {
	t.Helper()
	rt, err := blitz.New(blitz.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	h := &hub{dropped: make(chan error, 100)}
	h.b = NewBroadcaster(rt.Handle(), &BroadcastOptions{QueueLen: queueLen, OnDrop: func(c *Conn, err error) {
		h.dropped <- err
	}})
	h.testServer = startEchoHook(t, rt, up, func(c *Conn) {
		h.mu.Lock()
		h.conns = append(h.conns, c)
		h.mu.Unlock()
		h.b.Add(c)
	})
	return h
}

// waitMembers waits until the set holds n connections.
func (h *hub) waitMembers(t testing.TB, n int) {
	t.Helper()
	for start := time.Now(); h.b.Len() != n; time.Sleep(time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%d members, want %d", h.b.Len(), n)
		}
	}
}

// prepared returns a prepared message or fails the test.
func prepared(t testing.TB, typ MessageType, p []byte, frag int) *PreparedMessage {
	t.Helper()
	pm, err := NewPreparedMessage(typ, p, &PrepareOptions{FragmentSize: frag})
	if err != nil {
		t.Fatal(err)
	}
	return pm
}

// broadcastMessages are a small text message (under the compression
// threshold), a compressible text message in fragments, and a large
// binary message in fragments.
func broadcastMessages(t testing.TB) []*PreparedMessage {
	large := 1 << 20
	if testing.Short() {
		large = 256 << 10
	}
	bin := make([]byte, large)
	for i := range bin {
		bin[i] = byte(i * 7 / 5)
	}
	return []*PreparedMessage{
		prepared(t, TextMessage, []byte("hello"), 0),
		prepared(t, TextMessage, bytes.Repeat([]byte("héllo wörld, "), 15000), 16<<10),
		prepared(t, BinaryMessage, bin, 64<<10),
	}
}

// Every connection of the set receives every message, whole and in
// order, with and without permessage-deflate, and with our side's
// context takeover (each connection compressing for itself); without
// takeover, one encoding serves every connection.
func TestBroadcastDelivers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		up       *Upgrader
		dial     *CompressionOptions
		takeover bool
	}{
		{"plain", &Upgrader{}, nil, false},
		{"deflate", &Upgrader{Compression: &CompressionOptions{}}, &CompressionOptions{}, false},
		{"deflate_takeover", &Upgrader{Compression: &CompressionOptions{ContextTakeover: true}}, &CompressionOptions{PeerContextTakeover: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startHub(t, tc.up, 0)
			const n = 4
			var clients []*Conn
			for range n {
				clients = append(clients, dialTest(t, h.testServer, &DialOptions{Compression: tc.dial}))
			}
			h.waitMembers(t, n)
			msgs := broadcastMessages(t)
			for _, pm := range msgs {
				if got := h.b.Broadcast(pm); got != n {
					t.Fatalf("queued for %d connections, want %d", got, n)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for i, c := range clients {
				for j, pm := range msgs {
					typ, p, err := c.Read(ctx)
					if err != nil || typ != pm.Type() || !bytes.Equal(p, pm.Data()) {
						t.Fatalf("client %d message %d: %s of %d bytes, %v", i, j, typ, len(p), err)
					}
				}
			}
			for j, pm := range msgs {
				pm.mu.Lock()
				encs := len(pm.encs)
				pm.mu.Unlock()
				want := 1 // every connection shares one encoding
				if tc.takeover && j > 0 {
					want = 0 // compressed by each connection
				}
				if encs != want {
					t.Errorf("message %d: %d encodings, want %d", j, encs, want)
				}
			}
			for _, c := range clients {
				_ = c.CloseContext(ctx, StatusNormalClosure, "")
			}
		})
	}
}

// The frames of a prepared message, as a raw client reads them: the
// fragments of FragmentSize bytes, RSV1 on the first one only when
// compressed, the payload inflating to the message.
func TestPreparedFrames(t *testing.T) {
	for _, zip := range []bool{false, true} {
		t.Run(fmt.Sprintf("deflate=%v", zip), func(t *testing.T) {
			msg := bytes.Repeat([]byte("0123456789"), 1000)
			pm := prepared(t, BinaryMessage, msg, 1000)
			up := &Upgrader{}
			ext := ""
			if zip {
				up.Compression = &CompressionOptions{}
				ext = "Sec-WebSocket-Extensions: permessage-deflate\r\n"
			}
			written := make(chan error, 1)
			ts := startEchoHook(t, mustRuntime(t), up, func(c *Conn) {
				written <- c.WritePrepared(context.Background(), pm)
			})
			rc, _ := dialRaw(t, ts, goodHeaders+ext)
			if err := <-written; err != nil {
				t.Fatal(err)
			}
			var got []byte
			for i := 0; ; i++ {
				f, ok := rc.next()
				if !ok {
					t.Fatal("stream ended")
				}
				wantOp := byte(opBinary)
				if i > 0 {
					wantOp = opContinuation
				}
				if f.op != wantOp || f.rsv1 != (zip && i == 0) || len(f.payload) > 1000 {
					t.Fatalf("frame %d: op %#x rsv1 %v, %d bytes", i, f.op, f.rsv1, len(f.payload))
				}
				got = append(got, f.payload...)
				if f.fin {
					if !zip && i != 9 {
						t.Fatalf("%d frames, want 10", i+1)
					}
					break
				}
			}
			if zip {
				z := newTestDeflater(deflateParams{}, &CompressionOptions{}, true)
				out, err := z.inflate(got, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				got = out
			}
			if !bytes.Equal(got, msg) {
				t.Fatalf("received %d bytes, not the message", len(got))
			}
			rc.send(closeFrame(1000, ""))
		})
	}
}

// mustRuntime returns a runtime of two workers (startEchoHook shuts it
// down).
func mustRuntime(t testing.TB) *blitz.Runtime {
	t.Helper()
	rt, err := blitz.New(blitz.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// A client writes prepared messages too: masked per connection, the
// compressed payload shared.
func TestWritePreparedClient(t *testing.T) {
	for _, zip := range []bool{false, true} {
		t.Run(fmt.Sprintf("deflate=%v", zip), func(t *testing.T) {
			up, opts := &Upgrader{}, &DialOptions{}
			if zip {
				up.Compression, opts.Compression = &CompressionOptions{}, &CompressionOptions{}
			}
			ts := startEcho(t, up)
			c := dialTest(t, ts, opts)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for _, pm := range broadcastMessages(t) {
				for range 2 {
					if err := c.WritePrepared(ctx, pm); err != nil {
						t.Fatal(err)
					}
					typ, p, err := c.Read(ctx)
					if err != nil || typ != pm.Type() || !bytes.Equal(p, pm.Data()) {
						t.Fatalf("echo: %s of %d bytes, %v", typ, len(p), err)
					}
				}
			}
			_ = c.CloseContext(ctx, StatusNormalClosure, "")
		})
	}
}

// counter reads messages from a client until it fails, counting them and
// checking each against want.
type counter struct {
	n   atomic.Int64
	err atomic.Value
}

func (k *counter) run(c *Conn, want []byte) {
	for {
		_, p, err := c.Read(context.Background())
		if err != nil {
			k.err.Store(err)
			return
		}
		if !bytes.Equal(p, want) {
			k.err.Store(fmt.Errorf("received %d bytes, not the message", len(p)))
			return
		}
		k.n.Add(1)
	}
}

func waitCount(t *testing.T, ks []*counter, n int64) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		done := true
		for i, k := range ks {
			if err, _ := k.err.Load().(error); err != nil {
				t.Fatalf("client %d: %v", i, err)
			}
			if k.n.Load() < n {
				done = false
			}
		}
		if done {
			return
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("clients did not receive %d messages", n)
		}
	}
}

// A connection closed by its peer leaves the set at the first write that
// fails (OnDrop tells why); the others receive every message.
func TestBroadcastClosedMember(t *testing.T) {
	h := startHub(t, &Upgrader{}, 0)
	var clients []*Conn
	for range 3 {
		clients = append(clients, dialTest(t, h.testServer, nil))
	}
	h.waitMembers(t, 3)
	_ = clients[0].CloseNow()
	msg := []byte("to everyone")
	pm := prepared(t, TextMessage, msg, 0)
	ks := []*counter{{}, {}}
	for i, k := range ks {
		go k.run(clients[i+1], msg)
	}
	sent := int64(0)
	for h.b.Len() == 3 {
		if sent == 2000 {
			t.Fatal("the closed connection is still in the set after 2000 messages")
		}
		h.b.Broadcast(pm)
		sent++
		waitCount(t, ks, sent)
	}
	select {
	case err := <-h.dropped:
		if !errors.Is(err, ErrClosed) && !errors.Is(err, net.ErrClosed) {
			t.Logf("dropped with %v", err) // a reset, a broken pipe
		}
	case <-time.After(10 * time.Second):
		t.Fatal("OnDrop not called")
	}
	for range 10 {
		h.b.Broadcast(pm)
	}
	sent += 10
	waitCount(t, ks, sent)
	for _, c := range clients[1:] {
		_ = c.CloseNow()
	}
}

// A member that does not read is dropped with ErrSlowConsumer once its
// queue is full, while the others receive every message.
func TestBroadcastSlowMember(t *testing.T) {
	h := startHub(t, &Upgrader{}, 4)
	slow := openRaw(t, h.testServer) // never reads
	_ = slow.nc.(*net.TCPConn).SetReadBuffer(4096)
	var clients []*Conn
	for range 2 {
		clients = append(clients, dialTest(t, h.testServer, nil))
	}
	h.waitMembers(t, 3)
	msg := bytes.Repeat([]byte("x"), 256<<10)
	pm := prepared(t, BinaryMessage, msg, 0)
	ks := []*counter{{}, {}}
	for i, k := range ks {
		go k.run(clients[i], msg)
	}
	var sent int64
	for h.b.Len() == 3 {
		if sent == 1000 {
			t.Fatal("the slow connection is still in the set after 1000 messages of 256 KiB")
		}
		h.b.Broadcast(pm)
		sent++
		waitCount(t, ks, sent) // the fast ones keep up
	}
	if err := <-h.dropped; !errors.Is(err, ErrSlowConsumer) {
		t.Fatalf("dropped with %v, want ErrSlowConsumer", err)
	}
	t.Logf("dropped after %d messages", sent)
	for _, c := range clients {
		_ = c.CloseNow()
	}
}

// Add's first messages come before any broadcast; Send reaches one
// member alone, in order with the broadcasts.
func TestBroadcastAddFirstAndSend(t *testing.T) {
	rt := mustRuntime(t)
	b := NewBroadcaster(rt.Handle(), nil)
	welcome := prepared(t, TextMessage, []byte("welcome"), 0)
	var mu sync.Mutex
	var server []*Conn
	ts := startEchoHook(t, rt, &Upgrader{}, func(c *Conn) {
		mu.Lock()
		server = append(server, c)
		mu.Unlock()
		b.Add(c, welcome)
	})
	c0 := dialTest(t, ts, nil)
	for b.Len() < 1 {
		time.Sleep(time.Millisecond)
	}
	b.Broadcast(prepared(t, TextMessage, []byte("one"), 0))
	c1 := dialTest(t, ts, nil)
	for b.Len() < 2 {
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	first := server[0]
	mu.Unlock()
	if !b.Send(first, prepared(t, TextMessage, []byte("direct"), 0)) {
		t.Fatal("Send refused")
	}
	b.Broadcast(prepared(t, TextMessage, []byte("two"), 0))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i, want := range [][]string{{"welcome", "one", "direct", "two"}, {"welcome", "two"}} {
		c := []*Conn{c0, c1}[i]
		for _, w := range want {
			if _, p, err := c.Read(ctx); err != nil || string(p) != w {
				t.Fatalf("client %d read %q, %v; want %q", i, p, err, w)
			}
		}
	}
	if b.Send(&Conn{}, welcome) {
		t.Fatal("Send to a connection outside the set")
	}
	_ = c0.CloseNow()
	_ = c1.CloseNow()
}

// Once its sender has written what was queued, a member holds no queue:
// an idle room costs its members' 24-byte records and their entries in
// the set, whatever was broadcast before.
func TestBroadcastIdleMemberHoldsNoQueue(t *testing.T) {
	h := startHub(t, &Upgrader{}, 0)
	const n = 3
	var clients []*Conn
	for range n {
		clients = append(clients, dialTest(t, h.testServer, nil))
	}
	h.waitMembers(t, n)
	msg := []byte("to everyone")
	pm := prepared(t, TextMessage, msg, 0)
	for range 5 {
		h.b.Broadcast(pm)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i, c := range clients {
		for j := range 5 {
			if _, p, err := c.Read(ctx); err != nil || !bytes.Equal(p, msg) {
				t.Fatalf("client %d message %d: %q, %v", i, j, p, err)
			}
		}
	}
	busy := func() (k int) {
		h.b.mu.Lock()
		defer h.b.mu.Unlock()
		for _, m := range h.b.members {
			m.mu.Lock()
			if m.q != nil {
				k++
			}
			m.mu.Unlock()
		}
		return k
	}
	for start := time.Now(); busy() > 0; time.Sleep(time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%d members still hold a queue after every message was read", busy())
		}
	}
	for _, c := range clients {
		_ = c.CloseNow()
	}
}

// A member's queue against a slice: pushes and pops in random order,
// across the compaction of a full queue, keep the messages in order, and
// a recycled queue comes back empty.
func TestMemberQueueModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	msgs := make([]*PreparedMessage, 64)
	for i := range msgs {
		msgs[i] = &PreparedMessage{}
	}
	rounds := 20000
	if testing.Short() {
		rounds = 2000
	}
	q := queues.Get().(*memberQueue)
	var model []*PreparedMessage
	for i := range rounds {
		if rng.IntN(3) > 0 && q.len() < 40 {
			pm := msgs[i%len(msgs)]
			q.push(pm)
			model = append(model, pm)
		} else if q.len() > 0 {
			if got := q.msgs[q.head]; got != model[0] {
				t.Fatalf("round %d: popped the wrong message", i)
			}
			q.msgs[q.head] = nil
			q.head++
			model = model[1:]
		}
		if q.len() != len(model) {
			t.Fatalf("round %d: %d messages, want %d", i, q.len(), len(model))
		}
		for j, pm := range q.msgs[:q.head] {
			if pm != nil {
				t.Fatalf("round %d: slot %d before the head still holds a message", i, j)
			}
		}
	}
	q.recycle()
	if r := queues.Get().(*memberQueue); r.len() != 0 || r.head != 0 {
		t.Fatalf("a recycled queue holds %d messages from %d", r.len(), r.head)
	}
}
