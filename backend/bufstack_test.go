package backend

import (
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// releaseLog records the ranges a BufferStack releases, as buffer ids of
// one stack (fresh chunks included, logged apart).
type releaseLog struct {
	mu     sync.Mutex
	s      *BufferStack
	fresh  int      // chunks released as they were made
	ids    []uint16 // buffers released by TrimIdle, in order
	calls  int      // TrimIdle's release calls
	size   int
	byAddr map[uintptr]uint16 // a buffer's first byte: its id
}

func newLoggedStack(t *testing.T, count, size int) (*BufferStack, *releaseLog, *atomic.Bool) {
	t.Helper()
	var pending atomic.Bool
	log := &releaseLog{size: size, byAddr: make(map[uintptr]uint16)}
	s := NewBufferStack(count, size, &pending, log.release)
	log.s = s
	return s, log, &pending
}

// release is the stack's release function: a chunk not yet seen by a
// Buffer call is fresh; otherwise every buffer in the range is logged.
func (l *releaseLog) release(b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	first, ok := l.byAddr[start]
	if !ok {
		l.fresh++
		return
	}
	l.calls++
	for i := range len(b) / l.size {
		l.ids = append(l.ids, first+uint16(i))
	}
}

// take takes n buffers and writes each whole (byte(id)|1), as reads do.
func (l *releaseLog) take(t *testing.T, n int) []uint16 {
	t.Helper()
	ids := make([]uint16, 0, n)
	for range n {
		id, ok := l.s.Take()
		if !ok {
			t.Fatal("the stack ran out of buffers")
		}
		b := l.s.Buffer(id)
		l.mu.Lock()
		l.byAddr[uintptr(unsafe.Pointer(&b[0]))] = id
		l.mu.Unlock()
		for i := range b {
			b[i] = byte(id) | 1
		}
		ids = append(ids, id)
	}
	return ids
}

// burst takes n buffers at once and gives them all back.
func (l *releaseLog) burst(t *testing.T, n int) []uint16 {
	t.Helper()
	ids := l.take(t, n)
	for _, id := range ids {
		if !l.s.Put(id) {
			t.Fatalf("buffer %d was not held", id)
		}
	}
	return ids
}

func (l *releaseLog) released() []uint16 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(slices.Values(l.ids))
}

func TestBufferStackTakeLowestFirst(t *testing.T) {
	s, log, _ := newLoggedStack(t, 8, 32)
	if s.Count() != 8 || s.Buffer(8) != nil || len(s.Buffer(7)) != 32 {
		t.Fatalf("Count %d, Buffer(8) %v, len(Buffer(7)) %d", s.Count(), s.Buffer(8), len(s.Buffer(7)))
	}
	ids := log.take(t, 8)
	if !slices.Equal(ids, []uint16{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("taken in order %v, want the lowest id first", ids)
	}
	if _, ok := s.Take(); ok {
		t.Fatal("a ninth buffer was taken from a stack of 8")
	}
	if !s.Put(3) || s.Put(3) {
		t.Fatal("Put of a held buffer failed, or a second Put of it succeeded")
	}
	if s.Put(8) || s.Put(65535) {
		t.Fatal("Put of an id beyond the stack succeeded")
	}
	if id, ok := s.Take(); !ok || id != 3 {
		t.Fatalf("Take after Put(3) = %d, %v", id, ok)
	}
}

// A burst's buffers are given back after one idle window, all but the
// BufferTrimKeep on top, in one release per run of neighbours; the
// pending flag says so from the burst on.
func TestBufferStackTrimAfterBurst(t *testing.T) {
	s, log, pending := newLoggedStack(t, 256, 64)
	log.burst(t, 200)
	if !pending.Load() {
		t.Fatal("pending flag not set by a burst of 200")
	}
	t0 := time.Now()
	if d := s.TrimIdle(t0); d != BufferTrimAfter {
		t.Fatalf("first call: wait %v, want %v", d, BufferTrimAfter)
	}
	if d := s.TrimIdle(t0.Add(BufferTrimAfter / 2)); d != BufferTrimAfter/2 {
		t.Fatalf("within the window: wait %v", d)
	}
	if got := log.released(); len(got) != 0 {
		t.Fatalf("released %v before the window ended", got)
	}
	if d := s.TrimIdle(t0.Add(BufferTrimAfter)); d != 0 {
		t.Fatalf("after the window: wait %v, want 0", d)
	}
	free, clean := s.FreeIDs()
	if clean != 256-BufferTrimKeep { // the 56 never taken, and those released
		t.Fatalf("clean %d, want %d", clean, 256-BufferTrimKeep)
	}
	got := log.released()
	want := slices.Sorted(slices.Values(free[56 : 256-BufferTrimKeep])) // 56: never taken
	if !slices.Equal(got, want) {
		t.Fatalf("released %v\nwant %v", got, want)
	}
	// The released ids, 0 to 183, lie in chunks 0 (to 63), 1 (64-127) and
	// 2 (128-255): three runs, one call each.
	if log.calls != 3 {
		t.Fatalf("%d release calls, want 3 (one per chunk's run)", log.calls)
	}
	for _, id := range free[256-BufferTrimKeep:] {
		if slices.Contains(got, id) {
			t.Fatalf("kept buffer %d was released", id)
		}
	}
}

// Buffers taken during a window stay; only those below the lowest point
// the stack reached go back. When the load stops, all but BufferTrimKeep
// go back in the next window.
func TestBufferStackKeepsWorkingSet(t *testing.T) {
	s, log, _ := newLoggedStack(t, 256, 64)
	log.burst(t, 200)
	t0 := time.Now()
	s.TrimIdle(t0)
	var used []uint16
	for range 5 {
		used = log.burst(t, 40)
	}
	if d := s.TrimIdle(t0.Add(BufferTrimAfter)); d != BufferTrimAfter {
		t.Fatalf("wait %v, want a new window", d)
	}
	for _, id := range used {
		if slices.Contains(log.released(), id) {
			t.Fatalf("buffer %d of the working set was released", id)
		}
	}
	if n := len(log.released()); n != 160 {
		t.Fatalf("%d buffers released, want the 160 below the working set", n)
	}
	if d := s.TrimIdle(t0.Add(2 * BufferTrimAfter)); d != 0 {
		t.Fatalf("idle window: wait %v, want 0", d)
	}
	if n := len(log.released()); n != 200-BufferTrimKeep {
		t.Fatalf("%d buffers released after the idle window, want %d", n, 200-BufferTrimKeep)
	}
}

// A stack that never held more than BufferTrimKeep free buffers with
// pages neither sets the flag nor asks to be called.
func TestBufferStackSmallLoadNeverTrims(t *testing.T) {
	s, log, pending := newLoggedStack(t, 64, 64)
	for range 10 {
		log.burst(t, BufferTrimKeep)
	}
	if pending.Load() {
		t.Fatal("pending flag set by bursts of BufferTrimKeep")
	}
	if d := s.TrimIdle(time.Now()); d != 0 {
		t.Fatalf("wait %v, want 0", d)
	}
}

// Each chunk is released as it is made, before its buffers are handed
// out: the Go heap may make it of memory it wrote before.
func TestBufferStackFreshChunks(t *testing.T) {
	s, log, _ := newLoggedStack(t, 256, 64)
	log.take(t, 129) // chunks 0, 1 and 2
	if log.fresh != 3 {
		t.Fatalf("%d fresh chunks released, want 3", log.fresh)
	}
	s.Buffer(255) // chunk 2 again: made once
	if log.fresh != 3 {
		t.Fatalf("%d fresh chunks released after a second look at chunk 2", log.fresh)
	}
}

// A model check: random takes and puts, with trims at random times,
// against a plain set of held ids. No held buffer is ever released, no
// buffer is handed out twice, and what a holder wrote stays.
func TestBufferStackModel(t *testing.T) {
	rounds := 20000
	if testing.Short() {
		rounds = 3000
	}
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 11))
		s, log, _ := newLoggedStack(t, 128, 16)
		held := map[uint16]bool{}
		now := time.Now()
		for range rounds {
			switch op := rng.IntN(10); {
			case op < 5:
				id, ok := s.Take()
				if ok != (len(held) < 128) {
					t.Fatalf("seed %d: Take ok=%v with %d held", seed, ok, len(held))
				}
				if !ok {
					continue
				}
				if held[id] {
					t.Fatalf("seed %d: buffer %d handed out twice", seed, id)
				}
				held[id] = true
				b := s.Buffer(id)
				log.mu.Lock()
				log.byAddr[uintptr(unsafe.Pointer(&b[0]))] = id
				log.mu.Unlock()
				b[0] = byte(id) | 1
			case op < 9:
				for id := range held {
					if s.Buffer(id)[0] != byte(id)|1 {
						t.Fatalf("seed %d: held buffer %d lost its contents", seed, id)
					}
					delete(held, id)
					if !s.Put(id) {
						t.Fatalf("seed %d: Put(%d) of a held buffer failed", seed, id)
					}
					break
				}
			default:
				log.mu.Lock()
				log.ids = log.ids[:0]
				log.mu.Unlock()
				now = now.Add(time.Duration(rng.IntN(2)) * BufferTrimAfter)
				s.TrimIdle(now)
				for _, id := range log.released() {
					if held[id] {
						t.Fatalf("seed %d: held buffer %d released", seed, id)
					}
				}
			}
		}
	}
}
