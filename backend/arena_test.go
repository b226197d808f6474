package backend_test

import (
	"sync"
	"testing"

	"github.com/blitz-go/blitz/backend"
)

// TestBufferArenaLayout: every buffer is its own size bytes, distinct from
// every other (writing one changes no other), chunks are made only for the
// buffers asked for, and a doubling range is one contiguous block.
func TestBufferArenaLayout(t *testing.T) {
	for _, count := range []int{1, 2, 63, 64, 65, 1024, 32768} {
		const size = 16
		a := backend.NewBufferArena(count, size)
		if a.Made() != 0 {
			t.Fatalf("count %d: %d bytes made before any buffer was asked for", count, a.Made())
		}
		if got := a.Buffer(0); len(got) != size || cap(got) != size {
			t.Fatalf("count %d: buffer 0 has len %d cap %d", count, len(got), cap(got))
		}
		if want := min(count, 64) * size; a.Made() != want {
			t.Fatalf("count %d: buffer 0 made %d bytes, want chunk 0's %d", count, a.Made(), want)
		}
		for id := range count {
			b := a.Buffer(id)
			if len(b) != size || cap(b) != size {
				t.Fatalf("count %d: buffer %d has len %d cap %d", count, id, len(b), cap(b))
			}
			b[0], b[size-1] = byte(id), byte(id>>8)
		}
		for id := range count {
			if b := a.Buffer(id); b[0] != byte(id) || b[size-1] != byte(id>>8) {
				t.Fatalf("count %d: buffer %d overwritten by another", count, id)
			}
		}
		if a.Made() != count*size {
			t.Fatalf("count %d: %d bytes made for every buffer, want %d", count, a.Made(), count*size)
		}
		if a.Buffer(-1) != nil || a.Buffer(count) != nil {
			t.Fatalf("count %d: an id out of range gave a buffer", count)
		}
	}
}

// TestBufferArenaRange: the ranges a doubling gives out (0-63, 64-127,
// 128-255, ...) are contiguous and hold the same bytes as their buffers; a
// range over two chunks, or out of range, is nil.
func TestBufferArenaRange(t *testing.T) {
	const count, size = 1024, 8
	a := backend.NewBufferArena(count, size)
	for _, rg := range [][2]int{{0, 64}, {64, 64}, {128, 128}, {256, 256}, {512, 512}} {
		first, n := rg[0], rg[1]
		r := a.Range(first, n)
		if len(r) != n*size {
			t.Fatalf("Range(%d, %d) has %d bytes", first, n, len(r))
		}
		for i := range n {
			a.Buffer(first + i)[0] = byte(first + i)
			if r[i*size] != byte(first+i) {
				t.Fatalf("Range(%d, %d): buffer %d is not at offset %d", first, n, first+i, i*size)
			}
		}
	}
	if a.Range(60, 8) != nil || a.Range(1000, 30) != nil || a.Range(0, 0) != nil || a.Range(-1, 1) != nil {
		t.Fatal("a range over two chunks or out of bounds gave memory")
	}
	if one := a.Range(700, 1); len(one) != size || &one[0] != &a.Buffer(700)[0] {
		t.Fatal("Range of one buffer is not that buffer")
	}
}

// TestBufferArenaConcurrent: goroutines asking for buffers of the same
// chunks at once get one chunk each (the same memory for the same id).
func TestBufferArenaConcurrent(t *testing.T) {
	const count, size = 4096, 4
	a := backend.NewBufferArena(count, size)
	var wg sync.WaitGroup
	got := make([][]*byte, 4)
	for g := range got {
		got[g] = make([]*byte, count)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range count {
				got[g][(id*7+g)%count] = &a.Buffer((id*7 + g) % count)[0]
			}
		}()
	}
	wg.Wait()
	for id := range count {
		for g := 1; g < len(got); g++ {
			if got[g][id] != got[0][id] {
				t.Fatalf("buffer %d: two goroutines got different memory", id)
			}
		}
	}
	if a.Made() != count*size {
		t.Fatalf("%d bytes made, want %d", a.Made(), count*size)
	}
}

// TestBufferArenaContiguousAndFresh: Contiguous gives the memory of made
// buffers in one chunk and never makes a chunk; the fresh-chunk hook sees
// each chunk once, as it is made, before any buffer of it is handed out.
func TestBufferArenaContiguousAndFresh(t *testing.T) {
	const count, size = 256, 8
	a := backend.NewBufferArena(count, size)
	var seen []int
	a.SetFreshChunk(func(c []byte) { seen = append(seen, len(c)) })
	if a.Contiguous(0, 1) != nil || a.Made() != 0 {
		t.Fatal("Contiguous of an unmade chunk gave memory or made it")
	}
	a.Buffer(70)[0] = 70 // makes chunk 1 (ids 64-127)
	a.Buffer(100)[0] = 100
	if len(seen) != 1 || seen[0] != 64*size {
		t.Fatalf("fresh chunks seen: %v, want one of %d bytes", seen, 64*size)
	}
	r := a.Contiguous(64, 64)
	if len(r) != 64*size || r[6*size] != 70 || r[36*size] != 100 {
		t.Fatal("Contiguous(64, 64) is not chunk 1's buffers in order")
	}
	if a.Contiguous(60, 8) != nil || a.Contiguous(120, 10) != nil || a.Contiguous(64, 0) != nil || a.Contiguous(250, 7) != nil {
		t.Fatal("Contiguous over two chunks, an unmade one or out of bounds gave memory")
	}
	a.Buffer(70)
	a.Range(128, 128)
	if len(seen) != 2 || seen[1] != 128*size {
		t.Fatalf("fresh chunks seen: %v, want a second of %d bytes", seen, 128*size)
	}
}
