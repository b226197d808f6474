//go:build !linux

package runtime

import "github.com/blitz-go/blitz/backend"

// noWaitState is empty where there is no io_uring: see fileio_linux.go.
type noWaitState struct{}

// tryNoWait never reads without the ring here (there is no ring).
func (f *FileIOFuture) tryNoWait() (backend.Completion, bool) { return backend.Completion{}, false }
