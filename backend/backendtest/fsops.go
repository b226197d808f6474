package backendtest

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// fsOpTests are the file-system kinds: run where Caps say they are served,
// refused with ErrUnsupported (and never completed) elsewhere.
var fsOpTests = []test{
	{name: "FileOpsRefused", fn: testFileOpsRefused},
	{name: "FileOpenAt", fn: testFileOpenAt},
	{name: "FileOpenAtErrors", fn: testFileOpenAtErrors},
	{name: "FileFsyncStatx", fn: testFileFsyncStatx},
	{name: "FileFtruncate", fn: testFileFtruncate},
	{name: "FileOpenAtCancel", fn: testFileOpenAtCancel},
}

// fsKinds are the kinds each with a valid op, and the capability it needs.
func fsKinds(path string) []struct {
	op   *backend.Op
	need backend.Caps
} {
	return []struct {
		op   *backend.Op
		need backend.Caps
	}{
		{&backend.Op{Kind: backend.KindOpenAt, File: &backend.FileArgs{Path: path, OpenFlags: backend.OpenRead}}, backend.CapFileOps},
		{&backend.Op{Kind: backend.KindFsync, FD: 0}, backend.CapFileOps},
		{&backend.Op{Kind: backend.KindStatx, File: &backend.FileArgs{Path: path}}, backend.CapFileOps},
		{&backend.Op{Kind: backend.KindFtruncate, Offset: 1}, backend.CapFtruncate},
	}
}

// testFileOpsRefused: a backend without CapFileOps (or CapFtruncate)
// refuses the kinds at Submit with an *Error wrapping ErrUnsupported, and
// nothing completes for them.
func testFileOpsRefused(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	path := filepath.Join(tempDir(t), "f")
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, k := range fsKinds(path) {
		if h.caps().Has(k.need) {
			continue
		}
		refused++
		err := h.submit(k.op)
		wantErr(t, k.op.Kind.String()+" without its capability", err, backend.ErrUnsupported)
		var be *backend.Error
		if err != nil && !errorsAs(err, &be) {
			t.Errorf("%s refusal %T is no *backend.Error", k.op.Kind, err)
		}
	}
	if refused == 0 {
		t.Skipf("%s serves every file-system kind", h.b.Name())
	}
	h.settle(50 * time.Millisecond) // a refused op that completed anyway fails here
}

// testFileOpenAt: an openat creates, opens for writing and reading, and the
// descriptor works with the backend's read and write ops.
func testFileOpenAt(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	requireCaps(t, h, backend.CapFileOps, "file-system ops")
	path := filepath.Join(tempDir(t), "o")
	open := func(flags backend.OpenFlags) backend.FD {
		t.Helper()
		c := h.runOK(&backend.Op{Kind: backend.KindOpenAt, File: &backend.FileArgs{Path: path, OpenFlags: flags, Perm: 0o640}})
		if c.N != 0 || c.FD == backend.InvalidFD {
			t.Fatalf("openat: N %d, FD %d", c.N, c.FD)
		}
		return c.FD
	}
	fd := open(backend.OpenWrite | backend.OpenCreate | backend.OpenExclusive)
	h.runOK(&backend.Op{Kind: backend.KindWrite, FD: fd, Buf: []byte("opened"), Offset: 0})
	h.closeFD(fd)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&^0o640 != 0 {
		t.Errorf("created with %v, want 0640 less the umask", fi.Mode().Perm())
	}
	fd = open(backend.OpenRead)
	buf := make([]byte, 16)
	c := h.runOK(&backend.Op{Kind: backend.KindRead, FD: fd, Buf: buf, Offset: 0})
	if string(buf[:c.N]) != "opened" {
		t.Errorf("read back %q", buf[:c.N])
	}
	h.closeFD(fd)
	fd = open(backend.OpenWrite | backend.OpenAppend)
	h.runOK(&backend.Op{Kind: backend.KindWrite, FD: fd, Buf: []byte("+"), Offset: -1})
	h.closeFD(fd)
	fd = open(backend.OpenRead | backend.OpenWrite | backend.OpenTruncate)
	h.closeFD(fd)
	if data, err := os.ReadFile(path); err != nil || len(data) != 0 {
		t.Errorf("after OpenTruncate the file holds %q, %v", data, err)
	}
}

// testFileOpenAtErrors: the errors of open(2) arrive as completions with the
// sentinels OpenFile gives.
func testFileOpenAtErrors(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	requireCaps(t, h, backend.CapFileOps, "file-system ops")
	dir := tempDir(t)
	exists := filepath.Join(dir, "exists")
	if err := os.WriteFile(exists, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	openErr := func(path string, flags backend.OpenFlags) error {
		t.Helper()
		c := h.run(&backend.Op{Kind: backend.KindOpenAt, File: &backend.FileArgs{Path: path, OpenFlags: flags, Perm: 0o600}})
		if c.Err == nil {
			h.closeFD(c.FD)
			t.Errorf("openat %s (%b) succeeded", path, flags)
		}
		return c.Err
	}
	wantErr(t, "openat of a missing file", openErr(filepath.Join(dir, "missing"), backend.OpenRead), backend.ErrNotExist)
	wantErr(t, "OpenExclusive of an existing file", openErr(exists, backend.OpenWrite|backend.OpenCreate|backend.OpenExclusive), backend.ErrFileExists)
	if err := openErr(dir, backend.OpenWrite); err == nil || errors.Is(err, backend.ErrNotExist) {
		t.Errorf("openat of a directory for writing: %v", err)
	}
	c := h.run(&backend.Op{Kind: backend.KindStatx, File: &backend.FileArgs{Path: filepath.Join(dir, "missing")}})
	wantErr(t, "statx of a missing file", c.Err, backend.ErrNotExist)
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		return // no permission to deny
	}
	locked := filepath.Join(dir, "locked")
	if err := os.WriteFile(locked, nil, 0); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "openat without permission", openErr(locked, backend.OpenRead), backend.ErrPermission)
}

// testFileFsyncStatx: fsync and fdatasync succeed on a written file, and
// statx of the descriptor and of the path agree with os.Stat.
func testFileFsyncStatx(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	requireCaps(t, h, backend.CapFileOps, "file-system ops")
	path := filepath.Join(tempDir(t), "s")
	fd := h.openFile(path, backend.OpenRead|backend.OpenWrite|backend.OpenCreate)
	h.runOK(&backend.Op{Kind: backend.KindWrite, FD: fd, Buf: pattern(5000, 3), Offset: 0})
	if c := h.runOK(&backend.Op{Kind: backend.KindFsync, FD: fd}); c.N != 0 {
		t.Errorf("fsync N %d", c.N)
	}
	h.runOK(&backend.Op{Kind: backend.KindFsync, FD: fd, Flags: backend.DataSync})
	want, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	byFD := &backend.FileArgs{}
	h.runOK(&backend.Op{Kind: backend.KindStatx, FD: fd, File: byFD})
	checkStat(t, "statx of the descriptor", &byFD.Stat, want)
	byPath := &backend.FileArgs{Path: path}
	h.runOK(&backend.Op{Kind: backend.KindStatx, FD: backend.InvalidFD, File: byPath})
	checkStat(t, "statx of the path", &byPath.Stat, want)
	if byFD.Stat.Ino != byPath.Stat.Ino || byFD.Stat.Dev != byPath.Stat.Dev {
		t.Errorf("statx by descriptor and by path name different files: %+v, %+v", byFD.Stat, byPath.Stat)
	}
	dir := &backend.FileArgs{Path: filepath.Dir(path)}
	h.runOK(&backend.Op{Kind: backend.KindStatx, File: dir})
	if dir.Stat.Mode&modeType != modeDir {
		t.Errorf("statx of a directory: mode %o", dir.Stat.Mode)
	}
	c := h.run(&backend.Op{Kind: backend.KindFsync, FD: fd, Timeout: time.Minute})
	if c.Err != nil {
		t.Errorf("fsync with a linked timeout: %v", c.Err)
	}
}

// modeType and modeDir are POSIX's S_IFMT and S_IFDIR, FileStat.Mode's.
const (
	modeType = 0o170000
	modeDir  = 0o040000
	modeReg  = 0o100000
)

// checkStat compares a statx result with os.Stat's.
func checkStat(t *testing.T, what string, st *backend.FileStat, want os.FileInfo) {
	t.Helper()
	if st.Size != want.Size() {
		t.Errorf("%s: size %d, want %d", what, st.Size, want.Size())
	}
	if st.Mode&modeType != modeReg || os.FileMode(st.Mode&0o777) != want.Mode().Perm() {
		t.Errorf("%s: mode %o, want a regular file with %v", what, st.Mode, want.Mode())
	}
	if !st.Mtime.Equal(want.ModTime()) {
		t.Errorf("%s: mtime %v, want %v", what, st.Mtime, want.ModTime())
	}
	if st.Nlink != 1 || st.Ino == 0 || st.Blocks == 0 || st.Blksize == 0 || st.Ctime.IsZero() {
		t.Errorf("%s: implausible %+v", what, *st)
	}
	checkStatSys(t, what, st, want)
}

// testFileFtruncate: ftruncate grows and shrinks a file.
func testFileFtruncate(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	requireCaps(t, h, backend.CapFtruncate, "ftruncate")
	path := filepath.Join(tempDir(t), "t")
	fd := h.openFile(path, backend.OpenRead|backend.OpenWrite|backend.OpenCreate)
	h.runOK(&backend.Op{Kind: backend.KindWrite, FD: fd, Buf: []byte("0123456789"), Offset: 0})
	for _, size := range []int64{4, 100, 0} {
		if c := h.runOK(&backend.Op{Kind: backend.KindFtruncate, FD: fd, Offset: size}); c.N != 0 {
			t.Errorf("ftruncate N %d", c.N)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() != size {
			t.Errorf("after ftruncate to %d: %v, %v", size, fi.Size(), err)
		}
	}
	data, _ := os.ReadFile(path)
	if len(data) != 0 {
		t.Errorf("file holds %q", data)
	}
}

// testFileOpenAtCancel: an openat that waits (a FIFO with no writer yet)
// is cancelled: exactly one final completion, ErrCanceled (or a descriptor
// if a writer raced it, which the harness closes).
func testFileOpenAtCancel(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	requireCaps(t, h, backend.CapFileOps, "file-system ops")
	path := filepath.Join(tempDir(t), "fifo")
	if err := mkfifo(path); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	// OpenCreate keeps io_uring from trying the open with O_NONBLOCK first
	// (which would not wait for the writer); the FIFO exists, so nothing is
	// created.
	op := &backend.Op{Kind: backend.KindOpenAt, File: &backend.FileArgs{Path: path, OpenFlags: backend.OpenRead | backend.OpenCreate}}
	h.mustSubmit(op)
	h.settle(30 * time.Millisecond)
	if !h.pending(op) {
		t.Fatalf("openat of a FIFO without a writer completed: %+v", h.wait(op))
	}
	cancel := &backend.Op{Kind: backend.KindCancel, Target: op}
	h.mustSubmit(cancel)
	c := h.wait(op)
	if c.Err != nil && c.Err != backend.ErrCanceled {
		t.Errorf("cancelled openat: %v, want ErrCanceled", c.Err)
	}
	h.wait(cancel)
	h.settle(20 * time.Millisecond)
}
