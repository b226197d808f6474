package blitz_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// randomBytes returns n reproducible random bytes.
func randomBytes(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// TestStreamsCopyBetweenTCPAndFiles: Copy moves a megabyte from a file to
// a TCP stream and from the stream to another file, whole and in order.
func TestStreamsCopyBetweenTCPAndFiles(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		size := 1 << 20
		if testing.Short() {
			size = 256 << 10
		}
		data := randomBytes(size, 1)
		dir := fsTempDir(t)
		src := filepath.Join(dir, "src")
		require.NoError(t, os.WriteFile(src, data, 0o600))

		// File to stream; the peer reads it all.
		s, peer := tcpPair(t, rt)
		received := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(peer)
			received <- b
		}()
		f, err := awaitOpen(t, rt, blitz.Open(src))
		require.NoError(t, err)
		n, err := awaitR[int64](t, rt, blitz.Copy(s, f))
		require.NoError(t, err)
		assert.Equal(t, int64(size), n)
		require.NoError(t, s.CloseWrite())
		assert.Equal(t, data, <-received)
		_, err = awaitClose(t, rt, f.Close())
		require.NoError(t, err)

		// Stream to file; the peer writes and closes.
		s2, peer2 := tcpPair(t, rt)
		go func() {
			_, _ = peer2.Write(data)
			_ = peer2.Close()
		}()
		dstName := filepath.Join(dir, "dst")
		g, err := awaitOpen(t, rt, blitz.Create(dstName))
		require.NoError(t, err)
		n, err = awaitR[int64](t, rt, blitz.Copy(g, s2))
		require.NoError(t, err)
		assert.Equal(t, int64(size), n)
		_, err = awaitClose(t, rt, g.Close())
		require.NoError(t, err)
		got, err := os.ReadFile(dstName)
		require.NoError(t, err)
		assert.Equal(t, data, got)
	})
}

// TestStreamsBufferedLinesOverTCP: a BufReader reads the peer's lines off
// a TCP stream and a BufWriter answers through the write half of a Split.
func TestStreamsBufferedLinesOverTCP(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, peer := tcpPair(t, rt)
		rd, wr := s.Split()
		go func() {
			for i := range 100 {
				fmt.Fprintf(peer, "line %d\r\n", i)
			}
			_ = peer.(interface{ CloseWrite() error }).CloseWrite()
		}()
		br := blitz.NewBufReader(rd, 64)
		bw := blitz.NewBufWriter(wr, 64)
		for i := 0; ; i++ {
			line, err := awaitR[string](t, rt, br.ReadLine())
			if err == io.EOF {
				assert.Equal(t, 100, i)
				break
			}
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("line %d", i), line)
			_, err = awaitR[int](t, rt, bw.WriteString(strings.ToUpper(line)+"\n"))
			require.NoError(t, err)
		}
		_, err := awaitR[struct{}](t, rt, bw.Flush())
		require.NoError(t, err)
		require.NoError(t, wr.Close())
		answer, err := io.ReadAll(peer)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSuffix(string(answer), "\n"), "\n")
		require.Len(t, lines, 100)
		assert.Equal(t, "LINE 99", lines[99])
	})
}

// TestStreamsIOAdaptersOverTCP: goroutine code reads a TCP stream with
// bufio.Scanner through AsIOReader and writes it with fmt through
// AsIOWriter.
func TestStreamsIOAdaptersOverTCP(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, peer := tcpPair(t, rt)
		w := blitz.AsIOWriter(context.Background(), blitz.NewBufWriter(s, 0))
		for i := range 50 {
			_, err := fmt.Fprintf(w, "n=%d\n", i)
			require.NoError(t, err)
		}
		require.NoError(t, w.Flush())
		sc := bufio.NewScanner(peer)
		for i := range 50 {
			require.True(t, sc.Scan())
			require.Equal(t, fmt.Sprintf("n=%d", i), sc.Text())
		}

		go func() { _, _ = io.WriteString(peer, "alpha\nbeta\n"); _ = peer.Close() }()
		sc = bufio.NewScanner(blitz.AsIOReader(context.Background(), s))
		var got []string
		for sc.Scan() {
			got = append(got, sc.Text())
		}
		require.NoError(t, sc.Err())
		assert.Equal(t, []string{"alpha", "beta"}, got)
	})
}

// TestStreamsIOReaderContextCancelLosesNothing: a Read cancelled by its
// context returns the context's error, and the data that arrives later is
// read by the next Read.
func TestStreamsIOReaderContextCancelLosesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		s, peer := tcpPair(t, rt)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		buf := make([]byte, 16)
		_, err := blitz.AsIOReader(ctx, s).Read(buf)
		require.ErrorIs(t, err, context.DeadlineExceeded)

		_, err = peer.Write([]byte("later"))
		require.NoError(t, err)
		n, err := blitz.AsIOReader(context.Background(), s).Read(buf)
		require.NoError(t, err)
		assert.Equal(t, "later", string(buf[:n]))
	})
}

// TestStreamsFileFromGoroutine: a File read through AsIOReader from a
// goroutine, outside any task: on the ring, or on the pool of the runtime
// that opened the file.
func TestStreamsFileFromGoroutine(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		data := randomBytes(100<<10, 2)
		name := filepath.Join(fsTempDir(t), "f")
		require.NoError(t, os.WriteFile(name, data, 0o600))
		f, err := awaitOpen(t, rt, blitz.Open(name))
		require.NoError(t, err)
		got, err := io.ReadAll(blitz.AsIOReader(context.Background(), f))
		require.NoError(t, err)
		assert.Equal(t, data, got)

		out := filepath.Join(fsTempDir(t), "g")
		g, err := awaitOpen(t, rt, blitz.Create(out))
		require.NoError(t, err)
		n, err := io.Copy(blitz.AsIOWriter(context.Background(), g), bytes.NewReader(data))
		require.NoError(t, err)
		assert.Equal(t, int64(len(data)), n)
		for _, c := range []*blitz.File{f, g} {
			_, err = awaitClose(t, rt, c.Close())
			require.NoError(t, err)
		}
		written, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Equal(t, data, written)
	})
}

// TestStreamsFromIOReaderAndWriter: an io.Reader and an io.Writer adapted
// for tasks, their calls made on the blocking pool, with Copy between
// them; a read cancelled midway loses nothing.
func TestStreamsFromIOReaderAndWriter(t *testing.T) {
	rt := newRuntime(t, blitz.Config{})
	data := randomBytes(300<<10, 3)
	var out bytes.Buffer
	n, err := awaitR[int64](t, rt, blitz.Copy(blitz.FromIOWriter(&out), blitz.FromIOReader(bytes.NewReader(data))))
	require.NoError(t, err)
	assert.Equal(t, int64(len(data)), n)
	assert.Equal(t, data, out.Bytes())

	// A read from a pipe with nothing in it yet, cancelled, then the data.
	pr, pw := io.Pipe()
	ar := blitz.FromIOReader(pr)
	buf := make([]byte, 8)
	sel := future.Race[future.Result[int]](blitz.Read(ar, buf), future.Map(blitz.Sleep(20*time.Millisecond), func(struct{}) future.Result[int] { return future.Result[int]{Value: -1} }))
	r := await(t, rt, sel)
	require.Equal(t, -1, r.Value, "the read had nothing to read")
	go func() { _, _ = pw.Write([]byte("kept")); _ = pw.Close() }()
	all, err := awaitR[[]byte](t, rt, blitz.ReadToEnd(ar))
	require.NoError(t, err)
	assert.Equal(t, "kept", string(all))
}

// TestStreamsChildPipes: a child's pipes as streams: the test writes text
// into cat's stdin through AsIOWriter from a goroutine while a task reads
// cat's stdout line by line with a BufReader.
func TestStreamsChildPipes(t *testing.T) {
	rt := newRuntime(t, blitz.Config{})
	c := spawnChild(t, rt, childCmd("cat").Stdin(blitz.Piped).Stdout(blitz.Piped))
	lines := 2000
	go func() {
		w := blitz.AsIOWriter(context.Background(), blitz.NewBufWriter(c.Stdin(), 0))
		for i := range lines {
			if _, err := fmt.Fprintf(w, "row %d\n", i); err != nil {
				t.Error(err)
				return
			}
		}
		if err := w.Flush(); err != nil {
			t.Error(err)
		}
		_ = c.Stdin().Close()
	}()
	br := blitz.NewBufReader(c.Stdout(), 0)
	for i := 0; ; i++ {
		line, err := awaitR[string](t, rt, br.ReadLine())
		if err == io.EOF {
			require.Equal(t, lines, i)
			break
		}
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("row %d", i), line)
	}
}
