package websocket

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
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
// an idle room costs its members' entries in the set, whatever was
// broadcast before.
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
		for _, q := range h.b.members {
			if q != nil {
				k++
			}
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

// stressPeer is the far end of a connection of TestBroadcastStress: it
// parses the frames written to it, each a binary message of 8 bytes, and
// records the sequence number each message carries. Its writes may take
// only part of what they are given (partial), and, if failing, break for
// good at random, as a reset connection does.
type stressPeer struct {
	failing, partial bool

	mu             sync.Mutex
	buf            []byte   // the bytes of a frame not yet whole
	got            []uint64 // the messages received, in order
	closed, broken bool
	bad            error // a frame that is not one of the test's
}

var errStressBroken = errors.New("stress: connection reset")

func (p *stressPeer) write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.broken {
		return 0, net.ErrClosed
	}
	if p.failing && rand.IntN(64) == 0 {
		p.broken = true
		return 0, errStressBroken
	}
	n := len(b)
	if p.partial && n > 1 && rand.IntN(4) == 0 {
		n = 1 + rand.IntN(n-1)
	}
	p.buf = append(p.buf, b[:n]...)
	for len(p.buf) >= 2 && p.bad == nil {
		if p.buf[0] != 0x82 || p.buf[1] != 8 {
			p.bad = fmt.Errorf("frame header %#x %#x", p.buf[0], p.buf[1])
			break
		}
		if len(p.buf) < 10 {
			break
		}
		p.got = append(p.got, binary.BigEndian.Uint64(p.buf[2:10]))
		p.buf = p.buf[10:]
	}
	return n, nil
}

func (p *stressPeer) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
}

// received returns the number of messages received so far.
func (p *stressPeer) received() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.got)
}

// stressTransport is a stressPeer as the transport of a connection on the
// runtime (its sender is a task): a third of its writes yield first.
type stressTransport struct{ *stressPeer }

func (stressTransport) PollRead(_ *future.Context, _ []byte) (future.Result[int], bool) {
	return future.Result[int]{Err: io.EOF}, true
}
func (stressTransport) CancelRead() {}
func (t stressTransport) PollWrite(cx *future.Context, b []byte) (future.Result[int], bool) {
	if rand.IntN(3) == 0 {
		cx.Yield()
		return future.Result[int]{}, false
	}
	n, err := t.write(b)
	return future.Result[int]{Value: n, Err: err}, true
}
func (stressTransport) CancelWrite()   {}
func (t stressTransport) Close() error { t.close(); return nil }

// stressNetConn is a stressPeer as a net.Conn (its sender is a
// goroutine): a third of its writes yield the goroutine first.
type stressNetConn struct {
	net.Conn // the methods the test does not need
	p        *stressPeer
}

func (stressNetConn) Read([]byte) (int, error) { return 0, io.EOF }
func (c stressNetConn) Write(b []byte) (int, error) {
	if rand.IntN(3) == 0 {
		runtime.Gosched()
	}
	return c.p.write(b)
}
func (c stressNetConn) Close() error { c.p.close(); return nil }

// stressConn is the test's record of a connection of
// TestBroadcastStress, kept under its lock.
type stressConn struct {
	p *stressPeer
	// member says the connection is in the set, as far as the test knows:
	// exactly, until a failed write takes it out (its peer is then broken
	// for good, and receives nothing more).
	member bool
	// epoch counts the times it joined the set; queued maps the sequence
	// number of every message that may have been queued for it to the
	// epoch it was queued in, and sure lists those that were (Send said
	// so, or Broadcast did not drop it).
	epoch  int
	queued map[uint64]int
	sure   []uint64
	// left maps an epoch that ended to the number of messages the peer
	// had received when it did (after the Remove or the drop).
	left map[int]int
	// dead says a Broadcast dropped it as slow, and closed it.
	dead bool
}

// A randomized stress of a Broadcaster: goroutines Add (with first
// messages), Remove, Send to and Broadcast to a few connections at once,
// with a short queue (so that members are dropped as slow), over writes
// that take several polls, and in a variant fail. Each connection must
// receive, in order, a subsequence of the messages queued for it in each
// of its memberships, all of them if it is a member at the end; after it
// left the set at most one more (the write in flight) of that
// membership; and when every connection is removed, no sender (task or
// goroutine) may remain, nor any entry in the set.
func TestBroadcastStress(t *testing.T) {
	for _, tc := range []struct {
		name             string
		overNet, failing bool
	}{
		{"tasks", false, false},
		{"tasks_failing", false, true},
		{"goroutines", true, false},
		{"goroutines_failing", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) { stressBroadcast(t, tc.overNet, tc.failing) })
	}
}

func stressBroadcast(t *testing.T, overNet, failing bool) {
	const slots, workers, queueLen = 6, 4, 4
	ops := 20000
	if testing.Short() {
		ops = 2000
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	leaks := goleak.IgnoreCurrent()
	rt, err := blitz.New(blitz.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	shutdown := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}
	down := false
	defer func() {
		if !down {
			shutdown()
		}
	}()

	var (
		mu     sync.Mutex // the test's: each call with the record of it
		conns  = map[*Conn]*stressConn{}
		slot   [slots]*Conn
		seq    uint64
		slow   []*Conn      // dropped as slow by the Broadcast in progress
		failed atomic.Int64 // dropped after a failed write
		drops  int
	)
	b := NewBroadcaster(rt.Handle(), &BroadcastOptions{QueueLen: queueLen, OnDrop: func(c *Conn, err error) {
		if errors.Is(err, ErrSlowConsumer) {
			slow = append(slow, c) // on the Broadcast's goroutine, under mu
			return
		}
		failed.Add(1)
	}})
	fresh := func() *Conn {
		p := &stressPeer{failing: failing, partial: !overNet}
		var c *Conn
		if overNet {
			c = NewNetConn(stressNetConn{p: p}, false, "", nil, nil)
		} else {
			c = newConn(stressTransport{p}, false, "", nil, nil)
		}
		conns[c] = &stressConn{p: p, queued: map[uint64]int{}, left: map[int]int{}}
		return c
	}
	for i := range slot {
		slot[i] = fresh()
	}
	message := func() *PreparedMessage {
		seq++
		var p [8]byte
		binary.BigEndian.PutUint64(p[:], seq)
		return prepared(t, BinaryMessage, p[:], 0)
	}
	// check verifies the set against the test's record: every busy
	// member's queue is its own, not gone, within the bound. Called under
	// mu.
	check := func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for c, q := range b.members {
			if r := conns[c]; r == nil || !failing && !r.member {
				t.Errorf("a connection in the set that the test did not add")
			}
			if q == nil {
				continue
			}
			q.mu.Lock()
			if q.c != c || q.gone || q.len() > queueLen {
				t.Errorf("a member's queue: its connection %v, gone %v, %d messages", q.c == c, q.gone, q.len())
			}
			q.mu.Unlock()
		}
		if !failing {
			n := 0
			for _, r := range conns {
				if r.member {
					n++
				}
			}
			if n != len(b.members) {
				t.Errorf("%d members, the test counts %d", len(b.members), n)
			}
		}
	}
	op := func(rng *rand.Rand) {
		mu.Lock()
		defer mu.Unlock()
		i := rng.IntN(slots)
		c := slot[i]
		r := conns[c]
		r.p.mu.Lock()
		broken := r.p.broken
		r.p.mu.Unlock()
		if broken {
			// Reset for good: a new connection takes its place (the old
			// one stays in the set until its sender fails, or the end).
			c = fresh()
			slot[i], r = c, conns[c]
		}
		switch k := rng.IntN(10); {
		case k < 2:
			if !r.member {
				r.member = true
				r.epoch++
			}
			first := make([]*PreparedMessage, rng.IntN(3))
			for j := range first {
				first[j] = message()
				r.queued[seq] = r.epoch // unless the queue is full
			}
			b.Add(c, first...)
		case k < 4:
			if in := b.Remove(c); in != r.member && !failing || in && !r.member {
				t.Errorf("Remove said %v, the test thought %v", in, r.member)
			}
			if r.member {
				r.member = false
				r.left[r.epoch] = r.p.received()
			}
		case k < 6:
			pm := message()
			ok := b.Send(c, pm)
			switch {
			case ok && !r.member:
				t.Errorf("Send queued for a connection outside the set")
			case ok:
				r.queued[seq] = r.epoch
				r.sure = append(r.sure, seq)
			}
		default:
			pm := message()
			slow = slow[:0]
			n := b.Broadcast(pm)
			dropped := map[*Conn]bool{}
			for _, c := range slow {
				dropped[c] = true
			}
			want := 0
			for c, r := range conns {
				if !r.member {
					continue
				}
				if dropped[c] {
					r.member, r.dead = false, true
					r.left[r.epoch] = r.p.received()
					continue
				}
				want++
				r.queued[seq] = r.epoch
				r.sure = append(r.sure, seq)
			}
			if n != want && !failing || n > want {
				t.Errorf("Broadcast queued for %d connections, the test counts %d", n, want)
			}
			drops += len(slow)
			for j, c := range slot {
				if dropped[c] {
					slot[j] = fresh() // closed: a new connection takes its place
				}
			}
		}
		if rng.IntN(50) == 0 {
			check()
		}
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for range ops / workers {
				op(rng)
				if rng.IntN(4) == 0 {
					runtime.Gosched() // let the senders catch up, now and then
				}
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	check()
	received := 0
	for _, r := range conns {
		received += r.p.received()
	}
	t.Logf("%d messages queued, %d received by %d connections; %d dropped as slow, %d after a failed write", seq, received, len(conns), drops, failed.Load())
	if !failing && failed.Load() != 0 {
		t.Errorf("%d members dropped after a failed write, without failures", failed.Load())
	}

	// Once the senders are idle, a member received everything sure.
	busy := func() int {
		b.mu.Lock()
		defer b.mu.Unlock()
		k := 0
		for _, q := range b.members {
			if q != nil {
				k++
			}
		}
		return k
	}
	for start := time.Now(); busy() > 0; time.Sleep(time.Millisecond) {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("%d members still busy", busy())
		}
	}
	for _, r := range conns {
		if !r.member || r.p.broken {
			continue
		}
		r.p.mu.Lock()
		got := map[uint64]bool{}
		for _, s := range r.p.got {
			got[s] = true
		}
		r.p.mu.Unlock()
		for _, s := range r.sure {
			if r.queued[s] == r.epoch && !got[s] {
				t.Fatalf("message %d queued for a member that is idle, never received", s)
			}
		}
	}

	// Everyone leaves: the senders end, the set is empty.
	for c, r := range conns {
		in := b.Remove(c)
		if in && !r.member {
			t.Errorf("Remove found a connection the test had removed")
		}
		if r.member {
			r.member = false
			r.left[r.epoch] = r.p.received()
		}
	}
	if n := b.Len(); n != 0 {
		t.Fatalf("%d members left after every Remove", n)
	}
	if !overNet {
		for start := time.Now(); rt.Stats().Live != 0; time.Sleep(time.Millisecond) {
			if time.Since(start) > 20*time.Second {
				t.Fatalf("%d sender tasks still live", rt.Stats().Live)
			}
		}
	}
	shutdown()
	down = true
	goleak.VerifyNone(t, leaks) // the goroutine senders ended too

	// What each connection received: in each membership, messages queued
	// for it in that membership, in order, with none missing before the
	// last received of those surely queued (a queue drops messages only
	// when its member leaves: its tail); after the membership ended, one
	// at most.
	for _, r := range conns {
		r.p.mu.Lock()
		got, bad := r.p.got, r.p.bad
		r.p.mu.Unlock()
		if bad != nil {
			t.Fatal(bad)
		}
		received := map[uint64]bool{}
		for _, s := range got {
			received[s] = true
		}
		lost := map[int]uint64{}
		for _, s := range r.sure {
			e := r.queued[s]
			switch {
			case !received[s] && lost[e] == 0:
				lost[e] = s
			case received[s] && lost[e] != 0:
				t.Fatalf("message %d received, %d queued before it in the same membership lost", s, lost[e])
			}
		}
		last := map[int]uint64{}
		after := map[int]int{}
		for i, s := range got {
			e, ok := r.queued[s]
			if !ok {
				t.Fatalf("message %d received by a connection it was not queued for", s)
			}
			if s <= last[e] {
				t.Fatalf("message %d received after %d, in the same membership", s, last[e])
			}
			last[e] = s
			if n, ok := r.left[e]; ok && i >= n {
				after[e]++
				if after[e] > 1 {
					t.Fatalf("%d messages received after the membership %d ended", after[e], e)
				}
			}
		}
	}
}

// stallTransport is a transport whose writes never end: its sender waits
// in its first write until the runtime's shutdown cancels it.
type stallTransport struct{ writes *atomic.Int64 }

func (stallTransport) PollRead(_ *future.Context, _ []byte) (future.Result[int], bool) {
	return future.Result[int]{Err: io.EOF}, true
}
func (stallTransport) CancelRead() {}
func (t stallTransport) PollWrite(*future.Context, []byte) (future.Result[int], bool) {
	t.writes.Add(1)
	return future.Result[int]{}, false
}
func (stallTransport) CancelWrite() {}
func (stallTransport) Close() error { return nil }

// The runtime's shutdown cancels the senders: their members stay in the
// set, idle, their queues dropped. A push after the shutdown, whose
// sender the spawn cancels at once (on the goroutine of the push, which
// holds the Broadcaster's lock), leaves the member idle too.
func TestBroadcastShutdown(t *testing.T) {
	rt := mustRuntime(t)
	b := NewBroadcaster(rt.Handle(), nil)
	var writes atomic.Int64
	var cs []*Conn
	for range 3 {
		c := newConn(stallTransport{&writes}, false, "", nil, nil)
		cs = append(cs, c)
		b.Add(c)
	}
	pm := prepared(t, TextMessage, []byte("stuck"), 0)
	for range 2 {
		if n := b.Broadcast(pm); n != len(cs) {
			t.Fatalf("queued for %d, want %d", n, len(cs))
		}
	}
	for start := time.Now(); writes.Load() < int64(len(cs)); time.Sleep(time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("the senders did not start writing")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	idle := func(want int) {
		t.Helper()
		b.mu.Lock()
		defer b.mu.Unlock()
		if len(b.members) != want {
			t.Fatalf("%d members, want %d", len(b.members), want)
		}
		for _, q := range b.members {
			if q != nil {
				t.Fatal("a member still holds a queue after the shutdown")
			}
		}
	}
	idle(len(cs))
	after := make(chan error, 1)
	cs = append(cs, newConn(stallTransport{&writes}, false, "", nil, nil))
	go func() {
		switch {
		case b.Broadcast(pm) != len(cs)-1:
			after <- errors.New("Broadcast did not queue for every member")
		case !b.Send(cs[0], pm):
			after <- errors.New("Send refused")
		default:
			b.Add(cs[len(cs)-1], pm, pm)
			after <- nil
		}
	}()
	select {
	case err := <-after:
		if err != nil {
			t.Fatalf("after the shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a push after the shutdown is stuck (its cancelled sender waits for the Broadcaster's lock)")
	}
	idle(len(cs))
	for _, c := range cs {
		if !b.Remove(c) {
			t.Fatal("Remove did not find a member")
		}
	}
	idle(0)
}
