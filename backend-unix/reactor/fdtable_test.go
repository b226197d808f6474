//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package reactor

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
)

// TestFDStateSize: the per-descriptor record fits Go's 32-byte size class
// (an idle connection pays for one), its queues apart (made only while an
// op waits).
func TestFDStateSize(t *testing.T) {
	if n := unsafe.Sizeof(fdState{}); n > 32 {
		t.Fatalf("fdState is %d bytes, want <= 32", n)
	}
	if n := unsafe.Sizeof(fdQueues{}); n > 24 {
		t.Fatalf("fdQueues is %d bytes, want <= 24", n)
	}
	// Every number of a chunk costs its slot in every ring's table.
	if n := unsafe.Sizeof(fdChunk{}); n > 4*chunkSize {
		t.Fatalf("fdChunk is %d bytes, want <= %d (4 a descriptor number)", n, 4*chunkSize)
	}
}

// TestOpQueueModel drives an opQueue with random pushes and removals (from
// the head, the tail and the middle) and checks it against a slice.
func TestOpQueueModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ops := make([]backend.Op, 16)
	var q opQueue
	var model []*backend.Op
	steps := 20000
	if testing.Short() {
		steps = 2000
	}
	for step := range steps {
		op := &ops[rng.IntN(len(ops))]
		if i := slices.Index(model, op); i >= 0 {
			if !q.contains(op) {
				t.Fatalf("step %d: queued op not contained", step)
			}
			q.remove(op)
			model = slices.Delete(model, i, i+1)
		} else {
			if q.contains(op) {
				t.Fatalf("step %d: unqueued op contained", step)
			}
			q.push(op)
			model = append(model, op)
		}
		if op.Internal.Prev == nil && slices.Contains(model, op) {
			t.Fatalf("step %d: queued op with nil Prev", step)
		}
		var got []*backend.Op
		for o := q.head; o != nil; o = o.Internal.Next {
			got = append(got, o)
			if len(got) > len(ops) {
				t.Fatalf("step %d: cycle in Next", step)
			}
		}
		if !slices.Equal(got, model) {
			t.Fatalf("step %d: queue %v, want %v", step, got, model)
		}
		if q.empty() != (len(model) == 0) {
			t.Fatalf("step %d: empty() = %v with %d queued", step, q.empty(), len(model))
		}
		if len(model) > 0 && q.head.Internal.Prev != model[len(model)-1] {
			t.Fatalf("step %d: head's Prev is not the tail", step)
		}
	}
}

// TestFDTable: records across chunk boundaries and beyond the top level
// (the map) are made once, found again, and listed by each; concurrent
// getters of one descriptor get the same record.
func TestFDTable(t *testing.T) {
	var tab fdTable
	fds := []int{0, 1, chunkSize - 1, chunkSize, chunkSize + 1, 5*chunkSize + 3,
		topSize*chunkSize - 1, topSize * chunkSize, 1<<30 + 7}
	for _, fd := range fds {
		if tab.get(fd, false) != nil {
			t.Fatalf("fd %d: record before create", fd)
		}
	}
	if tab.get(-1, true) != nil {
		t.Fatal("fd -1: got a record")
	}
	recs := map[int]*fdState{}
	for _, fd := range fds {
		fs := tab.get(fd, true)
		if fs == nil {
			t.Fatalf("fd %d: no record made", fd)
		}
		recs[fd] = fs
	}
	for _, fd := range fds {
		if got := tab.get(fd, false); got != recs[fd] {
			t.Fatalf("fd %d: record changed", fd)
		}
		if got := tab.get(fd, true); got != recs[fd] {
			t.Fatalf("fd %d: create made a second record", fd)
		}
	}
	seen := map[int]bool{}
	tab.each(func(fd int, fs *fdState) {
		if recs[fd] != fs || seen[fd] {
			t.Fatalf("each: fd %d unexpected or twice", fd)
		}
		seen[fd] = true
	})
	if len(seen) != len(fds) {
		t.Fatalf("each listed %d records, want %d", len(seen), len(fds))
	}

	var wg sync.WaitGroup
	var tab2 fdTable
	got := make([][]*fdState, 4)
	for g := range got {
		wg.Go(func() {
			for fd := range 3 * chunkSize {
				got[g] = append(got[g], tab2.get(fd, true))
			}
		})
	}
	wg.Wait()
	for g := 1; g < len(got); g++ {
		if !slices.Equal(got[g], got[0]) {
			t.Fatalf("goroutine %d got other records than goroutine 0", g)
		}
	}
}
