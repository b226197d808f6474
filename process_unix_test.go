//go:build unix

package blitz_test

import (
	"syscall"
	"testing"

	"github.com/blitz-go/blitz"
)

func TestProcessKilledChildReportsTheSignal(t *testing.T) {
	rt := newRuntime(t, blitz.Config{Workers: 1})
	c := spawnChild(t, rt, blitz.Command("sleep", "10"))
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	st, err := blockResult(t, rt, c.Wait())
	if err != nil {
		t.Fatal(err)
	}
	sig, ok := st.Signal()
	if !ok || sig != syscall.SIGKILL || st.Success() || st.Code() != -1 {
		t.Errorf("status %v: Signal() = %v, %v; Code %d; want SIGKILL, code -1", st, sig, ok, st.Code())
	}
	if st.String() != "signal: killed" {
		t.Errorf("String() = %q", st.String())
	}
	if err := c.Kill(); err != nil {
		t.Errorf("Kill of a dead child: %v", err)
	}
}
