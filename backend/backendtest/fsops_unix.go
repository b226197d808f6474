//go:build unix

package backendtest

import (
	"os"
	"syscall"
	"testing"

	"github.com/blitz-go/blitz/backend"
)

// checkStatSys compares what os.Stat's syscall.Stat_t has beyond the
// portable FileInfo: inode, device, links, owner, raw mode.
func checkStatSys(t *testing.T, what string, st *backend.FileStat, want os.FileInfo) {
	t.Helper()
	sys, ok := want.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if st.Ino != uint64(sys.Ino) || st.Dev != uint64(sys.Dev) || st.Nlink != uint32(sys.Nlink) ||
		st.UID != sys.Uid || st.GID != sys.Gid || st.Mode != uint32(sys.Mode) || st.Blocks != int64(sys.Blocks) {
		t.Errorf("%s: %+v, os.Stat has %+v", what, *st, *sys)
	}
}
