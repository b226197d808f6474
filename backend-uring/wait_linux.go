//go:build linux

package uring

import (
	"syscall"
	"time"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// Wait flushes, then returns ready completions; when there are none it
// blocks up to timeout (negative: forever) or until Wake.
func (b *Backend) Wait(out []Completion, timeout time.Duration) (int, error) {
	if !b.cqMu.TryLock() {
		b.mu.Lock()
		closing := b.closing
		b.mu.Unlock()
		if !closing {
			return 0, backend.ErrBusy
		}
		b.cqMu.Lock() // Close is draining: its completions follow
	}
	defer b.cqMu.Unlock()
	if b.done {
		n := b.takeExtra(out)
		if n == 0 {
			return 0, backend.ErrClosed
		}
		return n, nil
	}
	if len(out) == 0 {
		return 0, b.flush(false)
	}
	// The clock is read only where a deadline is in play: a Wait that
	// does not wait (timeout 0), the workers' look between two ticks,
	// needs none.
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	b.out, b.outN, b.woke, b.timerFired = out, b.takeExtra(out), false, false
	defer func() { b.out = nil }()
	if err := b.flush(false); err != nil {
		return 0, err
	}
	b.harvest()
	for b.outN == 0 && !b.woke && timeout != 0 {
		left := time.Duration(-1)
		if timeout > 0 {
			if left = time.Until(deadline); left <= 0 {
				break
			}
		}
		expired, err := b.block(left)
		if err != nil {
			return 0, err
		}
		b.harvest()
		if expired || b.timerFired {
			break
		}
	}
	return b.outN, nil
}

// takeExtra moves completions made earlier (when out was full) into out.
func (b *Backend) takeExtra(out []Completion) int {
	n := copy(out, b.extra)
	rest := copy(b.extra, b.extra[n:])
	clear(b.extra[rest:])
	b.extra = b.extra[:rest]
	return n
}

// flush pushes the SQ; with arm it also marks Wait as about to block, so
// that Submits from now on push their SQEs themselves.
func (b *Backend) flush(arm bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if arm {
		b.waiting.Store(true)
	}
	return b.r.submit()
}

// block waits in io_uring_enter for one CQE, up to left (negative:
// forever). It reports whether the timeout expired.
func (b *Backend) block(left time.Duration) (bool, error) {
	var arg unsafe.Pointer
	var argSize uintptr
	flags := uint32(enterGetEvents)
	if left >= 0 && b.extArg {
		setTimespec(&b.waitTS, left)
		b.waitArg = geteventsArg{TS: uint64(uintptrOf(&b.waitTS))}
		arg, argSize, flags = unsafe.Pointer(&b.waitArg), unsafe.Sizeof(b.waitArg), flags|enterExtArg
	} else if left >= 0 {
		b.armTimer(left)
	}
	if err := b.flush(true); err != nil {
		b.waiting.Store(false)
		return false, err
	}
	_, errno := b.r.enter(0, 1, flags, arg, argSize)
	b.waiting.Store(false)
	switch errno {
	case 0, unix.EINTR, unix.EAGAIN, unix.EBUSY:
		return false, nil
	case unix.ETIME:
		return true, nil
	}
	return false, backend.NewError("io_uring_enter", backend.ErrIO, errno)
}

// armTimer queues Wait's internal timeout (no EXT_ARG): a TIMEOUT that
// also completes when any other CQE is posted (count 1), so that it never
// outlives the wait by long. Only the latest one counts (timerSeq).
func (b *Backend) armTimer(left time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.timerSeq++
	setTimespec(&b.timerTS, left)
	s := b.pushInternal(token(tagTimer, 0, 0) | uint64(b.timerSeq))
	s.Opcode, s.FD, s.Addr, s.Len, s.Off = opTimeout, -1, uint64(uintptrOf(&b.timerTS)), 1, 1
}

// Close cancels everything in flight, waits until the kernel has given
// back every request, keeps the completions for Wait, and releases the
// ring, the eventfd and the buffer rings.
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.closing {
		b.mu.Unlock()
		return backend.ErrClosed
	}
	b.closing = true
	b.cancelAll()
	b.r.submit()
	b.mu.Unlock()
	b.wakeFlag.Store(true) // no more eventfd writes
	b.poke()               // a Wait blocked now returns and lets go of cqMu

	b.cqMu.Lock()
	defer b.cqMu.Unlock()
	b.drain()
	b.mu.Lock()
	b.fdsGone = true
	b.release()
	b.mu.Unlock()
	b.done = true
	return nil
}

// poke makes a blocked Wait return, whatever the wake flag says.
func (b *Backend) poke() {
	one := [8]byte{1}
	if isBigEndian {
		one = [8]byte{7: 1}
	}
	for {
		if _, err := unix.Write(b.eventfd, one[:]); err != unix.EINTR {
			return
		}
	}
}

// cancelAll marks every op cancelled and asks the kernel to cancel every
// request: at once with IORING_ASYNC_CANCEL_ANY, else one by one. Called
// with mu held.
func (b *Backend) cancelAll() {
	for ci, c := range b.slab.chunks {
		for i := range c {
			switch {
			case c[i].op == nil:
			case c[i].flags&recQueued != 0:
				b.dropQueued(int32(ci*chunkSize+i), &c[i])
			case c[i].flags&recDropped == 0:
				c[i].flags |= recCanceled
				if !b.cancelAny {
					s := b.pushInternal(token(tagCancel, 0, 0))
					s.Opcode, s.FD, s.Addr = opAsyncCancel, -1, token(tagOp, c[i].gen, int32(ci*chunkSize+i))
				}
			}
		}
	}
	if !b.cancelAny {
		b.arms.each(func(slot int32, rec *armRec) {
			s := b.pushInternal(token(tagCancel, 0, 0))
			s.Opcode, s.FD, s.Addr = opAsyncCancel, -1, token(tagArm, rec.gen(), slot)
		})
	}
	s := b.pushInternal(token(tagCancel, 0, 0))
	s.Opcode, s.FD = opAsyncCancel, -1
	if b.cancelAny {
		s.OpFlags = cancelAny | cancelAll
	} else {
		s.Addr = token(tagWake, 0, 0)
	}
}

// drain reaps until no request of ours is in the kernel; the completions
// go to extra, for Wait. Called with cqMu held.
func (b *Backend) drain() {
	var buf [64]Completion
	for {
		b.out, b.outN = buf[:], 0
		b.harvest()
		b.extra = append(b.extra, buf[:b.outN]...)
		b.mu.Lock()
		busy := b.slab.used > 0 || b.internal > 0 || b.arms.live > 0
		if busy {
			b.r.submit()
		}
		b.mu.Unlock()
		if !busy {
			break
		}
		if b.outN == len(buf) {
			continue
		}
		if _, errno := b.r.enter(0, 1, enterGetEvents, nil, 0); errno != 0 && errno != syscall.EINTR {
			break // the ring is unusable; nothing more will come
		}
	}
	b.out = nil
}
