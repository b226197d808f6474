package backendtest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/blitz-go/blitz/backend"
)

var fileTests = []test{
	{name: "FileWriteReadOffsets", fn: testFileOffsets},
	{name: "FileReadvWritev", fn: testFileVectored},
	{name: "FileOpenErrors", fn: testFileOpenErrors},
	{name: "FileCloseOp", fn: testFileCloseOp},
	{name: "FileCurrentPosition", fn: testFilePosition},
	{name: "FileAppend", fn: testFileAppend},
}

// openFile opens path through the backend, closed at the end of the test.
func (h *harness) openFile(path string, flags backend.OpenFlags) backend.FD {
	h.tb.Helper()
	fd, err := h.b.OpenFile(path, flags, 0o600)
	if err != nil {
		checkErr(h.tb, "OpenFile", err)
		h.tb.Fatalf("OpenFile(%s): %v", path, err)
	}
	h.track(fd)
	return fd
}

// testFileOffsets: writes and reads at offsets, and a read past the end.
func testFileOffsets(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	path := filepath.Join(tempDir(t), "f")
	fd := h.openFile(path, backend.OpenRead|backend.OpenWrite|backend.OpenCreate|backend.OpenTruncate)
	if c := h.runOK(&backend.Op{Kind: backend.KindWrite, FD: fd, Buf: []byte("world"), Offset: 10}); c.N != 5 {
		t.Fatalf("write at 10: N %d", c.N)
	}
	if c := h.runOK(&backend.Op{Kind: backend.KindWrite, FD: fd, Buf: []byte("hello"), Offset: 0}); c.N != 5 {
		t.Fatalf("write at 0: N %d", c.N)
	}
	buf := make([]byte, 32)
	c := h.runOK(&backend.Op{Kind: backend.KindRead, FD: fd, Buf: buf, Offset: 0})
	if want := []byte("hello\x00\x00\x00\x00\x00world"); !bytes.Equal(buf[:c.N], want) {
		t.Fatalf("read at 0: %q, want %q", buf[:c.N], want)
	}
	c = h.runOK(&backend.Op{Kind: backend.KindRead, FD: fd, Buf: buf[:3], Offset: 11})
	if string(buf[:c.N]) != "orl" {
		t.Fatalf("read at 11: %q", buf[:c.N])
	}
	c = h.run(&backend.Op{Kind: backend.KindRead, FD: fd, Buf: buf, Offset: 1000})
	if c.Err != nil || c.N != 0 {
		t.Fatalf("read past the end: N %d, Err %v; want 0, nil", c.N, c.Err)
	}
	h.closeFD(fd)
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "hello\x00\x00\x00\x00\x00world" {
		t.Fatalf("file holds %q, %v", data, err)
	}
	// A larger file, written and read back in pieces at offsets.
	fd = h.openFile(path, backend.OpenRead|backend.OpenWrite|backend.OpenTruncate)
	big := pattern(1<<20, 9)
	const piece = 64 << 10
	ops := make([]backend.Op, 0, len(big)/piece)
	for off := 0; off < len(big); off += piece {
		ops = append(ops, backend.Op{Kind: backend.KindWrite, FD: fd, Buf: big[off : off+piece], Offset: int64(off)})
	}
	for i := range ops {
		h.mustSubmit(&ops[i])
	}
	for i := range ops {
		if c := h.wait(&ops[i]); c.Err != nil || c.N != piece {
			t.Fatalf("write %d: N %d, Err %v", i, c.N, c.Err)
		}
	}
	got := make([]byte, len(big))
	for off := 0; off < len(big); {
		c := h.runOK(&backend.Op{Kind: backend.KindRead, FD: fd, Buf: got[off:], Offset: int64(off)})
		if c.N == 0 {
			t.Fatalf("early end of file at %d", off)
		}
		off += c.N
	}
	if !bytes.Equal(got, big) {
		t.Fatalf("1 MiB read back differs")
	}
}

// testFileVectored: Writev gathers and Readv scatters at offsets.
func testFileVectored(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	path := filepath.Join(tempDir(t), "v")
	fd := h.openFile(path, backend.OpenRead|backend.OpenWrite|backend.OpenCreate)
	c := h.runOK(&backend.Op{Kind: backend.KindWritev, FD: fd, Bufs: [][]byte{[]byte("abc"), []byte("defg"), []byte("h")}, Offset: 4})
	if c.N != 8 {
		t.Fatalf("writev N %d", c.N)
	}
	b1, b2, b3 := make([]byte, 2), make([]byte, 5), make([]byte, 10)
	c = h.runOK(&backend.Op{Kind: backend.KindReadv, FD: fd, Bufs: [][]byte{b1, b2, b3}, Offset: 3})
	if c.N != 9 || string(b1) != "\x00a" || string(b2) != "bcdef" || string(b3[:2]) != "gh" {
		t.Fatalf("readv: N %d, %q %q %q", c.N, b1, b2, b3)
	}
	c = h.run(&backend.Op{Kind: backend.KindReadv, FD: fd, Bufs: [][]byte{b1}, Offset: 100})
	if c.Err != nil || c.N != 0 {
		t.Fatalf("readv past the end: N %d, Err %v", c.N, c.Err)
	}
}

// testFileOpenErrors: OpenExclusive on an existing file is ErrFileExists, a
// missing file ErrNotExist, both *backend.Error.
func testFileOpenErrors(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	dir := tempDir(t)
	path := filepath.Join(dir, "e")
	fd := h.openFile(path, backend.OpenWrite|backend.OpenCreate|backend.OpenExclusive)
	h.closeFD(fd)
	_, err := h.b.OpenFile(path, backend.OpenWrite|backend.OpenCreate|backend.OpenExclusive, 0o600)
	wantErr(t, "OpenExclusive of an existing file", err, backend.ErrFileExists)
	checkErr(t, "OpenFile", err)
	_, err = h.b.OpenFile(filepath.Join(dir, "missing"), backend.OpenRead, 0)
	wantErr(t, "OpenFile of a missing file", err, backend.ErrNotExist)
	checkErr(t, "OpenFile", err)
	var be *backend.Error
	if !errorsAs(err, &be) {
		t.Errorf("OpenFile error %T is no *backend.Error", err)
	}
}

// testFileCloseOp: a KindClose op closes a file.
func testFileCloseOp(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	fd := h.openFile(filepath.Join(tempDir(t), "c"), backend.OpenWrite|backend.OpenCreate)
	h.forget(fd)
	if c := h.run(&backend.Op{Kind: backend.KindClose, FD: fd}); c.Err != nil {
		t.Fatalf("close op: %v", c.Err)
	}
}

// testFilePosition: Offset -1 reads and writes at the descriptor's current
// position, which advances.
func testFilePosition(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	path := filepath.Join(tempDir(t), "p")
	fd := h.openFile(path, backend.OpenWrite|backend.OpenCreate)
	for _, s := range []string{"abc", "def"} {
		if c := h.runOK(&backend.Op{Kind: backend.KindWrite, FD: fd, Buf: []byte(s), Offset: -1}); c.N != 3 {
			t.Fatalf("write at -1: N %d", c.N)
		}
	}
	h.closeFD(fd)
	if data, err := os.ReadFile(path); err != nil || string(data) != "abcdef" {
		t.Fatalf("file holds %q, %v; want abcdef", data, err)
	}
	fd = h.openFile(path, backend.OpenRead)
	buf := make([]byte, 4)
	for _, want := range []string{"abcd", "ef", ""} {
		c := h.runOK(&backend.Op{Kind: backend.KindRead, FD: fd, Buf: buf, Offset: -1})
		if string(buf[:c.N]) != want {
			t.Fatalf("read at -1: %q, want %q", buf[:c.N], want)
		}
	}
}

// testFileAppend: with OpenAppend, writes at -1 go to the end.
func testFileAppend(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	path := filepath.Join(tempDir(t), "a")
	if err := os.WriteFile(path, []byte("start"), 0o600); err != nil {
		t.Fatal(err)
	}
	fd := h.openFile(path, backend.OpenWrite|backend.OpenAppend)
	h.runOK(&backend.Op{Kind: backend.KindWrite, FD: fd, Buf: []byte("+end"), Offset: -1})
	h.closeFD(fd)
	if data, err := os.ReadFile(path); err != nil || string(data) != "start+end" {
		t.Fatalf("file holds %q, %v; want start+end", data, err)
	}
}
