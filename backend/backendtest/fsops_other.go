//go:build !unix

package backendtest

import (
	"errors"
	"os"
	"testing"

	"github.com/blitz-go/blitz/backend"
)

// mkfifo: no named pipes in the file system here.
func mkfifo(string) error { return errors.ErrUnsupported }

// checkStatSys has nothing beyond FileInfo to compare here.
func checkStatSys(*testing.T, string, *backend.FileStat, os.FileInfo) {}
