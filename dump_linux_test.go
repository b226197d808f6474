//go:build linux

package blitz_test

import (
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
)

// TestDumpOnSignal: the dump is written each time the signal comes, and
// not after stop.
func TestDumpOnSignal(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	h := blitz.SpawnOn(rt.Handle(), blitz.Named("signalled", blitz.Sleep(time.Hour)))
	defer h.Cancel()
	waitIdle(t, rt, 1)
	var buf syncBuffer
	stop := rt.DumpOnSignal(syscall.SIGUSR2, &buf)
	defer stop()
	stanza := regexp.MustCompile(`1 task: idle, waiting on Sleep until [0-9:.]+, "signalled"`)
	for want := 1; want <= 2; want++ {
		require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGUSR2))
		deadline := time.Now().Add(10 * time.Second)
		for strings.Count(buf.String(), "blitz tasks: ") < want {
			if time.Now().After(deadline) {
				t.Fatalf("no dump %d within 10s after the signal; written: %q", want, buf.String())
			}
			time.Sleep(time.Millisecond)
		}
		require.Len(t, stanza.FindAllString(buf.String(), -1), want, "dumps: %q", buf.String())
	}
	stop()
	stop() // idempotent
}
