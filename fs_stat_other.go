//go:build !linux

package blitz

import (
	"io/fs"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// Only Linux has io_uring, so a File.Stat is never a statx here: these keep
// fs_ring.go compiling.

// newStatxInfo is never called off Linux.
func newStatxInfo(name string, st *backend.FileStat) fs.FileInfo {
	return &statxInfo{name: name, st: *st}
}

// statxInfo describes a backend.FileStat, which is its Sys().
type statxInfo struct {
	name string
	st   backend.FileStat
}

func (s *statxInfo) Name() string       { return s.name }
func (s *statxInfo) Size() int64        { return s.st.Size }
func (s *statxInfo) Mode() fs.FileMode  { return fs.FileMode(s.st.Mode & 0o777) }
func (s *statxInfo) ModTime() time.Time { return s.st.Mtime }
func (s *statxInfo) IsDir() bool        { return s.st.Mode&0o170000 == 0o040000 }
func (s *statxInfo) Sys() any           { return &s.st }

// openRetryOnPool: no ring opens here.
func openRetryOnPool(error) bool { return false }
