package blitz_test

import (
	"errors"
	"io"
	"math"
	"os"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNetConnFarDeadline: a NetConn deadline far in the future (up to the
// latest a time.Time holds) is no deadline yet: a Read under it blocks until
// data comes, and moving the deadline to now ends it with
// os.ErrDeadlineExceeded.
func TestNetConnFarDeadline(t *testing.T) {
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		cfg.Workers = 2
		rt := newRuntime(t, cfg)
		a, b, err := netPipe(t, rt)
		require.NoError(t, err)
		defer a.Close()
		defer b.Close()
		for name, at := range map[string]time.Time{
			"year 9999":    time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC),
			"Unix(1<<62)":  time.Unix(1<<62, 0),
			"now+MaxInt64": time.Now().Add(math.MaxInt64),
			"latest":       time.Unix(math.MaxInt64-62135596800, 999_999_999),
		} {
			require.NoError(t, a.SetDeadline(at))
			// Data flows under the far deadline.
			_, err := b.Write([]byte("x"))
			require.NoError(t, err)
			buf := make([]byte, 1)
			_, err = io.ReadFull(a, buf)
			require.NoError(t, err, name)
			_, err = a.Write([]byte("y"))
			require.NoError(t, err, name)
			_, err = io.ReadFull(b, buf)
			require.NoError(t, err, name)

			// A Read with nothing to read stays blocked...
			done := make(chan error, 1)
			go func() {
				_, err := a.Read(buf)
				done <- err
			}()
			select {
			case err := <-done:
				t.Fatalf("%s: Read under a far deadline returned at once: %v", name, err)
			case <-time.After(30 * time.Millisecond):
			}
			// ...until the deadline moves to now.
			require.NoError(t, a.SetReadDeadline(time.Now()))
			select {
			case err := <-done:
				assert.True(t, errors.Is(err, os.ErrDeadlineExceeded), "%s: got %v", name, err)
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: Read not ended by a deadline moved to now", name)
			}
		}
	})
}
