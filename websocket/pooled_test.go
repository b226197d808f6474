package websocket

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
)

// An idle connection waits with a pooled read of the runtime and holds no
// read buffer (see fillPooled): messages that arrive in pieces, with
// pauses between the pieces and between messages, pings among them,
// messages larger than the read buffer and than the runtime's pooled
// buffers, on every backend this platform has, and with the runtime's
// pooled buffers larger than the connection's read buffer (the copy then
// takes a buffer of its own).
func TestPooledReads(t *testing.T) {
	for _, tc := range []struct {
		backend        string
		poolSize, rbuf int
	}{
		{blitz.BackendURing, 0, 0},
		{blitz.BackendEpoll, 0, 0},
		{blitz.BackendKqueue, 0, 0},
		{blitz.BackendPoll, 0, 0},
		{blitz.BackendIOCP, 0, 0},
		{blitz.BackendAuto, 64, 0},        // pooled buffers of 64 bytes
		{blitz.BackendAuto, 65536, 64},    // pooled data over the read buffer
		{blitz.BackendAuto, 0, 100 << 10}, // a read buffer over the pooled one
	} {
		name := tc.backend
		if name == "" {
			name = "auto"
		}
		t.Run(name+"/"+itoa(tc.poolSize)+"/"+itoa(tc.rbuf), func(t *testing.T) {
			rt, err := blitz.New(blitz.Config{Workers: 2, Backend: tc.backend, ReadBufferSize: tc.poolSize})
			if errors.Is(err, blitz.ErrBackend) {
				t.Skipf("no %s backend here: %v", tc.backend, err)
			}
			if err != nil {
				t.Fatal(err)
			}
			ts := startEchoOn(t, rt, &Upgrader{Options: Options{ReadBufferSize: tc.rbuf}, Compression: &CompressionOptions{}})
			rc := openRaw(t, ts)
			for i, n := range []int{0, 5, 200, 4095, 4096, 5000, 70000} {
				p := bytes.Repeat([]byte{'a' + byte(i)}, n)
				fr := frame(0x82, p)
				if i%2 == 0 {
					rc.send(frame(0x89, []byte("ping")))
				}
				// In three pieces, the reader waiting after each.
				k := len(fr) / 3
				rc.send(fr[:1])
				time.Sleep(2 * time.Millisecond)
				rc.send(fr[1:k])
				time.Sleep(2 * time.Millisecond)
				rc.send(fr[k:])
				if i%2 == 0 {
					if f, ok := rc.next(); !ok || f.op != opPong || f.payload != "ping" {
						t.Fatalf("%d bytes: got %#x %q, want the pong", n, f.op, f.payload)
					}
				}
				f, ok := rc.next()
				if !ok || f.op != opBinary || f.payload != string(p) {
					t.Fatalf("%d bytes: echo of %d bytes, op %#x", n, len(f.payload), f.op)
				}
				time.Sleep(2 * time.Millisecond) // idle between messages
			}
			rc.send(closeFrame(1000, "bye"))
			if f, ok := rc.next(); !ok || closeCodeOf(f) != 1000 {
				t.Fatalf("close: %+v", f)
			}
			rc.expectEnd()
		})
	}
}
