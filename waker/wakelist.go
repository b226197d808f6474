package waker

// WakeListCap is the number of Wakers a WakeList holds, Tokio's figure: a
// batch big enough that a wake-all of a typical waiter list is one batch,
// small enough (32 Wakers, 512 bytes on 64-bit) to live on the stack.
const WakeListCap = 32

// WakeList is a fixed-size batch of Wakers, filled under a primitive's lock
// (List.PopInto, Push) and woken after the lock is released (WakeAll), so
// that the Wakers do not run inside the critical section. It allocates
// nothing; declare it as a local variable. The zero WakeList is empty and
// ready to use. See "Waking outside the lock".
//
// A WakeList is not synchronized; it is normally local to one goroutine.
type WakeList struct {
	// n is the number of Wakers in wakers[:n]. The one goroutine using the
	// WakeList.
	n int
	// wakers holds the batch in push order; slots past n are zero, so that
	// a woken batch keeps nothing alive. The one goroutine using the
	// WakeList.
	wakers [WakeListCap]Waker
}

// Len returns the number of Wakers in wl.
// The goroutine using wl calls it.
func (wl *WakeList) Len() int { return wl.n }

// CanPush reports whether wl has room for one more Waker.
// The goroutine using wl calls it.
func (wl *WakeList) CanPush() bool { return wl.n < WakeListCap }

// Push appends wk to wl. It panics with ErrWakeListFull if wl is full: check
// CanPush, or WakeAll (after unlocking) and go on.
// The goroutine using wl calls it.
func (wl *WakeList) Push(wk Waker) {
	if wl.n == WakeListCap {
		panic(ErrWakeListFull)
	}
	wl.wakers[wl.n] = wk
	wl.n++
}

// WakeAll calls every Waker in wl, in push order, empties wl and returns how
// many it called (zero Wakers included: their Wake is a no-op). Call it
// after releasing the lock under which wl was filled.
// The goroutine using wl calls it.
func (wl *WakeList) WakeAll() int {
	n := wl.n
	// Empty wl first: a Wake that panics leaves wl empty (the Wakers after
	// it are not called, and keep their slots until the next batch).
	wl.n = 0
	for i := range n {
		wk := wl.wakers[i]
		wl.wakers[i] = Waker{}
		wk.Wake()
	}
	return n
}
