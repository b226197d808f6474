package blitz_test

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// awaitFS runs f on rt from the test goroutine and returns its result.
func awaitFS[T any](t *testing.T, rt *blitz.Runtime, f *blitz.BlockingFuture[T]) (T, error) {
	t.Helper()
	r, err := blitz.BlockOn(testCtx(t), rt.Handle(), future.Future[future.Result[T]](f))
	require.NoError(t, err)
	return r.Value, r.Err
}

// awaitN runs a File data operation from the test goroutine.
func awaitN(t *testing.T, rt *blitz.Runtime, f *blitz.FileIOFuture) (int, error) {
	t.Helper()
	return awaitR[int](t, rt, f)
}

// awaitOpen opens from the test goroutine.
func awaitOpen(t *testing.T, rt *blitz.Runtime, f *blitz.OpenFuture) (*blitz.File, error) {
	t.Helper()
	return awaitR[*blitz.File](t, rt, f)
}

// awaitClose closes from the test goroutine.
func awaitClose(t *testing.T, rt *blitz.Runtime, f *blitz.CloseFuture) (struct{}, error) {
	t.Helper()
	return awaitR[struct{}](t, rt, f)
}

// awaitStat stats f from the test goroutine.
func awaitStat(t *testing.T, rt *blitz.Runtime, f *blitz.File) (fs.FileInfo, error) {
	t.Helper()
	return awaitR[fs.FileInfo](t, rt, f.Stat())
}

// second returns b: the error of a (value, error) pair.
func second[A any](_ A, b error) error { return b }

// awaitR runs f on rt from the test goroutine and returns its result.
func awaitR[T any](t *testing.T, rt *blitz.Runtime, f future.Future[future.Result[T]]) (T, error) {
	t.Helper()
	r, err := blitz.BlockOn(testCtx(t), rt.Handle(), f)
	require.NoError(t, err)
	return r.Value, r.Err
}

// fsTempDir is t.TempDir, except under Wine, whose NT layer refuses the
// unlinkat that Go's os.RemoveAll uses on Windows ("Invalid function"): there
// the directory is made by hand and removed on a best-effort basis.
func fsTempDir(t *testing.T) string {
	t.Helper()
	if !underWine() {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("", "blitzfs")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// TestFileOps: every File operation on a temporary directory, against what
// the file then holds.
func TestFileOps(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) { testFileOps(t, newRuntime(t, cfg)) })
}

func testFileOps(t *testing.T, rt *blitz.Runtime) {
	dir := fsTempDir(t)
	name := filepath.Join(dir, "f")

	f, err := awaitOpen(t, rt, blitz.Create(name))
	require.NoError(t, err)
	assert.Equal(t, name, f.Name())
	n, err := awaitN(t, rt, f.Write([]byte("hello ")))
	require.NoError(t, err)
	assert.Equal(t, 6, n)
	n, err = awaitN(t, rt, f.WriteAt([]byte("world"), 6))
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	n, err = awaitN(t, rt, f.WritevAt([][]byte{[]byte("!"), []byte("?")}, 11))
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	_, err = awaitR[struct{}](t, rt, f.Sync())
	require.NoError(t, err)

	buf := make([]byte, 5)
	n, err = awaitN(t, rt, f.ReadAt(buf, 6))
	require.NoError(t, err)
	assert.Equal(t, "world", string(buf[:n]))
	a, b := make([]byte, 3), make([]byte, 20)
	n, err = awaitN(t, rt, f.ReadvAt([][]byte{a, b}, 0))
	require.ErrorIs(t, err, io.EOF, "the file ends before the buffers are full")
	assert.Equal(t, 13, n)
	assert.Equal(t, "hel", string(a))
	assert.Equal(t, "lo world!?", string(b[:10]))

	pos, err := awaitFS(t, rt, f.SeekTo(0, io.SeekStart))
	require.NoError(t, err)
	assert.Zero(t, pos)
	n, err = awaitN(t, rt, f.Read(buf))
	require.NoError(t, err)
	assert.Equal(t, "hello", string(buf[:n]))

	fi, err := awaitStat(t, rt, f)
	require.NoError(t, err)
	assert.Equal(t, int64(13), fi.Size())
	sameStat(t, name, fi)
	_, err = awaitR[struct{}](t, rt, f.Truncate(5))
	require.NoError(t, err)
	fi, err = awaitStat(t, rt, f)
	require.NoError(t, err)
	assert.Equal(t, int64(5), fi.Size())
	_, err = awaitR[struct{}](t, rt, f.Truncate(-1))
	require.Error(t, err, "a negative size")
	require.ErrorAs(t, err, new(*fs.PathError))
	_, err = awaitFS(t, rt, f.SeekTo(0, io.SeekEnd))
	require.NoError(t, err)
	n, err = awaitN(t, rt, f.Read(buf))
	assert.Zero(t, n)
	require.ErrorIs(t, err, io.EOF)

	_, err = awaitClose(t, rt, f.Close())
	require.NoError(t, err)
	_, err = awaitClose(t, rt, f.Close())
	require.ErrorIs(t, err, fs.ErrClosed)
	_, err = awaitN(t, rt, f.Read(buf))
	require.ErrorIs(t, err, fs.ErrClosed)
	for what, err := range map[string]error{
		"Sync":     second(awaitR[struct{}](t, rt, f.Sync())),
		"Stat":     second(awaitStat(t, rt, f)),
		"Truncate": second(awaitR[struct{}](t, rt, f.Truncate(1))),
	} {
		require.ErrorIs(t, err, fs.ErrClosed, what)
		require.ErrorAs(t, err, new(*fs.PathError), what)
	}

	got, err := awaitFS(t, rt, blitz.ReadFile(name))
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got))
	g, err := awaitOpen(t, rt, blitz.Open(name))
	require.NoError(t, err)
	_, err = awaitN(t, rt, g.Write([]byte("x")))
	require.Error(t, err, "Open is read-only")
	_, _ = awaitClose(t, rt, g.Close())
}

// TestFileHelpers: whole-file write, append and read.
func TestFileHelpers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) { testFileHelpers(t, newRuntime(t, cfg)) })
}

func testFileHelpers(t *testing.T, rt *blitz.Runtime) {
	name := filepath.Join(fsTempDir(t), "w")
	_, err := awaitFS(t, rt, blitz.WriteFile(name, []byte("one\n"), 0o644))
	require.NoError(t, err)
	_, err = awaitFS(t, rt, blitz.AppendFile(name, []byte("two\n"), 0o644))
	require.NoError(t, err)
	_, err = awaitFS(t, rt, blitz.AppendFile(filepath.Join(filepath.Dir(name), "new"), []byte("x"), 0o644))
	require.NoError(t, err, "AppendFile creates")
	got, err := awaitFS(t, rt, blitz.ReadFile(name))
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\n", string(got))
	f, err := awaitOpen(t, rt, blitz.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644))
	assert.Nil(t, f)
	require.ErrorIs(t, err, fs.ErrExist)
}

// TestFileErrors: the error paths give *fs.PathError values that errors.Is
// understands.
func TestFileErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) { testFileErrors(t, newRuntime(t, cfg)) })
}

func testFileErrors(t *testing.T, rt *blitz.Runtime) {
	dir := fsTempDir(t)
	missing := filepath.Join(dir, "missing")
	var pe *fs.PathError

	_, err := awaitOpen(t, rt, blitz.Open(missing))
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, missing, pe.Path)
	_, err = awaitFS(t, rt, blitz.ReadFile(missing))
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = awaitFS(t, rt, blitz.Stat(missing))
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = awaitFS(t, rt, blitz.Remove(missing))
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = awaitFS(t, rt, blitz.Canonicalize(missing))
	require.ErrorIs(t, err, fs.ErrNotExist)

	// A directory where a file was expected.
	_, err = awaitFS(t, rt, blitz.WriteFile(dir, []byte("x"), 0o644))
	require.Error(t, err)
	require.ErrorAs(t, err, &pe)
	d, err := awaitOpen(t, rt, blitz.Open(dir))
	require.NoError(t, err, "a directory opens read-only")
	_, err = awaitN(t, rt, d.Read(make([]byte, 8)))
	require.Error(t, err, "reading a directory fails")
	_, _ = awaitClose(t, rt, d.Close())
	// A file where a directory was expected.
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err = awaitFS(t, rt, blitz.ReadDir(file))
	require.Error(t, err)
	_, err = awaitFS(t, rt, blitz.Mkdir(filepath.Join(file, "sub"), 0o755))
	require.Error(t, err)

	// Permission denied.
	if goruntime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Log("permission checks skipped (Windows, or running as root)")
		return
	}
	locked := filepath.Join(dir, "locked")
	require.NoError(t, os.WriteFile(locked, []byte("secret"), 0o000))
	_, err = awaitFS(t, rt, blitz.ReadFile(locked))
	require.ErrorIs(t, err, fs.ErrPermission)
	require.ErrorAs(t, err, &pe)
}

// TestDirOps: directories, renames, links and metadata.
func TestDirOps(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) { testDirOps(t, newRuntime(t, cfg)) })
}

func testDirOps(t *testing.T, rt *blitz.Runtime) {
	root := fsTempDir(t)
	deep := filepath.Join(root, "a", "b", "c")
	_, err := awaitFS(t, rt, blitz.MkdirAll(deep, 0o755))
	require.NoError(t, err)
	_, err = awaitFS(t, rt, blitz.Mkdir(deep, 0o755))
	require.ErrorIs(t, err, fs.ErrExist)
	for _, n := range []string{"z", "x", "y"} {
		_, err = awaitFS(t, rt, blitz.WriteFile(filepath.Join(deep, n), []byte(n), 0o644))
		require.NoError(t, err)
	}
	es, err := awaitFS(t, rt, blitz.ReadDir(deep))
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"x", "y", "z"}, names, "sorted")

	_, err = awaitFS(t, rt, blitz.Rename(filepath.Join(deep, "x"), filepath.Join(root, "moved")))
	require.NoError(t, err)
	fi, err := awaitFS(t, rt, blitz.Stat(filepath.Join(root, "moved")))
	require.NoError(t, err)
	assert.Equal(t, int64(1), fi.Size())
	_, err = awaitFS(t, rt, blitz.Chmod(filepath.Join(root, "moved"), 0o600))
	require.NoError(t, err)

	_, err = awaitFS(t, rt, blitz.Link(filepath.Join(root, "moved"), filepath.Join(root, "hard")))
	require.NoError(t, err)
	got, err := awaitFS(t, rt, blitz.ReadFile(filepath.Join(root, "hard")))
	require.NoError(t, err)
	assert.Equal(t, "x", string(got))

	if goruntime.GOOS != "windows" { // symbolic links need a privilege there
		link := filepath.Join(root, "sym")
		_, err = awaitFS(t, rt, blitz.Symlink(deep, link))
		require.NoError(t, err)
		dest, err := awaitFS(t, rt, blitz.Readlink(link))
		require.NoError(t, err)
		assert.Equal(t, deep, dest)
		li, err := awaitFS(t, rt, blitz.Lstat(link))
		require.NoError(t, err)
		assert.NotZero(t, li.Mode()&fs.ModeSymlink)
		canon, err := awaitFS(t, rt, blitz.Canonicalize(filepath.Join(link, ".", "y")))
		require.NoError(t, err)
		want, err := filepath.EvalSymlinks(filepath.Join(deep, "y"))
		require.NoError(t, err)
		assert.Equal(t, want, canon)
	}

	_, err = awaitFS(t, rt, blitz.Remove(filepath.Join(root, "a")))
	require.Error(t, err, "not empty")
	if underWine() {
		t.Log("RemoveAll skipped under Wine (see fsTempDir)")
		return
	}
	_, err = awaitFS(t, rt, blitz.RemoveAll(filepath.Join(root, "a")))
	require.NoError(t, err)
	_, err = awaitFS(t, rt, blitz.RemoveAll(filepath.Join(root, "a")))
	require.NoError(t, err, "RemoveAll of nothing")
	_, err = awaitFS(t, rt, blitz.Stat(deep))
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// sameStat checks fi, a File.Stat result, against os.Stat of path: every
// field, Sys() included.
func sameStat(t *testing.T, path string, fi fs.FileInfo) {
	t.Helper()
	want, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, want.Name(), fi.Name(), "Name")
	assert.Equal(t, want.Size(), fi.Size(), "Size")
	assert.Equal(t, want.Mode(), fi.Mode(), "Mode")
	assert.True(t, want.ModTime().Equal(fi.ModTime()), "ModTime %v, os.Stat's %v", fi.ModTime(), want.ModTime())
	assert.Equal(t, want.IsDir(), fi.IsDir(), "IsDir")
	assert.Equal(t, want.Sys(), fi.Sys(), "Sys")
}

// TestFileStatLikeOS: File.Stat of a file and of a directory equals os.Stat.
func TestFileStatLikeOS(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		dir := fsTempDir(t)
		name := filepath.Join(dir, "data")
		require.NoError(t, os.WriteFile(name, make([]byte, 12345), 0o640))
		for _, path := range []string{name, dir, dir + string(filepath.Separator)} {
			f, err := awaitOpen(t, rt, blitz.Open(path))
			require.NoError(t, err)
			fi, err := awaitStat(t, rt, f)
			require.NoError(t, err)
			sameStat(t, path, fi)
			_, err = awaitClose(t, rt, f.Close())
			require.NoError(t, err)
		}
	})
}

// TestFileOpenErrorsLikeOS: a failed open gives the error os.OpenFile
// gives: a *fs.PathError with Op "open", the path, and the same errno.
func TestFileOpenErrorsLikeOS(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		dir := fsTempDir(t)
		exists := filepath.Join(dir, "exists")
		require.NoError(t, os.WriteFile(exists, nil, 0o644))
		cases := []struct {
			what string
			path string
			flag int
			is   error
		}{
			{"missing", filepath.Join(dir, "missing"), os.O_RDONLY, fs.ErrNotExist},
			{"missing parent", filepath.Join(dir, "no", "f"), os.O_RDWR | os.O_CREATE, fs.ErrNotExist},
			{"O_EXCL of an existing file", exists, os.O_WRONLY | os.O_CREATE | os.O_EXCL, fs.ErrExist},
			{"a directory for writing", dir, os.O_WRONLY, nil},
			{"a NUL byte in the name", exists + "\x00", os.O_RDONLY, nil},
		}
		if goruntime.GOOS != "windows" && os.Geteuid() != 0 {
			locked := filepath.Join(dir, "locked")
			require.NoError(t, os.WriteFile(locked, nil, 0))
			cases = append(cases, struct {
				what string
				path string
				flag int
				is   error
			}{"permission denied", locked, os.O_RDONLY, fs.ErrPermission})
		}
		for _, c := range cases {
			_, want := os.OpenFile(c.path, c.flag, 0o644)
			require.Error(t, want, c.what)
			f, err := awaitOpen(t, rt, blitz.OpenFile(c.path, c.flag, 0o644))
			assert.Nil(t, f, c.what)
			assert.Equal(t, want, err, c.what)
			if c.is != nil {
				assert.ErrorIs(t, err, c.is, c.what)
			}
		}
	})
}
