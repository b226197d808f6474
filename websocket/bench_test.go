package websocket

import (
	"context"
	"testing"
	"time"
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
