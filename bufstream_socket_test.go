package blitz_test

import (
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// TestBufReaderOverSocketMatchesBufio: over a runtime socket, where a
// BufReader waits with pooled reads and serves what does not fit its
// buffer from the pool's buffer, random text written in random chunks,
// read with random buffer and pool-buffer sizes, gives bufio.Scanner's
// lines.
func TestBufReaderOverSocketMatchesBufio(t *testing.T) {
	rounds := 40
	if testing.Short() {
		rounds = 12
	}
	for seed := range uint64(rounds) {
		rng := rand.New(rand.NewPCG(seed, 7))
		poolBuf := []int{64, 512, 4096, 16384}[rng.IntN(4)]
		rt := newRuntime(t, blitz.Config{Workers: 1, ReadBufferSize: poolBuf})
		s, peer := tcpPair(t, rt)
		text := randomText(rng, 20+rng.IntN(200))
		want := scanLines(text)
		wrng := rand.New(rand.NewPCG(seed, 8)) // the writer's own
		go func() {
			data := []byte(text)
			for len(data) > 0 {
				n := min(len(data), 1+wrng.IntN(6000))
				if _, err := peer.Write(data[:n]); err != nil {
					return
				}
				data = data[n:]
				if wrng.IntN(4) == 0 {
					time.Sleep(time.Millisecond)
				}
			}
			peer.Close()
		}()
		size := []int{0, 16, 100, 4096, 10000}[rng.IntN(5)]
		br := blitz.NewBufReader(s, size)
		br.SetMaxLine(0)
		var got []string
		for {
			line, err := await(t, rt, future.Future[future.Result[string]](br.ReadLine())).Get()
			if err == io.EOF {
				require.Empty(t, line)
				break
			}
			require.NoError(t, err, "seed %d", seed)
			got = append(got, line)
		}
		require.Equal(t, want, got, "seed %d (pool buffers %d, reader buffer %d)", seed, poolBuf, size)
	}
}

// TestBufReaderIdleOnASocketHoldsNoBuffer: a BufReader that read a line
// and waits for the next on a quiet socket holds no buffer: the reader,
// its wait and the task cost the heap far less than a 4 KiB buffer.
func TestBufReaderIdleOnASocketHoldsNoBuffer(t *testing.T) {
	const n = 64
	rt := newRuntime(t, blitz.Config{Workers: 1})
	if err := rt.PrepareReadPool(); err != nil {
		t.Skip("no read pool here:", err)
	}
	h := rt.Handle()
	streams := make([]*blitz.TCPStream, n)
	for i := range n {
		s, peer := tcpPair(t, rt)
		streams[i] = s
		if _, err := peer.Write([]byte("first\n")); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = peer.Write([]byte("x")) })
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	readers := make([]*blitz.BufReader, n)
	waits := make([]blitz.JoinHandle[future.Result[string]], n)
	for i := range n {
		readers[i] = blitz.NewBufReader(streams[i], 0)
		if line, err := await(t, rt, future.Future[future.Result[string]](readers[i].ReadLine())).Get(); err != nil || line != "first" {
			t.Fatalf("reader %d: %q, %v", i, line, err)
		}
		waits[i] = blitz.SpawnOn(h, future.Future[future.Result[string]](readers[i].ReadLine()))
	}
	time.Sleep(50 * time.Millisecond)
	runtime.GC()
	runtime.ReadMemStats(&after)
	perReader := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("heap per idle reader: %d bytes", perReader)
	if perReader > 3<<10 {
		t.Fatalf("an idle BufReader holds %d bytes; want no 4 KiB buffer", perReader)
	}
	for _, w := range waits {
		w.Cancel()
	}
}
