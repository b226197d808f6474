package blitz_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// chunkyReader is a model AsyncReader: it gives its data in chunks of
// random sizes, is pending on a random half of the polls (waking the
// poller at once), and checks the AsyncReader contract: a continued read
// passes the buffer that started it.
type chunkyReader struct {
	t        testing.TB
	data     []byte
	rng      *rand.Rand
	maxChunk int
	err      error // returned at the end instead of io.EOF when set
	// inflight is the buffer of the read in flight, nil when none.
	inflight []byte
	reads    int
}

func (c *chunkyReader) PollRead(cx *future.Context, buf []byte) (future.Result[int], bool) {
	if c.inflight != nil {
		require.True(c.t, sameBuffer(c.inflight, buf), "a continued read must pass the buffer that started it")
	} else if c.rng.IntN(2) == 0 {
		c.inflight = buf
		cx.Waker().Wake()
		return future.Result[int]{}, false
	}
	c.inflight = nil
	c.reads++
	if len(buf) == 0 {
		return future.Ok(0), true
	}
	if len(c.data) == 0 {
		if c.err != nil {
			return future.Fail[int](c.err), true
		}
		return future.Result[int]{Err: io.EOF}, true
	}
	n := min(len(buf), 1+c.rng.IntN(c.maxChunk), len(c.data))
	copy(buf, c.data[:n])
	c.data = c.data[n:]
	return future.Ok(n), true
}

func (c *chunkyReader) CancelRead() { c.inflight = nil }

// chunkyWriter is the model AsyncWriter: it accepts a random part of each
// write, is pending on a random half of the polls, and fails every write
// after failAfter bytes when failAfter > 0.
type chunkyWriter struct {
	t         testing.TB
	out       bytes.Buffer
	rng       *rand.Rand
	maxChunk  int
	failAfter int
	inflight  []byte
}

var errSinkFull = errors.New("sink full")

func (c *chunkyWriter) PollWrite(cx *future.Context, buf []byte) (future.Result[int], bool) {
	if c.inflight != nil {
		require.True(c.t, sameBuffer(c.inflight, buf), "a continued write must pass the buffer that started it")
	} else if c.rng.IntN(2) == 0 {
		c.inflight = buf
		cx.Waker().Wake()
		return future.Result[int]{}, false
	}
	c.inflight = nil
	if c.failAfter > 0 && c.out.Len() >= c.failAfter {
		return future.Fail[int](errSinkFull), true
	}
	n := min(len(buf), 1+c.rng.IntN(c.maxChunk))
	c.out.Write(buf[:n])
	return future.Ok(n), true
}

func (c *chunkyWriter) CancelWrite() { c.inflight = nil }

// sameBuffer reports whether a and b are the same slice (start and length).
func sameBuffer(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.SliceData(a) == unsafe.SliceData(b))
}

// block runs f on the test goroutine (the model streams need no runtime).
func block[T any](t testing.TB, f future.Future[future.Result[T]]) (T, error) {
	t.Helper()
	r, err := future.Block(context.Background(), f)
	require.NoError(t, err)
	return r.Value, r.Err
}

// randomText is n lines of random lengths (some empty, some longer than
// small buffers), some ending in "\r\n", the last one maybe without a
// newline.
func randomText(rng *rand.Rand, n int) string {
	var sb strings.Builder
	for i := range n {
		for range rng.IntN(3) * rng.IntN(40) {
			sb.WriteByte(byte('a' + rng.IntN(26)))
		}
		if i == n-1 && rng.IntN(2) == 0 {
			break
		}
		if rng.IntN(4) == 0 {
			sb.WriteByte('\r')
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// TestBufReaderLinesMatchBufioScanner: ReadLine over random text, random
// chunking and random buffer sizes gives the lines bufio.Scanner gives.
func TestBufReaderLinesMatchBufioScanner(t *testing.T) {
	rounds := 400
	if testing.Short() {
		rounds = 100
	}
	for seed := range uint64(rounds) {
		rng := rand.New(rand.NewPCG(seed, 1))
		text := randomText(rng, rng.IntN(30))
		want := scanLines(text)
		src := &chunkyReader{t: t, data: []byte(text), rng: rng, maxChunk: 1 + rng.IntN(64)}
		br := blitz.NewBufReader(src, 1+rng.IntN(64))
		var got []string
		for {
			line, err := block(t, br.ReadLine())
			if err == io.EOF {
				assert.Empty(t, line)
				break
			}
			require.NoError(t, err, "seed %d", seed)
			got = append(got, line)
		}
		require.Equal(t, want, got, "seed %d, text %q", seed, text)
	}
}

// scanLines is the reference: bufio.Scanner's lines.
func scanLines(text string) []string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// TestBufReaderMixedCallsMatchBufioReader: a random mix of Read,
// ReadBytes and ReadString gives what bufio.Reader gives for the same
// calls, errors included.
func TestBufReaderMixedCallsMatchBufioReader(t *testing.T) {
	rounds := 400
	if testing.Short() {
		rounds = 100
	}
	for seed := range uint64(rounds) {
		rng := rand.New(rand.NewPCG(seed, 2))
		text := randomText(rng, rng.IntN(20))
		ref := bufio.NewReaderSize(strings.NewReader(text), 16)
		src := &chunkyReader{t: t, data: []byte(text), rng: rng, maxChunk: 1 + rng.IntN(32)}
		br := blitz.NewBufReader(src, 1+rng.IntN(40))
		var got, want bytes.Buffer
		for range 40 {
			switch rng.IntN(3) {
			case 0:
				delim := byte('a' + rng.IntN(3))
				b, err := block(t, br.ReadBytes(delim))
				rb, rerr := ref.ReadBytes(delim)
				require.Equal(t, rb, b, "seed %d", seed)
				require.Equal(t, rerr, err, "seed %d", seed)
			case 1:
				s, err := block(t, br.ReadString('\n'))
				rs, rerr := ref.ReadString('\n')
				require.Equal(t, rs, s, "seed %d", seed)
				require.Equal(t, rerr, err, "seed %d", seed)
			default:
				// Reads may be shorter than bufio's; compare the bytes.
				buf := make([]byte, 1+rng.IntN(10))
				n, err := block(t, br.Read(buf))
				got.Write(buf[:n])
				if err == nil {
					rb := make([]byte, n)
					_, rerr := io.ReadFull(ref, rb)
					require.NoError(t, rerr)
					want.Write(rb)
				} else {
					require.Equal(t, io.EOF, err)
					_, rerr := ref.ReadByte()
					require.Equal(t, io.EOF, rerr)
				}
				require.Equal(t, want.Bytes(), got.Bytes(), "seed %d", seed)
			}
		}
	}
}

// TestBufReaderCancelledLineLosesNothing: a ReadLine cancelled after it
// gathered part of a long line leaves it for the next ReadLine.
func TestBufReaderCancelledLineLosesNothing(t *testing.T) {
	line := strings.Repeat("x", 100)
	rng := rand.New(rand.NewPCG(7, 7))
	src := &chunkyReader{t: t, data: []byte(line + "\nnext\n"), rng: rng, maxChunk: 8}
	br := blitz.NewBufReader(src, 16)
	cx := future.NewContext(noopWaker())
	f := br.ReadLine()
	for range 6 { // some fills, not all: the line is 101 bytes in chunks of at most 8
		_, ok := f.Poll(cx)
		require.False(t, ok)
	}
	f.Cancel()
	got, err := block(t, br.ReadLine())
	require.NoError(t, err)
	assert.Equal(t, line, got)
	got, err = block(t, br.ReadLine())
	require.NoError(t, err)
	assert.Equal(t, "next", got)
}

// TestBufReaderLineTooLong: a line beyond SetMaxLine fails with
// ErrLineTooLong, and reading goes on after it.
func TestBufReaderLineTooLong(t *testing.T) {
	for _, size := range []int{16, 4096} {
		rng := rand.New(rand.NewPCG(3, uint64(size)))
		src := &chunkyReader{t: t, data: []byte("short\n" + strings.Repeat("y", 50) + "\nafter\n"), rng: rng, maxChunk: 64}
		br := blitz.NewBufReader(src, size)
		br.SetMaxLine(20)
		got, err := block(t, br.ReadLine())
		require.NoError(t, err)
		assert.Equal(t, "short", got)
		_, err = block(t, br.ReadLine())
		require.ErrorIs(t, err, blitz.ErrLineTooLong)
		for {
			got, err = block(t, br.ReadLine())
			if !errors.Is(err, blitz.ErrLineTooLong) {
				break
			}
		}
		// The rest of the long line (if any was left unread) comes before "after".
		if got != "after" {
			assert.Equal(t, strings.Repeat("y", len(got)), got)
			got, err = block(t, br.ReadLine())
		}
		require.NoError(t, err)
		assert.Equal(t, "after", got)
	}
}

// TestBufReaderSourceErrorIsSticky: the source's error comes after the
// buffered bytes, and again on every later call.
func TestBufReaderSourceErrorIsSticky(t *testing.T) {
	boom := errors.New("boom")
	src := &chunkyReader{t: t, data: []byte("ab\ncd"), rng: rand.New(rand.NewPCG(1, 1)), maxChunk: 2, err: boom}
	br := blitz.NewBufReader(src, 0)
	got, err := block(t, br.ReadLine())
	require.NoError(t, err)
	assert.Equal(t, "ab", got)
	piece, err := block(t, br.ReadBytes('\n'))
	assert.Equal(t, []byte("cd"), piece)
	require.ErrorIs(t, err, boom)
	_, err = block(t, br.Read(make([]byte, 4)))
	require.ErrorIs(t, err, boom)
}

// TestBufWriterMatchesBufioWriter: random writes of random sizes through a
// BufWriter over a writer that accepts short counts and is often pending
// reach it whole and in order; Flush empties the buffer.
func TestBufWriterMatchesBufioWriter(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 80
	}
	for seed := range uint64(rounds) {
		rng := rand.New(rand.NewPCG(seed, 3))
		dst := &chunkyWriter{t: t, rng: rng, maxChunk: 1 + rng.IntN(50)}
		bw := blitz.NewBufWriter(dst, 1+rng.IntN(64))
		var want bytes.Buffer
		for range rng.IntN(30) {
			b := make([]byte, rng.IntN(100))
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			want.Write(b)
			n, err := block(t, bw.Write(b))
			require.NoError(t, err)
			require.Equal(t, len(b), n)
			require.LessOrEqual(t, bw.Buffered()+bw.Available(), max(16, bw.Buffered()+bw.Available()))
			if rng.IntN(5) == 0 {
				_, err := block(t, bw.Flush())
				require.NoError(t, err)
				require.Zero(t, bw.Buffered())
				require.Equal(t, want.Bytes(), dst.out.Bytes(), "seed %d", seed)
			}
		}
		_, err := block(t, bw.Flush())
		require.NoError(t, err)
		require.Equal(t, want.Bytes(), dst.out.Bytes(), "seed %d", seed)
	}
}

// TestBufWriterErrorIsSticky: after the destination fails, writes and
// flushes fail with its error.
func TestBufWriterErrorIsSticky(t *testing.T) {
	dst := &chunkyWriter{t: t, rng: rand.New(rand.NewPCG(1, 2)), maxChunk: 100, failAfter: 10}
	bw := blitz.NewBufWriter(dst, 16)
	_, err := block(t, bw.Write(bytes.Repeat([]byte("z"), 100)))
	require.ErrorIs(t, err, errSinkFull)
	_, err = block(t, bw.Flush())
	require.ErrorIs(t, err, errSinkFull)
	_, err = block(t, bw.WriteString("more"))
	require.ErrorIs(t, err, errSinkFull)
}

// TestStreamHelpersOverModelStreams: ReadFull, ReadToEnd, WriteAll,
// LimitReader and Copy (into a BufWriter, flushed at the end) over the
// model streams give what their io counterparts give.
func TestStreamHelpersOverModelStreams(t *testing.T) {
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 4))
		data := make([]byte, rng.IntN(5000))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		newSrc := func() *chunkyReader {
			return &chunkyReader{t: t, data: data, rng: rng, maxChunk: 1 + rng.IntN(700)}
		}

		all, err := block(t, blitz.ReadToEnd(newSrc()))
		require.NoError(t, err)
		require.Equal(t, data, all)

		buf := make([]byte, rng.IntN(6000))
		n, err := block(t, blitz.ReadFull(newSrc(), buf))
		wn, werr := io.ReadFull(bytes.NewReader(data), make([]byte, len(buf)))
		require.Equal(t, wn, n)
		require.Equal(t, werr, err)
		require.Equal(t, data[:n], buf[:n])

		limit := int64(rng.IntN(6000))
		lim, err := block(t, blitz.ReadToEnd(blitz.LimitReader(newSrc(), limit)))
		require.NoError(t, err)
		require.Equal(t, data[:min(int64(len(data)), limit)], lim)

		dst := &chunkyWriter{t: t, rng: rng, maxChunk: 1 + rng.IntN(900)}
		wrote, err := block(t, blitz.WriteAll(dst, data))
		require.NoError(t, err)
		require.Equal(t, len(data), wrote)
		require.Equal(t, data, dst.out.Bytes())

		dst = &chunkyWriter{t: t, rng: rng, maxChunk: 1 + rng.IntN(900)}
		copied, err := block(t, blitz.CopyBuffer(blitz.NewBufWriter(dst, 100), newSrc(), make([]byte, 1+rng.IntN(300))))
		require.NoError(t, err)
		require.Equal(t, int64(len(data)), copied)
		require.Equal(t, data, dst.out.Bytes(), "Copy flushes a BufWriter at the end")
	}
}

// TestCopyReportsBothSidesErrors: a failing source's error comes after
// the bytes it gave were written; a failing destination's stops the copy.
func TestCopyReportsBothSidesErrors(t *testing.T) {
	boom := errors.New("boom")
	src := &chunkyReader{t: t, data: []byte("0123456789"), rng: rand.New(rand.NewPCG(5, 5)), maxChunk: 3, err: boom}
	dst := &chunkyWriter{t: t, rng: rand.New(rand.NewPCG(5, 6)), maxChunk: 4}
	n, err := block(t, blitz.Copy(dst, src))
	require.ErrorIs(t, err, boom)
	assert.Equal(t, int64(10), n)
	assert.Equal(t, "0123456789", dst.out.String())

	src = &chunkyReader{t: t, data: bytes.Repeat([]byte("a"), 100), rng: rand.New(rand.NewPCG(5, 7)), maxChunk: 30}
	dst = &chunkyWriter{t: t, rng: rand.New(rand.NewPCG(5, 8)), maxChunk: 7, failAfter: 20}
	n, err = block(t, blitz.Copy(dst, src))
	require.ErrorIs(t, err, errSinkFull)
	assert.Equal(t, int64(dst.out.Len()), n)
}
