package blitz_test

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAcceptSurvivesEMFILE runs in a child process with a low descriptor
// limit: three clients wait in the backlog while the process has no
// descriptor left, so every accept fails with EMFILE. Accept must back off
// (not spin, not fail), and take all three once descriptors are freed.
func TestAcceptSurvivesEMFILE(t *testing.T) {
	if os.Getenv("BLITZ_EMFILE_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAcceptSurvivesEMFILE$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "BLITZ_EMFILE_CHILD=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "child:\n%s", out)
		require.Contains(t, string(out), "--- PASS: TestAcceptSurvivesEMFILE")
		return
	}
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	lim.Cur = 512
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	forEachBackend(t, func(t *testing.T, cfg blitz.Config) {
		rt := newRuntime(t, cfg)
		l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		var clients []net.Conn
		for range 3 {
			c, err := net.Dial("tcp", l.AddrPort().String())
			require.NoError(t, err)
			clients = append(clients, c)
		}
		defer func() {
			for _, c := range clients {
				c.Close()
			}
		}()
		// Use up every descriptor.
		var fillers []*os.File
		for {
			f, err := os.Open(os.DevNull)
			if err != nil {
				require.True(t, errors.Is(err, syscall.EMFILE), "%v", err)
				break
			}
			fillers = append(fillers, f)
		}
		acc := &acceptN{l: l, n: 3}
		h := blitz.SpawnOn(rt.Handle(), future.Future[int](acc))
		deadline := time.Now().Add(10 * time.Second)
		for l.Backoffs() < 2 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		backoffs := l.Backoffs()
		assert.GreaterOrEqual(t, backoffs, uint64(2), "accept backed off while out of descriptors")
		time.Sleep(50 * time.Millisecond)
		assert.Less(t, l.Backoffs()-backoffs, uint64(20), "the backoff grows: no spinning")
		for _, f := range fillers {
			f.Close()
		}
		n, err := h.Wait(testCtx(t))
		require.NoError(t, err)
		assert.Equal(t, 3, n, "every waiting client is accepted once descriptors are back")
	})
}

// acceptN accepts n connections, closing each.
type acceptN struct {
	l       *blitz.TCPListener
	n, got  int
	acc     *blitz.AcceptFuture[*blitz.TCPStream]
	started bool
}

func (a *acceptN) Poll(cx *future.Context) (int, bool) {
	for a.got < a.n {
		if !a.started {
			a.acc = a.l.Accept()
			a.started = true
		}
		r, ok := a.acc.Poll(cx)
		if !ok {
			return 0, false
		}
		a.started = false
		if r.Err != nil {
			return a.got, true
		}
		r.Value.Close()
		a.got++
	}
	return a.got, true
}
