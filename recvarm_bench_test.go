package blitz

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
)

// pooledEcho echoes with ReadPooled until end of stream or an error: the
// server side of BenchmarkPooledReadRoundTrip.
type pooledEcho struct {
	s    *TCPStream
	rp   *ReadPooledFuture
	wr   *WriteAllFuture
	data PooledBuf
}

func (e *pooledEcho) Poll(cx *future.Context) (struct{}, bool) {
	for {
		if e.wr == nil {
			if e.rp == nil {
				e.rp = e.s.ReadPooled()
			}
			r, ok := e.rp.Poll(cx)
			if !ok {
				return struct{}{}, false
			}
			e.rp = nil
			if r.Err != nil {
				_ = e.s.Close()
				return struct{}{}, true
			}
			e.data = r.Value
			e.wr = e.s.WriteAll(e.data.Bytes())
		}
		r, ok := e.wr.Poll(cx)
		if !ok {
			return struct{}{}, false
		}
		e.wr = nil
		e.data.Release()
		if r.Err != nil {
			_ = e.s.Close()
			return struct{}{}, true
		}
	}
}

// BenchmarkPooledReadRoundTrip: 64-byte round trips from a net.Conn client
// to a task that reads with ReadPooled and writes back, with the read armed
// in the backend ("armed") and through an op in the read slot ("slot", the
// fallback). ns/op is one round trip.
func BenchmarkPooledReadRoundTrip(b *testing.B) {
	for _, bk := range []string{BackendURing, BackendEpoll} {
		for _, armed := range []bool{true, false} {
			name := bk + "/armed"
			if !armed {
				name = bk + "/slot"
			}
			b.Run(name, func(b *testing.B) {
				armDisabled.Store(!armed)
				defer armDisabled.Store(false)
				rt, err := New(Config{Backend: bk})
				if err != nil {
					b.Skip(err)
				}
				defer func() { _ = rt.Shutdown(context.Background()) }()
				l, err := ListenTCP(rt.Handle(), "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				c, err := net.Dial("tcp", l.AddrPort().String())
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				r, err := BlockOn(ctx, rt.Handle(), l.Accept())
				if err != nil || r.Err != nil {
					b.Fatal(err, r.Err)
				}
				h := SpawnOn(rt.Handle(), future.Future[struct{}](&pooledEcho{s: r.Value}))
				msg, back := make([]byte, 64), make([]byte, 64)
				b.ResetTimer()
				for range b.N {
					if _, err := c.Write(msg); err != nil {
						b.Fatal(err)
					}
					if _, err := io.ReadFull(c, back); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				_ = c.Close()
				_, _ = h.Wait(ctx)
			})
		}
	}
}
