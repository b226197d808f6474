package reactor

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// The trim's constants, under the names the tests use.
const (
	trimAfter = backend.BufferTrimAfter
	trimKeep  = backend.BufferTrimKeep
)

// freeIDs is g's free stack, bottom first.
func freeIDs(g *group) []uint16 {
	ids, _ := g.FreeIDs()
	return ids
}

// cleanCount is how many free buffers at the bottom of g's stack hold no
// pages.
func cleanCount(g *group) int {
	_, clean := g.FreeIDs()
	return clean
}

// residentPages counts the pages of buf that are resident (mincore).
func residentPages(t *testing.T, buf []byte) int {
	t.Helper()
	page := unix.Getpagesize()
	start := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	if start%uintptr(page) != 0 {
		t.Fatalf("buffer at %#x is not page-aligned", start)
	}
	vec := make([]byte, (len(buf)+page-1)/page)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, start, uintptr(len(buf)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// trimGroup registers group 1 of count page-sized buffers and returns it.
func trimGroup(t *testing.T, count int) (*Reactor, *group) {
	t.Helper()
	r := New(quietPoller{})
	t.Cleanup(func() { r.Close() })
	if err := r.RegisterBufferGroup(1, count, unix.Getpagesize()); err != nil {
		t.Fatal(err)
	}
	return r, r.groups.get(1)
}

// takeN takes n buffers at once and writes each whole (byte(id)|1), as
// reads do; it returns the ids in the order taken.
func takeN(t *testing.T, g *group, n int) []uint16 {
	t.Helper()
	ids := make([]uint16, 0, n)
	for range n {
		id, ok := g.Take()
		if !ok {
			t.Fatal("group ran out of buffers")
		}
		b := g.Buffer(id)
		for i := range b {
			b[i] = byte(id) | 1
		}
		ids = append(ids, id)
	}
	return ids
}

// burst takes n buffers at once, writes each, and gives them all back, as
// a burst of reads does; it returns the ids in the order taken.
func burst(t *testing.T, g *group, n int) []uint16 {
	t.Helper()
	ids := takeN(t, g, n)
	for _, id := range ids {
		if !g.Put(id) {
			t.Fatalf("buffer %d was not held", id)
		}
	}
	return ids
}

// residentBuffers counts the buffers among ids with a resident page.
func residentBuffers(t *testing.T, g *group, ids []uint16) int {
	t.Helper()
	n := 0
	for _, id := range ids {
		if residentPages(t, g.Buffer(id)) > 0 {
			n++
		}
	}
	return n
}

// TestTrimIdleAfterBurst: the buffers of a burst stay resident until a
// whole window of trimAfter passes without them being taken; then all but
// trimKeep are given back, and the group stops asking to be called.
func TestTrimIdleAfterBurst(t *testing.T) {
	_, g := trimGroup(t, 256)
	ids := burst(t, g, 200)
	if got := residentBuffers(t, g, ids); got != 200 {
		t.Fatalf("%d of 200 buffers resident after the burst", got)
	}
	t0 := time.Now()
	if d := g.TrimIdle(t0); d != trimAfter {
		t.Fatalf("first call: wait %v, want %v (a window starts)", d, trimAfter)
	}
	if d := g.TrimIdle(t0.Add(100 * time.Millisecond)); d != trimAfter-100*time.Millisecond {
		t.Fatalf("within the window: wait %v", d)
	}
	if got := residentBuffers(t, g, ids); got != 200 {
		t.Fatalf("%d of 200 buffers resident before the window ended", got)
	}
	if d := g.TrimIdle(t0.Add(trimAfter)); d != 0 {
		t.Fatalf("after the window: wait %v, want 0 (nothing left to give back)", d)
	}
	if got := residentBuffers(t, g, ids); got != trimKeep {
		t.Fatalf("%d buffers resident after the trim, want %d", got, trimKeep)
	}
	// The kept ones are those on top of the stack, taken first next time.
	free := freeIDs(g)
	top := free[len(free)-trimKeep:]
	if got := residentBuffers(t, g, top); got != trimKeep {
		t.Fatalf("%d of the %d buffers on top resident", got, trimKeep)
	}
}

// TestTrimIdleKeepsWorkingSet: buffers taken during the window stay; only
// those below the lowest point the stack reached are given back, so a
// steady load costs no page faults.
func TestTrimIdleKeepsWorkingSet(t *testing.T) {
	_, g := trimGroup(t, 256)
	burst(t, g, 200)
	t0 := time.Now()
	g.TrimIdle(t0)
	var used []uint16
	for range 5 { // the steady load: 40 buffers at once, in the window
		used = burst(t, g, 40)
	}
	if d := g.TrimIdle(t0.Add(trimAfter)); d != trimAfter {
		t.Fatalf("after the window: wait %v, want a new window (the working set is above trimKeep)", d)
	}
	if got := residentBuffers(t, g, used); got != 40 {
		t.Fatalf("%d of the 40 buffers in use resident, want all", got)
	}
	free := freeIDs(g)
	below := free[:len(free)-40]
	if got := residentBuffers(t, g, below); got != 0 {
		t.Fatalf("%d buffers below the working set still resident", got)
	}
	// The load stops: the next window gives back all but trimKeep.
	if d := g.TrimIdle(t0.Add(2 * trimAfter)); d != 0 {
		t.Fatalf("idle window: wait %v, want 0", d)
	}
	if got := residentBuffers(t, g, used); got != trimKeep {
		t.Fatalf("%d buffers resident after an idle window, want %d", got, trimKeep)
	}
}

// TestTrimmedBufferReusable: a buffer whose pages were given back serves
// again; what a read writes into it is what the reader finds.
func TestTrimmedBufferReusable(t *testing.T) {
	_, g := trimGroup(t, 64)
	burst(t, g, 64)
	t0 := time.Now()
	g.TrimIdle(t0)
	g.TrimIdle(t0.Add(trimAfter))
	if c := cleanCount(g); c != 64-trimKeep {
		t.Fatalf("clean %d, want %d", c, 64-trimKeep)
	}
	ids := takeN(t, g, 64)
	if c := cleanCount(g); c != 0 {
		t.Fatalf("clean %d after every buffer was taken, want 0", c)
	}
	for _, id := range ids {
		want := bytes.Repeat([]byte{byte(id) | 1}, len(g.Buffer(id)))
		if !bytes.Equal(g.Buffer(id), want) {
			t.Fatalf("buffer %d does not hold what was written", id)
		}
		g.Put(id)
	}
}

// TestReactorTrimIdle: the backend's TrimIdle, with the real clock, asks
// to be called again while a group waits out its window, gives the pages
// back, and then returns 0, so an idle worker sleeps without a timeout.
func TestReactorTrimIdle(t *testing.T) {
	r, g := trimGroup(t, 256)
	if d := r.TrimIdle(); d != 0 {
		t.Fatalf("no buffer used yet: wait %v", d)
	}
	ids := burst(t, g, 100)
	deadline := time.Now().Add(10 * time.Second)
	for {
		d := r.TrimIdle()
		if d == 0 {
			break
		}
		if d > trimAfter {
			t.Fatalf("wait %v, longer than a window", d)
		}
		if time.Now().After(deadline) {
			t.Fatal("TrimIdle still asks to be called after 10 s of idleness")
		}
		time.Sleep(d)
	}
	if got := residentBuffers(t, g, ids); got != trimKeep {
		t.Fatalf("%d buffers resident, want %d", got, trimKeep)
	}
	if r.groups.trimPending.Load() {
		t.Fatal("the pending flag is still set with nothing to give back")
	}
	burst(t, g, trimKeep+1)
	if d := r.TrimIdle(); d <= 0 {
		t.Fatalf("after new use: wait %v, want a window", d)
	}
}

// TestTrimIdleRacesTakers: buffers taken, written and read back by several
// goroutines while trims run with a clock that jumps a window each time
// never lose what was written (a release of a buffer in use would zero
// it). Run it under -race too.
func TestTrimIdleRacesTakers(t *testing.T) {
	_, g := trimGroup(t, 128)
	rounds := 20000
	if testing.Short() {
		rounds = 2000
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		now := time.Now()
		for {
			select {
			case <-stop:
				return
			default:
			}
			now = now.Add(trimAfter)
			g.TrimIdle(now)
		}
	})
	var failed sync.Once
	var takers sync.WaitGroup
	for w := range 4 {
		takers.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			var held []uint16
			for range rounds {
				if len(held) < 24 && rng.IntN(2) == 0 {
					if id, ok := g.Take(); ok {
						b := g.Buffer(id)
						b[0], b[len(b)-1] = byte(id)|1, byte(w)|1
						held = append(held, id)
					}
					continue
				}
				if len(held) == 0 {
					continue
				}
				i := rng.IntN(len(held))
				id := held[i]
				b := g.Buffer(id)
				if b[0] != byte(id)|1 || b[len(b)-1] != byte(w)|1 {
					failed.Do(func() { t.Errorf("buffer %d lost its contents while held", id) })
				}
				held[i] = held[len(held)-1]
				held = held[:len(held)-1]
				g.Put(id)
			}
			for _, id := range held {
				g.Put(id)
			}
		})
	}
	takers.Wait()
	close(stop)
	wg.Wait()
}

// TestTrimShuffledAcrossChunks: buffers given back in random order, from
// several of the arena's chunks, are released in runs of neighbours, none
// missed and none of the kept ones touched.
func TestTrimShuffledAcrossChunks(t *testing.T) {
	_, g := trimGroup(t, 512)
	ids := takeN(t, g, 300) // chunks 0 to 3: ids 0-63, 64-127, 128-255, 256-511
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for _, id := range ids {
		g.Put(id)
	}
	t0 := time.Now()
	g.TrimIdle(t0)
	if d := g.TrimIdle(t0.Add(trimAfter)); d != 0 {
		t.Fatalf("wait %v after the window", d)
	}
	free := freeIDs(g)
	top := free[len(free)-trimKeep:]
	if got := residentBuffers(t, g, top); got != trimKeep {
		t.Fatalf("%d of the %d kept buffers resident", got, trimKeep)
	}
	if got := residentBuffers(t, g, ids); got != trimKeep {
		t.Fatalf("%d of the 300 buffers resident, want the %d kept", got, trimKeep)
	}
}

// TestTrimFreshChunkFromUsedHeap: a chunk the Go heap makes from memory it
// used before (zeroed, so resident) holds no resident pages once made, so
// the buffers never taken, which the group counts as holding none, do not.
func TestTrimFreshChunkFromUsedHeap(t *testing.T) {
	page := unix.Getpagesize()
	junk := make([]byte, 2048*page) // a written span for the chunk to reuse
	for i := range junk {
		junk[i] = 1
	}
	junk = nil
	runtime.GC()
	runtime.GC()
	_, g := trimGroup(t, 256)
	burst(t, g, 129) // makes chunk 2 (ids 128-255) and takes one buffer of it
	t0 := time.Now()
	for i := range 3 {
		g.TrimIdle(t0.Add(time.Duration(i) * trimAfter))
	}
	all := make([]uint16, 256)
	for i := range all {
		all[i] = uint16(i)
	}
	if got := residentBuffers(t, g, all); got > trimKeep {
		t.Fatalf("%d of 256 buffers resident after idle windows, want at most %d", got, trimKeep)
	}
}

// TestTrimReleaseFails: a release the system refuses (locked pages) leaves
// the pages resident but does not keep the group asking to be called: an
// idle runtime is not woken every window for it.
func TestTrimReleaseFails(t *testing.T) {
	_, g := trimGroup(t, 64)
	burst(t, g, 64)
	free, clean := g.FreeIDs()
	b := g.Buffer(free[clean])
	if err := unix.Mlock(b); err != nil {
		t.Skip("mlock:", err)
	}
	defer unix.Munlock(b)
	t0 := time.Now()
	var d time.Duration
	for i := range 4 {
		d = g.TrimIdle(t0.Add(time.Duration(i) * trimAfter))
	}
	if d != 0 {
		t.Fatalf("after idle windows TrimIdle still asks for %v (clean %d of %d free)", d, cleanCount(g), len(freeIDs(g)))
	}
}
