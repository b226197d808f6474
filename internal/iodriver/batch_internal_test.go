package iodriver

import (
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
)

// readyBackend is a backend whose Wait hands out pending completions of op,
// as many as fit.
type readyBackend struct {
	backend.Backend // nil: only Wait is called
	op              *backend.Op
	pending         int
}

func (b *readyBackend) Caps() backend.Caps { return backend.CapNativeCompletions }

func (b *readyBackend) Wait(out []backend.Completion, _ time.Duration) (int, error) {
	n := min(len(out), b.pending)
	for i := range n {
		out[i] = backend.Completion{Op: b.op}
	}
	b.pending -= n
	return n, nil
}

// countWaiter counts the completions delivered to it.
type countWaiter struct{ n int }

func (w *countWaiter) Complete(*future.Context, *backend.Completion) { w.n++ }

// A ring's batch starts small, doubles each time a Wait fills it, up to
// completionBatch, and never shrinks; no completion is lost meanwhile.
func TestCollectBatchGrows(t *testing.T) {
	w := &countWaiter{}
	b := &readyBackend{op: &backend.Op{Kind: backend.KindRead, Owner: w}}
	d := New([]backend.Backend{b}, 1, 0, 0)
	r := d.rings[0]
	if len(r.out) != firstBatch {
		t.Fatalf("a new ring's batch holds %d completions, want %d", len(r.out), firstBatch)
	}
	var cx future.Context
	const total = 5000
	b.pending = total
	r.inflight.Store(total)
	sizes := []int{len(r.out)}
	for {
		n, full := d.collect(r, &cx, 0)
		if n == 0 {
			break
		}
		if full != (n == sizes[len(sizes)-1]) {
			t.Fatalf("collect of %d into a batch of %d reported full %v", n, sizes[len(sizes)-1], full)
		}
		sizes = append(sizes, len(r.out))
	}
	if w.n != total {
		t.Fatalf("%d completions delivered, want %d", w.n, total)
	}
	if got := len(r.out); got != completionBatch {
		t.Fatalf("batch of %d after full Waits, want %d (sizes %v)", got, completionBatch, sizes)
	}
	for i := 1; i < len(sizes); i++ {
		if sizes[i] < sizes[i-1] || sizes[i] > 2*sizes[i-1] {
			t.Fatalf("batch sizes %v: each at most doubles and none shrinks", sizes)
		}
	}
	// A quiet Wait keeps the full batch.
	b.pending = 1
	r.inflight.Store(1)
	d.collect(r, &cx, 0)
	if len(r.out) != completionBatch {
		t.Fatalf("the batch shrank to %d", len(r.out))
	}
}

// BenchmarkCollectFullBatch is the cost per completion of a busy ring's
// collect loop: every Wait fills the batch.
func BenchmarkCollectFullBatch(b *testing.B) {
	w := &countWaiter{}
	rb := &readyBackend{op: &backend.Op{Kind: backend.KindRead, Owner: w}}
	d := New([]backend.Backend{rb}, 1, 0, 0)
	r := d.rings[0]
	var cx future.Context
	rb.pending, _ = 1<<30, r.inflight.Add(1<<30)
	for range 8 { // the warm-up grows the batch to its largest
		d.collect(r, &cx, 0)
	}
	b.ResetTimer()
	for done := 0; done < b.N; {
		n, _ := d.collect(r, &cx, 0)
		done += n
	}
}
