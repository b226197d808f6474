package wsqueue

import "sync"

// MutexDeque is a sync.Mutex-protected slice deque: the reference that the
// model tests check the queues against, and the "mutexdeque" baseline of the
// benchmarks. It lives in the internal test package, exported to the
// external one, because the fuzz targets must be internal: the fuzzer's
// coverage instrumentation does not reach generic code instantiated in an
// external test package. It is a growable ring so that, once grown, it allocates nothing.
// Its methods are obviously correct by construction: every one holds the lock
// for its whole body.
type MutexDeque[T any] struct {
	mu    sync.Mutex
	buf   []*T // len is a power of two, or 0
	first int  // index of the oldest item in buf
	n     int  // number of items
}

// NewMutexDeque returns an empty deque with room for capacity items before
// it grows.
func NewMutexDeque[T any](capacity int) *MutexDeque[T] {
	size := 1
	for size < capacity {
		size *= 2
	}
	return &MutexDeque[T]{buf: make([]*T, size)}
}

// at returns a pointer to the i-th item counted from the oldest.
// m.mu must be held.
func (m *MutexDeque[T]) atLocked(i int) **T {
	return &m.buf[(m.first+i)&(len(m.buf)-1)]
}

// growLocked doubles the ring when it is full. m.mu must be held.
func (m *MutexDeque[T]) growLocked() {
	if m.n < len(m.buf) {
		return
	}
	nb := make([]*T, max(1, 2*len(m.buf)))
	for i := range m.n {
		nb[i] = *m.atLocked(i)
	}
	m.buf, m.first = nb, 0
}

// PushBack appends x as the newest item.
func (m *MutexDeque[T]) PushBack(x *T) {
	m.mu.Lock()
	m.growLocked()
	*m.atLocked(m.n) = x
	m.n++
	m.mu.Unlock()
}

// PopFront removes the oldest item, or returns nil.
func (m *MutexDeque[T]) PopFront() *T {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.n == 0 {
		return nil
	}
	p := m.atLocked(0)
	x := *p
	*p = nil
	m.first = (m.first + 1) & (len(m.buf) - 1)
	m.n--
	return x
}

// PopBack removes the newest item, or returns nil.
func (m *MutexDeque[T]) PopBack() *T {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.n == 0 {
		return nil
	}
	p := m.atLocked(m.n - 1)
	x := *p
	*p = nil
	m.n--
	return x
}

// PopFrontN removes up to k oldest items and appends them to dst.
func (m *MutexDeque[T]) PopFrontN(dst []*T, k int) []*T {
	m.mu.Lock()
	defer m.mu.Unlock()
	for ; k > 0 && m.n > 0; k-- {
		p := m.atLocked(0)
		dst = append(dst, *p)
		*p = nil
		m.first = (m.first + 1) & (len(m.buf) - 1)
		m.n--
	}
	return dst
}

// PopFrontHalf removes half of the items (rounded up), oldest first, and
// appends them to dst.
func (m *MutexDeque[T]) PopFrontHalf(dst []*T) []*T {
	m.mu.Lock()
	k := m.n - m.n/2
	m.mu.Unlock()
	return m.PopFrontN(dst, k)
}

// Len returns the number of items.
func (m *MutexDeque[T]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

// Items returns a copy of the items, oldest first.
func (m *MutexDeque[T]) Items() []*T {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*T, m.n)
	for i := range out {
		out[i] = *m.atLocked(i)
	}
	return out
}
