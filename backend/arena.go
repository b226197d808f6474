package backend

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// BufferArena is the memory of a buffer group (RegisterBufferGroup): count
// buffers of size bytes, made in chunks when a buffer of the chunk is first
// asked for, so that a group holds memory for the buffers it has used, not
// for count. A backend that hands the kernel its buffers a few at first
// and more as reads need them (or that takes free buffers lowest first)
// makes only as many chunks as the reads in flight at once needed.
//
// Chunk 0 holds buffers 0 to 63 and chunk k (k ≥ 1) buffers 64·2^(k-1) to
// 64·2^k - 1: each chunk is as large as all before it, so that a group
// that doubles the buffers it has given out covers each new range with one
// chunk, in one contiguous block (Range). A chunk, once made, is never
// freed nor moved: the kernel may write into a buffer until the group is
// gone, and the arena keeps every chunk reachable until then.
//
// Any goroutine may call its methods.
type BufferArena struct {
	size, count int // immutable
	// fresh, if set, is called with each chunk as it is made, before any
	// of its buffers is handed out (see SetFreshChunk). Set before use.
	fresh func([]byte)
	// chunks[k] is chunk k, nil until made. Each is stored once, under mu,
	// and loaded without it: the load pairs with that store.
	chunks [arenaChunks]atomic.Pointer[[]byte]
	mu     sync.Mutex // serializes the making of chunks
}

// arenaFirst is the number of buffers of chunk 0.
const arenaFirst = 64

// arenaChunks covers 32768 buffers, the most a group holds: chunk 9 ends
// at 64·2^9.
const arenaChunks = 10

// NewBufferArena returns the arena of count buffers (1 to 32768) of size
// bytes. It makes no chunk.
func NewBufferArena(count, size int) *BufferArena {
	return &BufferArena{size: size, count: count}
}

// SetFreshChunk sets f to be called with each chunk as it is made, before
// any of its buffers is handed out: a backend that counts the buffers never
// handed out as holding no memory gives the chunk's pages back there (the
// Go heap may make a chunk of memory it used before, zeroed and resident).
// Call it before the arena is used; f must not call the arena.
func (a *BufferArena) SetFreshChunk(f func([]byte)) { a.fresh = f }

// Contiguous returns the memory of buffers first to first+n-1 if they lie in
// one chunk that is made, nil otherwise; it makes no chunk.
func (a *BufferArena) Contiguous(first, n int) []byte {
	if n < 1 || first < 0 || first+n > a.count {
		return nil
	}
	k, start := chunkOf(first)
	if lastK, _ := chunkOf(first + n - 1); lastK != k {
		return nil
	}
	p := a.chunks[k].Load() // load: pairs with the store in chunk
	if p == nil {
		return nil
	}
	lo := (first - start) * a.size
	return (*p)[lo : lo+n*a.size : lo+n*a.size]
}

// chunkOf returns the chunk holding buffer id and that chunk's first id.
func chunkOf(id int) (k, first int) {
	if id < arenaFirst {
		return 0, 0
	}
	k = bits.Len(uint(id / arenaFirst))
	return k, arenaFirst << (k - 1)
}

// chunkLen is the number of buffers of chunk k in an arena of count.
func (a *BufferArena) chunkLen(k int) int {
	first, end := 0, arenaFirst
	if k > 0 {
		first, end = arenaFirst<<(k-1), arenaFirst<<k
	}
	return max(min(end, a.count)-first, 0)
}

// chunk returns chunk k, making it if it is not made yet.
func (a *BufferArena) chunk(k int) []byte {
	if p := a.chunks[k].Load(); p != nil { // load: pairs with the store below
		return *p
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if p := a.chunks[k].Load(); p != nil {
		return *p
	}
	c := make([]byte, a.chunkLen(k)*a.size)
	if a.fresh != nil {
		a.fresh(c)
	}
	a.chunks[k].Store(&c) // store: the chunk is complete; pairs with the loads above
	return c
}

// Buffer returns buffer id (0 to count-1), making its chunk if needed;
// nil for an id out of range. Its capacity is its length.
func (a *BufferArena) Buffer(id int) []byte {
	if id < 0 || id >= a.count {
		return nil
	}
	k, first := chunkOf(id)
	lo := (id - first) * a.size
	return a.chunk(k)[lo : lo+a.size : lo+a.size]
}

// Range returns the memory of buffers first to first+n-1, one contiguous
// block, making their chunk if needed. The buffers must lie in one chunk
// (0 to 63, 64 to 127, 128 to 255, ...), as a doubling of the buffers in
// use always does; otherwise, or out of range, it returns nil.
func (a *BufferArena) Range(first, n int) []byte {
	if n < 1 || first < 0 || first+n > a.count {
		return nil
	}
	k, start := chunkOf(first)
	if lastK, _ := chunkOf(first + n - 1); lastK != k {
		return nil
	}
	lo := (first - start) * a.size
	return a.chunk(k)[lo : lo+n*a.size : lo+n*a.size]
}

// Made returns the bytes of the chunks made so far.
func (a *BufferArena) Made() int {
	n := 0
	for k := range a.chunks {
		if p := a.chunks[k].Load(); p != nil {
			n += len(*p)
		}
	}
	return n
}
