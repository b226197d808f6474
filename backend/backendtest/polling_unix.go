//go:build unix

package backendtest

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// poller waits for a backend's PollFD in Go's own poller, as the runtime
// does: a non-blocking duplicate of the descriptor in an os.File.
type poller struct {
	f  *os.File
	rc syscall.RawConn
}

// newPoller registers fd with Go's poller, or fails the test.
func newPoller(t *testing.T, fd backend.FD) *poller {
	t.Helper()
	dup, err := syscall.Dup(int(fd))
	if err != nil {
		t.Fatalf("dup: %v", err)
	}
	if err := syscall.SetNonblock(dup, true); err != nil {
		syscall.Close(dup)
		t.Fatalf("set non-blocking: %v", err)
	}
	f := os.NewFile(uintptr(dup), "polled")
	t.Cleanup(func() { f.Close() })
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		t.Fatalf("Go's poller refused the descriptor: %v", err)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatalf("SyscallConn: %v", err)
	}
	return &poller{f: f, rc: rc}
}

// await calls look once Go's poller watches the descriptor, and again after
// each readiness, until look reports true or d passes; it reports whether
// look did. This is the protocol of backend.Pollable: look (a Wait(out, 0))
// after registering interest, so that no readiness edge is missed.
func (p *poller) await(t *testing.T, d time.Duration, look func() bool) bool {
	t.Helper()
	if err := p.f.SetReadDeadline(time.Now().Add(d)); err != nil {
		t.Fatalf("SetReadDeadline: %v", err)
	}
	met := false
	err := p.rc.Read(func(uintptr) bool {
		met = look()
		return met
	})
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("waiting in Go's poller: %v", err)
	}
	return met
}
