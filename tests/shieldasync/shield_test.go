package shieldasync

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newRuntime(t *testing.T) *blitz.Runtime {
	t.Helper()
	rt, err := blitz.New(blitz.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rt.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return rt
}

// TestCancelWaitsForTheShieldedCommit: a cancel during a shielded commit
// lets that commit end and starts no other; without the shield, the
// cancel cuts the commit in its middle.
func TestCancelWaitsForTheShieldedCommit(t *testing.T) {
	for _, tc := range []struct {
		shielded bool
		want     []string
	}{
		{true, []string{"a begin", "a end"}},
		{false, []string{"a begin"}},
	} {
		rt := newRuntime(t)
		j := newJournal()
		h := blitz.SpawnOn(rt.Handle(), saveAllAsync(j, []string{"a", "b", "c"}, 50*time.Millisecond, tc.shielded))
		<-j.begun
		h.Cancel()
		if _, err := h.Wait(context.Background()); !errors.Is(err, blitz.ErrCancelled) {
			t.Fatalf("shielded=%v: Wait: %v; want ErrCancelled", tc.shielded, err)
		}
		if got := j.snapshot(); !slices.Equal(got, tc.want) {
			t.Fatalf("shielded=%v: journal %q; want %q", tc.shielded, got, tc.want)
		}
	}
}

// TestShutdownWaitsForTheShieldedCommit: the runtime's Shutdown lets the
// shielded commit in progress end, and reports nothing cut.
func TestShutdownWaitsForTheShieldedCommit(t *testing.T) {
	rt, err := blitz.New(blitz.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	j := newJournal()
	h := blitz.SpawnOn(rt.Handle(), saveAllAsync(j, []string{"a", "b"}, 50*time.Millisecond, true))
	<-j.begun
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if got, want := j.snapshot(), []string{"a begin", "a end"}; !slices.Equal(got, want) {
		t.Fatalf("journal %q; want %q", got, want)
	}
	if _, err := h.Wait(ctx); !errors.Is(err, blitz.ErrCancelled) {
		t.Fatalf("Wait: %v; want ErrCancelled", err)
	}
	if n := rt.Stats().ShieldsCut; n != 0 {
		t.Fatalf("ShieldsCut %d; want 0", n)
	}
}
