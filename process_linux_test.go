package blitz_test

import (
	"os"
	"testing"

	"github.com/blitz-go/blitz"
	"golang.org/x/sys/unix"
)

// TestProcessWaitPollsAPidfdOnLinux checks that with an I/O backend the
// wait takes the pidfd path (and that without one it does not), on each
// Linux backend.
func TestProcessWaitPollsAPidfdOnLinux(t *testing.T) {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		t.Skipf("pidfd_open refused (%v): waits use the blocking pool", err)
	}
	_ = unix.Close(fd)
	for _, backend := range []string{blitz.BackendURing, blitz.BackendEpoll, blitz.BackendPoll, blitz.BackendNone} {
		t.Run("backend="+backend, func(t *testing.T) {
			rt, err := blitz.New(blitz.Config{Workers: 2, Backend: backend})
			if err != nil {
				t.Skipf("backend %s: %v", backend, err)
			}
			_ = rt.Shutdown(testCtx(t))
			rt = newRuntime(t, blitz.Config{Workers: 2, Backend: backend})
			before := blitz.PidfdWaits()
			for range 3 {
				c := spawnChild(t, rt, blitz.Command("sh", "-c", "exit 5"))
				st, err := blockResult(t, rt, c.Wait())
				if err != nil || st.Code() != 5 {
					t.Fatalf("wait: %v, %v; want exit status 5", st, err)
				}
			}
			got := blitz.PidfdWaits() - before
			if backend == blitz.BackendNone && got != 0 {
				t.Errorf("%d waits through a pidfd without a backend", got)
			}
			if backend != blitz.BackendNone && got != 3 {
				t.Errorf("%d of 3 waits went through the pidfd", got)
			}
		})
	}
}
