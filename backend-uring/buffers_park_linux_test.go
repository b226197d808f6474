package uring

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// circulation returns how many buffers of group 1 are with the kernel or
// held, and how many are parked.
func circulation(b *Backend) (circ, parked int) {
	g := b.group(1)
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.provided - len(g.parked), len(g.parked)
}

// residentPages counts the pages of buf that are resident (mincore).
func residentPages(t *testing.T, buf []byte) int {
	t.Helper()
	page := unix.Getpagesize()
	start := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	require.Zero(t, start%uintptr(page), "the buffer is not page-aligned")
	vec := make([]byte, (len(buf)+page-1)/page)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, start, uintptr(len(buf)), uintptr(unsafe.Pointer(&vec[0])))
	require.Zero(t, errno, "mincore")
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// TestBufferGroupParksAfterBurst: after the caller held many buffers at
// once and released them, the group keeps about half its circulation with
// the kernel and parks the rest, whose pages are no longer resident; the
// parked buffers come back when the reads in flight rise again, and every
// receive still gets its own bytes.
func TestBufferGroupParksAfterBurst(t *testing.T) {
	const count, burst = 1024, 300
	b := newTest(t, Options{})
	require.NoError(t, b.RegisterBufferGroup(1, count, 4096))
	if b.group(1).mode != bufRing {
		t.Skip("the kernel has no provided-buffer rings")
	}
	a, z := datagramPair(t)
	msg := func(i int) []byte { return binary.LittleEndian.AppendUint32(make([]byte, 0, 4), uint32(i)) }

	var held []uint16
	for i := range burst {
		_, err := unix.Write(int(z), msg(i))
		require.NoError(t, err)
		id, data := selectRecv(t, b, a)
		require.Equal(t, msg(i), data)
		held = append(held, id)
	}
	peak, parked := circulation(b)
	require.Zero(t, parked, "buffers parked while the caller held %d", burst)
	require.GreaterOrEqual(t, peak, burst)

	for _, id := range held {
		require.NoError(t, b.ReleaseBuffer(1, id))
	}
	circ, parked := circulation(b)
	t.Logf("circulation %d at the peak, %d after the release, %d parked", peak, circ, parked)
	require.Equal(t, peak, circ+parked)
	require.LessOrEqual(t, circ, peak/2+burst/8, "too many buffers left in circulation")
	require.GreaterOrEqual(t, circ, keptWithKernel)
	g := b.group(1)
	require.Zero(t, b.trimGroups(), "the group never took parked buffers back: nothing should wait")
	for _, id := range g.parked {
		require.Zero(t, residentPages(t, g.mem.Buffer(int(id))), "parked buffer %d is still resident", id)
	}

	// Random holds and releases, up to a second burst: every receive gets
	// its bytes in a buffer nobody holds, and the parked buffers come back.
	rng := rand.New(rand.NewPCG(1, 2))
	holding := map[uint16]bool{}
	var order []uint16
	rounds := 4000
	if testing.Short() {
		rounds = 1500
	}
	for i := range rounds {
		want := rng.IntN(2*burst + 1)
		if i > rounds*3/4 {
			want = 0
		}
		for len(order) > want {
			k := rng.IntN(len(order))
			id := order[k]
			order[k] = order[len(order)-1]
			order = order[:len(order)-1]
			delete(holding, id)
			require.NoError(t, b.ReleaseBuffer(1, id))
		}
		if len(order) < want {
			_, err := unix.Write(int(z), msg(i))
			require.NoError(t, err)
			id, data := selectRecv(t, b, a)
			require.Equal(t, msg(i), data, "round %d", i)
			require.False(t, holding[id], "buffer %d handed out while held", id)
			holding[id] = true
			order = append(order, id)
		}
	}
	require.Empty(t, order)
	circ, parked = circulation(b)
	t.Logf("after random traffic: circulation %d, %d parked", circ, parked)
	g.mu.Lock()
	require.Equal(t, circ, g.withKernel, "a buffer is neither held nor with the kernel")
	untrimmed := len(g.parked) - g.trimmed
	g.mu.Unlock()

	// Parked buffers were taken back just now: their pages wait trimAfter.
	if untrimmed > 0 {
		wait := b.trimGroups()
		require.Positive(t, wait)
		require.LessOrEqual(t, wait, trimAfter)
		time.Sleep(wait)
	}
	require.Zero(t, b.trimGroups())
	for _, id := range g.parked {
		require.Zero(t, residentPages(t, g.mem.Buffer(int(id))), "parked buffer %d is still resident", id)
	}
}

// TestBufferGroupTrimNotUnderLoad: a load that rises and falls moves
// buffers between the ring and the parked stack without returning their
// pages: TrimIdle does nothing while the group keeps taking parked buffers
// back.
func TestBufferGroupTrimNotUnderLoad(t *testing.T) {
	b := newTest(t, Options{})
	require.NoError(t, b.RegisterBufferGroup(1, 1024, 4096))
	if b.group(1).mode != bufRing {
		t.Skip("the kernel has no provided-buffer rings")
	}
	a, z := datagramPair(t)
	g := b.group(1)
	for wave := range 6 {
		var held []uint16
		for i := range 200 {
			_, err := unix.Write(int(z), []byte{byte(i)})
			require.NoError(t, err)
			id, _ := selectRecv(t, b, a)
			held = append(held, id)
		}
		for _, id := range held {
			require.NoError(t, b.ReleaseBuffer(1, id))
		}
		if wave > 0 {
			require.Positive(t, b.trimGroups(), "wave %d", wave)
			g.mu.Lock()
			trimmed := g.trimmed
			g.mu.Unlock()
			require.Zero(t, trimmed, "wave %d: pages returned under load", wave)
		}
	}
}

// TestBufferGroupSteadyReadsDoNotPark: one read at a time on a group that
// never grew parks nothing (no page is returned and faulted again per read).
func TestBufferGroupSteadyReadsDoNotPark(t *testing.T) {
	b := newTest(t, Options{})
	require.NoError(t, b.RegisterBufferGroup(1, 1024, 4096))
	a, z := datagramPair(t)
	for i := range 3 * firstProvided {
		_, err := unix.Write(int(z), []byte{byte(i)})
		require.NoError(t, err)
		id, _ := selectRecv(t, b, a)
		require.NoError(t, b.ReleaseBuffer(1, id))
	}
	_, parked := circulation(b)
	require.Zero(t, parked)
}

// TestTrimIdleDropsEmptyIndexPages: the page of the per-descriptor index
// that a receive on a high descriptor made is dropped by the TrimIdle
// trimAfter after it went back to zeros (TrimIdle says how long to wait
// until then), and made again by the next op on that descriptor.
func TestTrimIdleDropsEmptyIndexPages(t *testing.T) {
	b := newTest(t, Options{})
	require.NoError(t, b.RegisterBufferGroup(1, 64, 4096))
	a, z := datagramPair(t)
	hi := 3*pageSize + 7
	require.NoError(t, unix.Dup3(int(a), hi, unix.O_CLOEXEC))
	t.Cleanup(func() { unix.Close(hi) })
	page := func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.fdHeads.pages) > hi>>pageBits && b.fdHeads.pages[hi>>pageBits] != nil
	}
	recvOne := func(v byte) {
		_, err := unix.Write(int(z), []byte{v})
		require.NoError(t, err)
		id, data := selectRecv(t, b, backend.FD(hi))
		require.Equal(t, []byte{v}, data)
		require.NoError(t, b.ReleaseBuffer(1, id))
	}
	recvOne(1)
	require.True(t, page(), "the receive made no index page")
	wait := b.TrimIdle()
	require.Positive(t, wait, "an emptied page should wait trimAfter")
	require.LessOrEqual(t, wait, trimAfter)
	require.True(t, page(), "the page was dropped before trimAfter")
	time.Sleep(wait)
	require.Zero(t, b.TrimIdle())
	require.False(t, page(), "the empty page was not dropped")
	require.False(t, b.pagesEmptied.Load())
	recvOne(2)
	require.True(t, page(), "the next receive made the page again")
	require.Equal(t, int32(0), b.fdHeads.get(hi))
}
