package iodriver

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// wakeCounter is a backend that only counts its Wakes.
type wakeCounter struct {
	backend.Backend // nil: only Wake is called
	wakes           atomic.Int32
}

func (w *wakeCounter) Wake() error {
	w.wakes.Add(1)
	return nil
}

// An Unpark or a kick of a holder that is collecting in its look leaves
// its flag and no Wake (the holder reads the flags after the collection);
// of a holder that is not, a Wake too.
func TestUnparkWhileLookingSkipsWake(t *testing.T) {
	wc := &wakeCounter{}
	d := &Driver{}
	r := &Ring{b: wc, d: d}
	d.rings = []*Ring{r}
	r.holder.Store(0)

	r.looking.Store(true)
	d.Unpark(0)
	if !d.Kick() {
		t.Fatal("kick found no holder")
	}
	if n := wc.wakes.Load(); n != 0 {
		t.Fatalf("%d Wakes of a holder collecting in its look, want 0", n)
	}
	if !r.unparked.Load() || !r.kicked.Load() {
		t.Fatalf("unparked %v, kicked %v: want both set for the look to see", r.unparked.Load(), r.kicked.Load())
	}

	r.looking.Store(false)
	r.unparked.Store(false)
	r.kicked.Store(false)
	d.Unpark(0)
	d.Kick()
	if n := wc.wakes.Load(); n != 2 {
		t.Fatalf("%d Wakes of a sleeping holder, want 2 (Unpark, kick)", n)
	}
	d.Unpark(1) // not the holder: nothing
	if n := wc.wakes.Load(); n != 2 {
		t.Fatalf("Unpark of a worker that holds no ring woke the ring (%d Wakes)", n)
	}
}

// A worker parking beside a holder that sleeps without a limit keeps its
// own timeout: Covers reports false and wakes nobody (a kick cost the
// holder a wake at every such park). A holder that wakes in time covers.
func TestCoversKeepsTimeoutWithoutKick(t *testing.T) {
	wc := &wakeCounter{}
	d := &Driver{}
	r := &Ring{b: wc, d: d}
	d.rings = []*Ring{r}
	r.holder.Store(0) // sleeps without a limit: wakeBy is zero

	if d.Covers(time.Minute) {
		t.Fatal("Covers: true for a holder that sleeps without a limit")
	}
	if n := wc.wakes.Load(); n != 0 || r.kicked.Load() {
		t.Fatalf("Covers woke the holder (%d Wakes, kicked %v)", n, r.kicked.Load())
	}
	if !d.Covers(-1) {
		t.Fatal("Covers: false for no timeout")
	}
	d.hmu.Lock()
	r.wakeBy = time.Now().Add(time.Second)
	d.hmu.Unlock()
	if !d.Covers(time.Minute) {
		t.Fatal("Covers: false beside a holder that wakes sooner")
	}
	if d.Covers(time.Millisecond) {
		t.Fatal("Covers: true beside a holder that wakes later")
	}
	if n := wc.wakes.Load(); n != 0 {
		t.Fatalf("Covers woke the holder %d times", n)
	}
}
