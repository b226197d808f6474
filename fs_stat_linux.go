//go:build linux

package blitz

import (
	"errors"
	"io/fs"
	"syscall"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// statxInfo is the fs.FileInfo of a File.Stat served by io_uring's statx:
// the same fields os.File.Stat gives, and Sys() a *syscall.Stat_t as os's
// (filled from the statx, so that code reading st_ino or st_nlink works).
type statxInfo struct {
	name  string
	size  int64
	mode  fs.FileMode
	mtime time.Time
	sys   syscall.Stat_t
}

func (s *statxInfo) Name() string       { return s.name }
func (s *statxInfo) Size() int64        { return s.size }
func (s *statxInfo) Mode() fs.FileMode  { return s.mode }
func (s *statxInfo) ModTime() time.Time { return s.mtime }
func (s *statxInfo) IsDir() bool        { return s.mode.IsDir() }
func (s *statxInfo) Sys() any           { return &s.sys }

// newStatxInfo builds the FileInfo of the file opened as name from st, as
// os.File.Stat builds it from fstat: the base name, the mode with its type
// bits translated, the size, the modification time.
func newStatxInfo(name string, st *backend.FileStat) fs.FileInfo {
	s := &statxInfo{name: basename(name), size: st.Size, mode: fileMode(st.Mode), mtime: st.Mtime}
	fillStat(&s.sys, st)
	return s
}

// fileMode converts an st_mode to an fs.FileMode, as package os does.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & syscall.S_IFMT {
	case syscall.S_IFBLK:
		mode |= fs.ModeDevice
	case syscall.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		mode |= fs.ModeDir
	case syscall.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		mode |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&syscall.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&syscall.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&syscall.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// fillStat fills sys from st. The field types of syscall.Stat_t differ
// between architectures (Nlink is 64 bits on amd64, 32 on arm64), hence set.
func fillStat(sys *syscall.Stat_t, st *backend.FileStat) {
	set(&sys.Dev, int64(st.Dev))
	set(&sys.Ino, int64(st.Ino))
	set(&sys.Nlink, int64(st.Nlink))
	set(&sys.Mode, int64(st.Mode))
	set(&sys.Uid, int64(st.UID))
	set(&sys.Gid, int64(st.GID))
	set(&sys.Rdev, int64(st.Rdev))
	set(&sys.Size, st.Size)
	set(&sys.Blksize, int64(st.Blksize))
	set(&sys.Blocks, st.Blocks)
	setTimespec(&sys.Atim, st.Atime)
	setTimespec(&sys.Mtim, st.Mtime)
	setTimespec(&sys.Ctim, st.Ctime)
}

// set stores v in *p, whatever integer type the architecture gave *p.
func set[T ~int32 | ~int64 | ~uint32 | ~uint64](p *T, v int64) { *p = T(v) }

// setTimespec stores t in *ts.
func setTimespec(ts *syscall.Timespec, t time.Time) {
	set(&ts.Sec, t.Unix())
	set(&ts.Nsec, int64(t.Nanosecond()))
}

// basename is the last element of name, as os.File.Stat names a file
// (trailing slashes dropped; "" stays "").
func basename(name string) string {
	i := len(name) - 1
	for i > 0 && name[i] == '/' {
		name = name[:i]
		i--
	}
	for i--; i >= 0; i-- {
		if name[i] == '/' {
			return name[i+1:]
		}
	}
	return name
}

// openRetryOnPool reports whether a ring open's failure is one that
// open(2) without O_NONBLOCK would not have had: io_uring's first,
// non-blocking attempt found a FIFO without a reader (ENXIO). The pool's
// os.OpenFile then waits for the reader, as os does.
func openRetryOnPool(err error) bool { return errors.Is(err, syscall.ENXIO) }
