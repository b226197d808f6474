package websocket

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// BenchmarkEcho: round trips of a message between our client and the
// echo server, on the runtime's TCP streams (the server's reader waits
// between messages with a pooled read).
func BenchmarkEcho(b *testing.B) {
	for _, size := range []int{16, 4096} {
		b.Run(itoa(size), func(b *testing.B) {
			ts := startEcho(b, nil)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, _, err := DialContext(ctx, ts.rt.Handle(), ts.url("/ws"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.CloseNow()
			p := make([]byte, size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := c.Write(ctx, BinaryMessage, p); err != nil {
					b.Fatal(err)
				}
				if _, _, err := c.Read(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			_ = c.CloseContext(ctx, StatusNormalClosure, "")
		})
	}
}

// BenchmarkBroadcast writes one 1 KiB text message to N server
// connections, each op a new message: "prepared" encodes it once
// (NewPreparedMessage, WritePreparedMessage: with permessage-deflate one
// compression for all), "perconn" writes it with WriteMessage to each
// (one encoding, and one compression, per connection). Each write is a
// task; the op ends when every write has completed. The clients are raw
// TCP connections in this process that read and discard.
func BenchmarkBroadcast(b *testing.B) {
	msg := []byte(strings.Repeat(`{"user":"someone","text":"hello, everyone in the room"} `, 19))[:1024]
	for _, zip := range []bool{false, true} {
		for _, n := range []int{100, 1000} {
			for _, mode := range []string{"prepared", "perconn"} {
				name := "plain"
				if zip {
					name = "deflate"
				}
				b.Run(fmt.Sprintf("%s/conns=%d/%s", name, n, mode), func(b *testing.B) {
					up, ext := &Upgrader{}, ""
					if zip {
						up.Compression = &CompressionOptions{}
						ext = "Sec-WebSocket-Extensions: permessage-deflate\r\n"
					}
					h := startHub(b, up, 0)
					for range n {
						rc, resp := dialRaw(b, h.testServer, goodHeaders+ext)
						if resp.StatusCode != http.StatusSwitchingProtocols {
							b.Fatalf("status %d", resp.StatusCode)
						}
						_ = rc.nc.SetDeadline(time.Time{})
						go func() { _, _ = io.Copy(io.Discard, rc.br) }()
					}
					h.waitMembers(b, n)
					h.mu.Lock()
					conns := h.conns
					h.mu.Unlock()
					hd := h.rt.Handle()
					var wg sync.WaitGroup
					b.ReportAllocs()
					b.ResetTimer()
					for range b.N {
						var pm *PreparedMessage
						if mode == "prepared" {
							pm, _ = NewPreparedMessage(TextMessage, msg, nil)
						}
						wg.Add(len(conns))
						for _, c := range conns {
							blitz.SpawnValueDetachedOn[struct{}](hd, benchWrite{c: c, pm: pm, data: msg, wg: &wg})
						}
						wg.Wait()
					}
					b.StopTimer()
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/conn")
				})
			}
		}
	}
}

// benchWrite is the task of one write of BenchmarkBroadcast.
type benchWrite struct {
	c    *Conn
	pm   *PreparedMessage
	data []byte
	wf   *WriteFuture
	wg   *sync.WaitGroup
}

func (w *benchWrite) Poll(cx *future.Context) (struct{}, bool) {
	if w.wf == nil {
		if w.pm != nil {
			w.wf = w.c.WritePreparedMessage(w.pm)
		} else {
			w.wf = w.c.WriteMessage(TextMessage, w.data)
		}
	}
	r, ok := w.wf.Poll(cx)
	if !ok {
		return struct{}{}, false
	}
	if r.Err != nil {
		panic(r.Err)
	}
	w.wg.Done()
	return struct{}{}, true
}

func (w *benchWrite) Cancel() {
	if w.wf != nil {
		w.wf.Cancel()
	}
	w.wg.Done()
}

// BenchmarkBroadcastEncode is BenchmarkBroadcast without the I/O: the
// writes of one 1 KiB message to N server connections whose transport
// takes every write at once, polled in turn on this goroutine, so that
// the figures are the encoding's (and compression's) CPU and
// allocations, which the machine's load does not blur as much.
func BenchmarkBroadcastEncode(b *testing.B) {
	msg := []byte(strings.Repeat(`{"user":"someone","text":"hello, everyone in the room"} `, 19))[:1024]
	cx := future.NewContext(waker.Noop())
	for _, zip := range []bool{false, true} {
		for _, n := range []int{100, 1000} {
			for _, mode := range []string{"prepared", "perconn"} {
				name := "plain"
				if zip {
					name = "deflate"
				}
				b.Run(fmt.Sprintf("%s/conns=%d/%s", name, n, mode), func(b *testing.B) {
					conns := make([]*Conn, n)
					for i := range conns {
						conns[i] = newConn(&loopTransport{}, false, "", nil, nil)
						if zip {
							conns[i].setDeflate(newDeflater(deflateParams{serverNoContextTakeover: true, clientNoContextTakeover: true}, &CompressionOptions{}, false))
						}
					}
					b.ReportAllocs()
					b.ResetTimer()
					for range b.N {
						var pm *PreparedMessage
						if mode == "prepared" {
							pm, _ = NewPreparedMessage(TextMessage, msg, nil)
						}
						for _, c := range conns {
							var f *WriteFuture
							if pm != nil {
								f = c.WritePreparedMessage(pm)
							} else {
								f = c.WriteMessage(TextMessage, msg)
							}
							if r, ok := f.Poll(cx); !ok || r.Err != nil {
								b.Fatal(ok, r.Err)
							}
						}
					}
					b.StopTimer()
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/conn")
				})
			}
		}
	}
}
