package iodriver

import (
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
)

// trimBackend is a backend.Trimmer that records its calls and the timeouts
// its Wait is given.
type trimBackend struct {
	backend.Backend // nil: only Caps, TrimIdle and Wait are called
	again           time.Duration
	trims           int
	waits           []time.Duration
}

func (b *trimBackend) Caps() backend.Caps { return backend.CapNativeCompletions }

func (b *trimBackend) TrimIdle() time.Duration { b.trims++; return b.again }

func (b *trimBackend) Wait(_ []backend.Completion, timeout time.Duration) (int, error) {
	b.waits = append(b.waits, timeout)
	return 0, nil
}

// A worker about to sleep in its ring's Wait lets the backend trim first,
// and sleeps no longer than the backend asks to be called again; with
// nothing waiting to be trimmed, its timeout is unchanged.
func TestBlockTrimsBeforeItSleeps(t *testing.T) {
	b := &trimBackend{}
	d := New([]backend.Backend{b}, 1, 0, 0)
	r := d.rings[0]
	if r.poller != nil {
		t.Skip("the ring waits in Go's poller")
	}
	var cx future.Context
	cases := []struct {
		again, timeout, want time.Duration
	}{
		{0, -1, -1},
		{0, time.Second, time.Second},
		{50 * time.Millisecond, -1, 50 * time.Millisecond},
		{50 * time.Millisecond, time.Second, 50 * time.Millisecond},
		{2 * time.Second, time.Second, time.Second},
	}
	for i, c := range cases {
		b.again = c.again
		d.Block(&cx, c.timeout)
		if b.trims != i+1 {
			t.Fatalf("case %d: TrimIdle called %d times in %d Blocks", i, b.trims, i+1)
		}
		if got := b.waits[len(b.waits)-1]; got != c.want {
			t.Fatalf("case %d: Wait given %v, want %v", i, got, c.want)
		}
	}
}
