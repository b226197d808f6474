package blitz_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/backend"
)

// TestBigLenFileWrite: File.Write of 4 GiB + 16 bytes to a file writes
// them all, in order, rather than 16 bytes and io.ErrShortWrite. It writes
// 4 GiB to disk on each backend (the file is removed at once), so it does
// not run with -short, nor where the temporary directory has less than
// twice that free.
func TestBigLenFileWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 4 GiB to disk on each backend")
	}
	dir := fsTempDir(t)
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs(dir, &st))
	if free := st.Bavail * uint64(st.Bsize); free < 2*over4G {
		t.Skipf("%s has %d bytes free, fewer than twice the %d this test writes", dir, free, over4G)
	}
	buf := bigBuf(t, over4G, true)
	// Marks where the writes would be cut: at the ends of the first
	// MaxRW-byte operation, at 4 GiB, at the end. The rest stays zero,
	// and untouched.
	marks := map[int64]byte{0: 1, backend.MaxRW - 1: 2, backend.MaxRW: 3, int64(fourGiB) - 1: 4, int64(fourGiB): 5, int64(over4G) - 1: 6}
	for off, b := range marks {
		buf[off] = b
	}
	forEachForcedBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		name := filepath.Join(dir, "big-"+cfg.Backend)
		f, err := awaitOpen(t, rt, blitz.Create(name))
		require.NoError(t, err)
		defer os.Remove(name)
		start := time.Now()
		n, err := awaitLong(t, rt, f.Write(buf))
		el := time.Since(start)
		require.NoError(t, err)
		require.Equal(t, len(buf), n)
		_, err = awaitClose(t, rt, f.Close())
		require.NoError(t, err)
		t.Logf("File.Write of %d bytes on %s: %v (%.0f MB/s)", len(buf), cfg.Backend, el, float64(len(buf))/el.Seconds()/1e6)

		osf, err := os.Open(name)
		require.NoError(t, err)
		defer osf.Close()
		fi, err := osf.Stat()
		require.NoError(t, err)
		require.Equal(t, int64(len(buf)), fi.Size())
		one := make([]byte, 1)
		for off, want := range marks {
			_, err := osf.ReadAt(one, off)
			require.NoError(t, err)
			assert.Equal(t, want, one[0], "byte at %d", off)
		}
		page := make([]byte, 4096)
		_, err = osf.ReadAt(page, 3<<30)
		require.NoError(t, err)
		assert.Equal(t, make([]byte, 4096), page, "a page between the marks")
	})
}
