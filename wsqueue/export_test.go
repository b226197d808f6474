package wsqueue

// The seam for the black-box tests in package wsqueue_test: constructors that
// start the indices anywhere (near 2^32 to exercise wrapping), the steal hooks
// that let a test pause a stealer between phases, and read-only views of the
// internal state.

// HookPoint names a pause point of a steal; see hook.go.
type HookPoint = hookPoint

// The pause points.
const (
	HookStealLoaded     = hookStealLoaded
	HookStealClaimed    = hookStealClaimed
	HookStealCopied     = hookStealCopied
	HookCompleteRetry   = hookCompleteRetry
	HookDequeStealRead  = hookDequeStealRead
	HookDequePopReserve = hookDequePopReserve
)

// StealStatus is the internal outcome of a steal.
type StealStatus = stealStatus

// The steal outcomes.
const (
	StatusTaken = stealTaken
	StatusEmpty = stealEmpty
	StatusBusy  = stealBusy
)

// NewAt is NewSize with every index starting at start.
func NewAt[T any](capacity int, start uint32) (*Owner[T], *Stealer[T]) {
	if err := checkCapacity(capacity); err != nil {
		panic(err)
	}
	return newQueue[T](uint32(capacity), start)
}

// SetHook installs f at every pause point of steals from s's queue. Call it
// before the queue is shared.
func SetHook[T any](s *Stealer[T], f func(HookPoint)) { s.q.hook = f }

// SetDequeHook installs f at every pause point of steals from s's deque.
func SetDequeHook[T any](s *DequeStealer[T], f func(HookPoint)) { s.d.hook = f }

// StealIntoN is StealInto that also reports how many items it took and why
// it took none.
func StealIntoN[T any](s *Stealer[T], dst *Owner[T]) (*T, int, StealStatus) {
	item, n, st := s.stealInto(dst)
	return item, int(n), st
}

// Indices returns the queue's steal, real and tail indices.
func Indices[T any](s *Stealer[T]) (steal, real, tail uint32) {
	h := head(s.q.head.Load())
	return h.steal(), h.real(), s.q.tail.Load()
}

// NonNilSlots counts the slots of the local queue that hold a pointer.
func NonNilSlots[T any](s *Stealer[T]) int {
	n := 0
	for i := range s.q.slots {
		if s.q.slots[i] != nil {
			n++
		}
	}
	return n
}

// DequeNonNilSlots counts the slots of the deque's current ring that hold a
// pointer.
func DequeNonNilSlots[T any](s *DequeStealer[T]) int {
	r := s.d.buf.Load()
	n := 0
	for i := range r.slots {
		if r.slots[i].Load() != nil {
			n++
		}
	}
	return n
}

// DequeIndices returns the deque's top and bottom indices.
func DequeIndices[T any](s *DequeStealer[T]) (top, bottom int64) {
	return s.d.top.Load(), s.d.bottom.Load()
}
