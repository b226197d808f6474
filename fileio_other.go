//go:build !linux

package blitz

import (
	"io/fs"

	"github.com/blitz-go/blitz/backend"
)

// noWaitState is empty where there is no io_uring: see fileio_linux.go.
type noWaitState struct{}

// forFD has nothing to decide here.
func (*noWaitState) forFD(backend.FD) {}

// tryNoWait never reads without the ring here (there is no ring).
func (f *FileIOFuture) tryNoWait() (backend.Completion, bool) { return backend.Completion{}, false }

// Only io_uring opens files that a File owns (see fileio_linux.go), so these
// are never called here; they fail rather than touch a handle.

func closeRawFD(backend.FD) error                       { return backend.ErrUnsupported }
func seekRawFD(backend.FD, int64, int) (int64, error)   { return 0, backend.ErrUnsupported }
func syncRawFD(backend.FD) error                        { return backend.ErrUnsupported }
func truncateRawFD(backend.FD, int64) error             { return backend.ErrUnsupported }
func statRawFD(backend.FD, string) (fs.FileInfo, error) { return nil, backend.ErrUnsupported }
