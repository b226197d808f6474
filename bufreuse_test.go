package blitz_test

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// gateSource is an AsyncReader of data, for tests that poll by hand: out
// of data it stays pending, or ends (io.EOF) once eof is set.
type gateSource struct {
	data []byte
	eof  bool
}

func (s *gateSource) PollRead(_ *future.Context, buf []byte) (future.Result[int], bool) {
	if len(s.data) == 0 {
		if !s.eof {
			return future.Result[int]{}, false
		}
		return future.Result[int]{Err: io.EOF}, true
	}
	n := copy(buf, s.data)
	s.data = s.data[n:]
	return future.Ok(n), true
}

func (s *gateSource) CancelRead() {}

// pollReady polls f once by hand and requires it ready.
func pollReady[T any](t *testing.T, f *blitz.StreamFuture[T]) future.Result[T] {
	t.Helper()
	r, ok := f.Poll(&future.Context{})
	require.True(t, ok)
	return r
}

// TestReadLineFutureReusedOnlyWhenDone: ReadLine hands out its completed or
// cancelled future again, never a pending one; a completed one polled
// before the next call panics as a completed future does; a cancelled line
// loses nothing.
func TestReadLineFutureReusedOnlyWhenDone(t *testing.T) {
	src := &gateSource{data: []byte("one\r\ntwo\nthree\n")}
	rd := blitz.NewBufReader(src, 16)
	l1 := rd.ReadLine()
	assert.Equal(t, "one", pollReady(t, l1).Value)
	mustPanicPolledAfterCompletion[future.Result[string]](t, l1)

	l2 := rd.ReadLine()
	assert.Same(t, l1, l2, "the completed future is the next call's")
	pending := rd.ReadLine()
	assert.NotSame(t, l2, pending, "a future not yet completed is not handed out again")
	assert.Equal(t, "two", pollReady(t, l2).Value)

	assert.Equal(t, "three", pollReady(t, pending).Value)

	// A line cut by a cancel: the bytes gathered stay for the next call,
	// which reuses the cancelled future.
	src.data = []byte("fo")
	c := rd.ReadLine()
	_, ok := c.Poll(&future.Context{}) // buffers "fo" and waits for the newline
	require.False(t, ok)
	c.Cancel()
	again := rd.ReadLine()
	assert.Same(t, c, again, "a cancelled future is the next call's")
	src.data = []byte("ur\r\n")
	assert.Equal(t, "four", pollReady(t, again).Value)
	src.eof = true
	last := rd.ReadLine()
	r := pollReady(t, last)
	assert.Equal(t, "", r.Value)
	assert.ErrorIs(t, r.Err, io.EOF)
}

// TestReadStringDelimiterPerFuture: a ReadString future keeps its own
// delimiter when a later call asks for another one.
func TestReadStringDelimiterPerFuture(t *testing.T) {
	rd := blitz.NewBufReader(&gateSource{data: []byte("a,b;c"), eof: true}, 16)
	comma := rd.ReadString(',')
	semi := rd.ReadString(';')
	assert.NotSame(t, comma, semi)
	assert.Equal(t, "a,", pollReady(t, comma).Value)
	assert.Equal(t, "b;", pollReady(t, semi).Value)
	bs := rd.ReadBytes('c')
	assert.Equal(t, "c", string(pollReady(t, bs).Value))
	again := rd.ReadBytes('x')
	assert.Same(t, bs, again)
	r := pollReady(t, again)
	assert.Empty(t, r.Value)
	assert.ErrorIs(t, r.Err, io.EOF)
}
