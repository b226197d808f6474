package blitz_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// forEachFileBackend is forEachBackend plus BackendNone, whose files run
// on the blocking pool like epoll's.
func forEachFileBackend(t *testing.T, f func(t *testing.T, cfg blitz.Config)) {
	forEachBackend(t, f)
	t.Run("none", func(t *testing.T) { f(t, blitz.Config{Backend: blitz.BackendNone}) })
}

// fileOpErrs runs every operation of f from the test goroutine and returns
// their errors by name. A Close among them is the last.
func fileOpErrs(t *testing.T, rt *blitz.Runtime, f *blitz.File) map[string]error {
	t.Helper()
	buf := make([]byte, 4)
	bufs := [][]byte{make([]byte, 2), make([]byte, 2)}
	return map[string]error{
		"Read":     second(awaitN(t, rt, f.Read(buf))),
		"Write":    second(awaitN(t, rt, f.Write([]byte("x")))),
		"ReadAt":   second(awaitN(t, rt, f.ReadAt(buf, 0))),
		"WriteAt":  second(awaitN(t, rt, f.WriteAt([]byte("x"), 0))),
		"ReadvAt":  second(awaitN(t, rt, f.ReadvAt(bufs, 0))),
		"WritevAt": second(awaitN(t, rt, f.WritevAt([][]byte{[]byte("x")}, 0))),
		"SeekTo":   second(awaitFS(t, rt, f.SeekTo(0, io.SeekStart))),
		"Sync":     second(awaitR[struct{}](t, rt, f.Sync())),
		"Stat":     second(awaitStat(t, rt, f)),
		"Truncate": second(awaitR[struct{}](t, rt, f.Truncate(1))),
		"Close":    second(awaitClose(t, rt, f.Close())),
	}
}

// TestFileOSNilAfterClose: OS returns nil once Close was called, as its doc
// says, whether OS handed the descriptor out before or not.
func TestFileOSNilAfterClose(t *testing.T) {
	forEachFileBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		name := filepath.Join(fsTempDir(t), "f")
		for _, takeOS := range []bool{false, true} {
			f, err := awaitOpen(t, rt, blitz.Create(name))
			require.NoError(t, err)
			if takeOS {
				require.NotNil(t, f.OS(), "OS of an open file")
			}
			_, err = awaitClose(t, rt, f.Close())
			require.NoError(t, err)
			assert.Nil(t, f.OS(), "OS after Close (OS called before Close: %v)", takeOS)
		}
	})
}

// TestFileOpsAfterClose: every operation on a closed File fails with an
// *fs.PathError matching fs.ErrClosed, as os.File's do; so does a second
// Close.
func TestFileOpsAfterClose(t *testing.T) {
	forEachFileBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		name := filepath.Join(fsTempDir(t), "f")
		for _, takeOS := range []bool{false, true} {
			f, err := awaitOpen(t, rt, blitz.Create(name))
			require.NoError(t, err)
			if takeOS {
				f.OS()
			}
			_, err = awaitClose(t, rt, f.Close())
			require.NoError(t, err)
			for what, err := range fileOpErrs(t, rt, f) {
				assert.ErrorIs(t, err, fs.ErrClosed, "%s on a closed file (OS taken: %v)", what, takeOS)
				assert.ErrorAs(t, err, new(*fs.PathError), "%s on a closed file (OS taken: %v)", what, takeOS)
			}
		}
	})
}

// TestOpenAfterShutdown: on a runtime that was shut down, Open, Create and
// OpenFile fail with an error matching ErrShutdown, and open (or create)
// nothing.
func TestOpenAfterShutdown(t *testing.T) {
	forEachFileBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt, err := blitz.New(cfg)
		require.NoError(t, err)
		require.NoError(t, rt.Shutdown(testCtx(t)))
		dir := fsTempDir(t)
		existing := filepath.Join(dir, "existing")
		require.NoError(t, os.WriteFile(existing, []byte("x"), 0o600))
		created := filepath.Join(dir, "created")
		for what, f := range map[string]*blitz.OpenFuture{
			"Open":            blitz.Open(existing),
			"Create":          blitz.Create(created),
			"OpenFile":        blitz.OpenFile(created, os.O_RDWR|os.O_CREATE, 0o600),
			"OpenFile O_SYNC": blitz.OpenFile(created, os.O_RDWR|os.O_CREATE|os.O_SYNC, 0o600),
		} {
			file, err := pollOpenAfterShutdown(t, rt, f)
			assert.ErrorIs(t, err, blitz.ErrShutdown, what)
			assert.Nil(t, file, what)
			if file != nil {
				_ = file.OS().Close()
			}
		}
		_, err = os.Stat(created)
		assert.ErrorIs(t, err, fs.ErrNotExist, "a Create on a shut-down runtime created the file")
	})
}

// pollOpenAfterShutdown runs f with BlockOn on rt, which was shut down;
// BlockOn polls f with a Context of rt before it notices the shutdown, so
// the error is f's own when f resolves at that poll.
func pollOpenAfterShutdown(t *testing.T, rt *blitz.Runtime, f *blitz.OpenFuture) (*blitz.File, error) {
	t.Helper()
	r, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[future.Result[*blitz.File]](f))
	if err != nil {
		return nil, err
	}
	return r.Value, r.Err
}

// TestFileOpsAfterShutdown: the operations of a File whose runtime shut
// down fail at once with an *fs.PathError matching fs.ErrClosed (the file
// is as good as closed) and ErrShutdown (why); Close still closes it, and
// OS is nil after it.
func TestFileOpsAfterShutdown(t *testing.T) {
	forEachFileBackend(t, func(t *testing.T, cfg blitz.Config) {
		for _, takeOS := range []bool{false, true} {
			rt, err := blitz.New(cfg)
			require.NoError(t, err)
			name := filepath.Join(fsTempDir(t), "f")
			f, err := awaitOpen(t, rt, blitz.Create(name))
			require.NoError(t, err)
			var osf *os.File
			if takeOS {
				osf = f.OS()
			}
			require.NoError(t, rt.Shutdown(testCtx(t)))
			buf := make([]byte, 4)
			bufs := [][]byte{make([]byte, 2), make([]byte, 2)}
			for what, op := range map[string]future.Future[error]{
				"Read":     errOf(f.Read(buf)),
				"Write":    errOf(f.Write([]byte("x"))),
				"ReadAt":   errOf(f.ReadAt(buf, 0)),
				"WriteAt":  errOf(f.WriteAt([]byte("x"), 0)),
				"ReadvAt":  errOf(f.ReadvAt(bufs, 0)),
				"WritevAt": errOf(f.WritevAt([][]byte{[]byte("x")}, 0)),
				"SeekTo":   errOf(f.SeekTo(0, io.SeekStart)),
				"Sync":     errOf(f.Sync()),
				"Stat":     errOf(f.Stat()),
				"Truncate": errOf(f.Truncate(1)),
			} {
				err := pollAfterShutdown(t, rt, op)
				assert.ErrorIs(t, err, fs.ErrClosed, "%s (OS taken: %v)", what, takeOS)
				assert.ErrorIs(t, err, blitz.ErrShutdown, "%s (OS taken: %v)", what, takeOS)
				assert.ErrorAs(t, err, new(*fs.PathError), "%s (OS taken: %v)", what, takeOS)
			}
			err = pollAfterShutdown(t, rt, errOf(f.Close()))
			assert.NoError(t, err, "Close after the runtime shut down (OS taken: %v)", takeOS)
			assert.Nil(t, f.OS())
			if osf != nil {
				_, err := osf.Read(buf)
				assert.ErrorIs(t, err, fs.ErrClosed, "the os.File was closed")
			}
			err = pollAfterShutdown(t, rt, errOf(f.Close()))
			assert.ErrorIs(t, err, fs.ErrClosed, "a second Close (OS taken: %v)", takeOS)
		}
	})
}

// errOf is the error of a future's Result.
func errOf[T any](f future.Future[future.Result[T]]) future.Future[error] {
	return future.Map(f, func(r future.Result[T]) error { return r.Err })
}

// pollAfterShutdown runs f with BlockOn on rt, which was shut down, and
// returns f's result; a BlockOn that does not resolve f at its first poll
// fails the test.
func pollAfterShutdown(t *testing.T, rt *blitz.Runtime, f future.Future[error]) error {
	t.Helper()
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	err, berr := blitz.BlockOn(ctx, rt.Handle(), f)
	if berr != nil {
		require.True(t, errors.Is(berr, blitz.ErrShutdown), "BlockOn: %v", berr)
		t.Errorf("the operation did not resolve at its first poll after the shutdown (BlockOn: %v)", berr)
	}
	return err
}
