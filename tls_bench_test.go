package blitz_test

import (
	"crypto/tls"
	"io"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// discardWriter is an AsyncWriter that drops what it is given.
type discardWriter struct{}

func (discardWriter) PollWrite(_ *future.Context, buf []byte) (future.Result[int], bool) {
	return future.Ok(len(buf)), true
}
func (discardWriter) CancelWrite() {}

// BenchmarkTLSBulk sends 1 MiB per iteration over one TLS connection to a
// server that discards it: blitz has both ends as tasks (TLSStream), gonet
// has crypto/tls over Go's net on goroutines. Same run, side by side;
// blitz-readbuf16k is blitz with pooled read buffers of a whole record.
func BenchmarkTLSBulk(b *testing.B) {
	pki, _ := testCerts(b)
	chunk := testPayload(1 << 20)
	runBlitz := func(b *testing.B, cfg blitz.Config) {
		rt := newRuntime(b, cfg)
		l, err := blitz.ListenTLS(rt.Handle(), "127.0.0.1:0", pki.serverConfig())
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		server := blitz.SpawnOn(rt.Handle(), future.Then(future.Future[future.Result[*blitz.TLSStream]](l.Accept()), func(r future.Result[*blitz.TLSStream]) future.Future[error] {
			if r.Err != nil {
				return future.Ready(r.Err)
			}
			return future.Map(tlsErrOf[int64](blitz.Copy(discardWriter{}, r.Value)), func(err error) error { _ = r.Value.Close(); return err })
		}))
		tcp, err := blitz.BlockOn(testCtx(b), rt.Handle(), future.Future[future.Result[*blitz.TCPStream]](blitz.DialTCP(rt.Handle(), l.Addr().String(), 5*time.Second)))
		if err != nil || tcp.Err != nil {
			b.Fatal(err, tcp.Err)
		}
		s := blitz.TLSClient(tcp.Value, pki.clientConfig())
		defer s.Close()
		b.SetBytes(int64(len(chunk)))
		b.ResetTimer()
		n := b.N
		r, err := blitz.BlockOn(testCtx(b), rt.Handle(), tlsChain(
			func() future.Future[error] { return tlsErrOf[struct{}](s.Handshake()) },
			func() future.Future[error] { return tlsWriteN(s, chunk, n) },
			func() future.Future[error] { return tlsErrOf[struct{}](s.CloseWrite()) },
		))
		if err != nil || r != nil {
			b.Fatal(err, r)
		}
		if herr, err := server.Wait(testCtx(b)); err != nil || herr != nil {
			b.Fatal(err, herr)
		}
	}
	b.Run("blitz", func(b *testing.B) { runBlitz(b, blitz.Config{Workers: 2}) })
	// Pooled reads of a whole TLS record each (the default pool buffer is
	// 4 KiB: a 16 KiB record takes four reads).
	b.Run("blitz-readbuf16k", func(b *testing.B) { runBlitz(b, blitz.Config{Workers: 2, ReadBufferSize: 16<<10 + 512}) })
	b.Run("gonet", func(b *testing.B) {
		ln, err := tls.Listen("tcp", "127.0.0.1:0", pki.serverConfig())
		if err != nil {
			b.Fatal(err)
		}
		defer ln.Close()
		done := make(chan error, 1)
		go func() {
			c, err := ln.Accept()
			if err == nil {
				_, err = io.Copy(io.Discard, c)
				c.Close()
			}
			done <- err
		}()
		c, err := tls.Dial("tcp", ln.Addr().String(), pki.clientConfig())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		b.SetBytes(int64(len(chunk)))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := c.Write(chunk); err != nil {
				b.Fatal(err)
			}
		}
		_ = c.CloseWrite()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	})
}

// tlsWriteN writes chunk n times to s.
func tlsWriteN(s *blitz.TLSStream, chunk []byte, n int) future.Future[error] {
	var w *blitz.StreamFuture[int]
	return future.PollFn(func(cx *future.Context) (error, bool) {
		for n > 0 {
			if w == nil {
				w = s.WriteAll(chunk)
			}
			r, ok := w.Poll(cx)
			if !ok {
				return nil, false
			}
			w = nil
			if r.Err != nil {
				return r.Err, true
			}
			n--
		}
		return nil, true
	})
}
