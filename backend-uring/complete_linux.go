//go:build linux

package uring

import (
	"sync/atomic"
	"syscall"
	"time"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
	"golang.org/x/sys/unix"
)

// harvest consumes CQEs into b.out until it is full or the CQ is empty,
// flushing the kernel's overflow list when it holds CQEs. Called with cqMu
// held; takes mu.
func (b *Backend) harvest() {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.r
	ranTaskWork := false
harvest:
	for b.outN < len(b.out) {
		head := atomic.LoadUint32(r.cqHead) // ours; atomic for symmetry with the store below
		// Acquire: pairs with the kernel's release store of the CQ tail
		// after it wrote the CQEs.
		tail := atomic.LoadUint32(r.cqTail)
		if head == tail {
			// NODROP kept CQEs that did not fit, or (COOP_TASKRUN) completions
			// wait as task work: GETEVENTS moves them in. Task work queued
			// to another thread is not run by this entry, so it is tried
			// once per harvest; that thread runs it at its next kernel entry.
			switch {
			case r.overflowed():
			case !ranTaskWork && r.taskRunPending():
				ranTaskWork = true
			default:
				break harvest
			}
			if _, errno := r.enterRaw(0, enterGetEvents, true); errno != 0 && errno != unix.EINTR {
				break harvest
			}
			continue
		}
		for ; head != tail && b.outN < len(b.out); head++ {
			c := r.cqes[head&r.cqMask]
			// Release: the slot may be reused by the kernel once it sees
			// the new head (it loads it with acquire).
			atomic.StoreUint32(r.cqHead, head+1)
			b.process(c)
		}
	}
	if b.pushesAtOnce() || b.r.pending() > 0 {
		// Re-arms made while processing go out now: Wait may block next.
		b.r.submit()
	}
}

// emit delivers a completion into out, or into extra when out is full.
func (b *Backend) emit(c Completion) {
	if b.outN < len(b.out) {
		b.out[b.outN] = c
		b.outN++
		return
	}
	b.extra = append(b.extra, c)
}

// process handles one CQE. Called with cqMu and mu held.
func (b *Backend) process(c cqe) {
	tag, gen, slot := splitToken(c.UserData)
	switch tag {
	case tagOp, tagAux, tagQTimer:
		r := b.slab.lookup(gen, slot)
		if r == nil {
			return // cannot happen: a record lives until its last CQE
		}
		if tag == tagQTimer {
			b.qtimerCQE(slot, r, c.Res)
			return
		}
		if tag == tagAux {
			if c.Res == -int32(unix.ETIME) {
				r.flags |= recTimedOut
			}
			b.settle(slot, r)
			return
		}
		b.opCQE(slot, r, c)
	case tagWake:
		b.internal--
		b.woke = true
		// Cleared before the read is re-armed: a Wake from now on writes
		// the eventfd again, and the new read sees it.
		b.wakeFlag.Store(false)
		if !b.closing {
			b.armWake()
		}
	case tagArm:
		b.armCQE(gen, slot, c)
	case tagTimer:
		b.internal--
		if uint32(c.UserData) == b.timerSeq {
			b.timerFired = true
		}
	default: // tagProvide, tagCancel
		b.internal--
	}
}

// qtimerCQE handles the timeout of a queued op: if it fired while the op
// was still queued, the op finishes with ErrTimeout.
func (b *Backend) qtimerCQE(slot int32, r *record, res int32) {
	if res == -int32(unix.ETIME) && r.flags&recQueued != 0 {
		r.flags &^= recQueued | recQTimer
		r.flags |= recTimedOut | recDropped
		r.res = -int32(unix.ECANCELED)
	}
	r.flags &^= recQTimer
	b.settle(slot, r)
}

// settle counts one of the op's CQEs and finishes it after the last.
func (b *Backend) settle(slot int32, r *record) {
	r.pend--
	if r.pend == 0 {
		b.finish(slot, r)
	}
}

// opCQE handles a CQE of the op's own request.
func (b *Backend) opCQE(slot int32, r *record, c cqe) {
	op := r.op
	if c.Flags&cqeFMore != 0 { // native multishot: stays armed
		b.emit(b.acceptCompletion(op, c.Res, true, nil))
		return
	}
	switch {
	case r.flags&recEmuAccept != 0 && c.Res >= 0 && r.flags&(recCanceled|recTimedOut) == 0:
		b.emit(b.acceptCompletion(op, c.Res, true, r))
		r.pend--
		b.rearm(slot, r)
		return
	case r.flags&recEmuSelect != 0:
		if !b.emulatedRecv(slot, r, c.Res) {
			return // re-armed
		}
	default:
		r.res = c.Res
		if c.Flags&cqeFBuffer != 0 {
			r.flags |= recBuffer
			r.bufID = uint16(c.Flags >> cqeBufferShift)
		}
	}
	b.settle(slot, r)
}

// rearm queues the emulation's next request, or finishes the op with
// ErrTimeout when its deadline has passed.
func (b *Backend) rearm(slot int32, r *record) {
	if r.flags&recLinked != 0 && r.deadline <= b.now() {
		r.flags |= recTimedOut
		r.res = -int32(unix.ECANCELED)
		r.pend++
		b.settle(slot, r)
		return
	}
	b.arm(slot, r)
}

// emulatedRecv completes the poll of an emulated SelectBuffer recv: it
// reads into a free group buffer. It returns false when it re-armed the
// poll (no data after all).
func (b *Backend) emulatedRecv(slot int32, r *record, res int32) bool {
	if res < 0 {
		r.res = res
		return true
	}
	if r.flags&(recCanceled|recTimedOut) != 0 {
		r.res = -int32(unix.ECANCELED)
		return true
	}
	g := b.group(r.op.BufferGroup)
	n, id, errno := g.readInto(int(r.op.FD))
	switch errno {
	case unix.EAGAIN:
		r.pend--
		b.rearm(slot, r)
		return false
	case 0:
		r.res = int32(n)
		if n > 0 {
			r.flags |= recBuffer
			r.bufID = id
		}
	default:
		r.res = -int32(errno)
	}
	return true
}

// finish delivers the op's final completion and frees its slot, or parks
// a close until the older ops on its descriptor have completed.
func (b *Backend) finish(slot int32, r *record) {
	op := r.op
	if op.Kind == backend.KindClose && r.flags&recParked == 0 {
		if n := b.olderOnFD(r.fd, r.seq, false); n > 0 {
			r.flags |= recParked
			r.wait = n
			r.pend++ // released by unpark
			b.parked = append(b.parked, slot)
			return
		}
	}
	b.fdUnlink(slot, r)
	if r.dir != dirNone && r.flags&recDropped == 0 {
		b.dequeue(r.fd, r.dir)
	}
	c := b.completion(r)
	op.Internal.State &^= stateInFlight
	fd, seq := r.fd, r.seq
	b.slab.release(slot)
	b.emit(c)
	if len(b.parked) > 0 && op.Kind != backend.KindClose {
		b.progressClose(fd, seq)
	}
}

// progressClose counts an op on fd (submitted at seq) done for the closes
// parked on fd, and releases those that have nothing older left.
func (b *Backend) progressClose(fd int32, seq uint64) {
	for i := 0; i < len(b.parked); i++ {
		slot := b.parked[i]
		c := b.slab.get(slot)
		if c.fd != fd || seq >= c.seq {
			continue
		}
		if c.wait--; c.wait > 0 {
			continue
		}
		b.parked = append(b.parked[:i], b.parked[i+1:]...)
		i--
		c.flags &^= recParked
		if c.flags&recCloseLater != 0 {
			b.pushCloseSQE(slot, c)
			c.flags &^= recCloseLater
			continue
		}
		b.settle(slot, c) // finish finds nothing older left: it delivers
	}
}

// completion builds the final completion of r.
func (b *Backend) completion(r *record) Completion {
	op := r.op
	c := Completion{Op: op, UserData: op.UserData}
	res := r.res
	if res < 0 {
		c.Err = b.opError(r, syscall.Errno(-res))
		return c
	}
	c.N = int(res)
	switch op.Kind {
	case backend.KindAccept:
		return b.acceptCompletion(op, res, false, r)
	case backend.KindRecvFrom:
		c.Addr = unixio.DecodeRaw(&r.x().addr, r.x().msg.Namelen)
	case backend.KindPoll:
		c.N = int(unixio.PollEvents(int(res)))
	case backend.KindCancel, backend.KindClose, backend.KindConnect, backend.KindNop,
		backend.KindFsync, backend.KindFtruncate:
		c.N = 0
	case backend.KindOpenAt:
		c.N, c.FD = 0, backend.FD(res)
	case backend.KindStatx:
		c.N = 0
		decodeStatx(r.x().stx, &op.File.Stat)
	case backend.KindRecv:
		if r.flags&recBuffer != 0 {
			if res == 0 {
				b.putBack(op.BufferGroup, r.bufID) // end of stream carries no buffer
			} else {
				b.handOut(op.BufferGroup, r.bufID)
				c.Flags |= backend.HasBuffer
				c.BufferID = r.bufID
			}
		}
	}
	return c
}

// opError converts a failed op's errno.
func (b *Backend) opError(r *record, errno syscall.Errno) error {
	op := r.op
	if r.flags&recBuffer != 0 {
		b.putBack(op.BufferGroup, r.bufID)
	}
	if r.flags&recTimedOut != 0 && (errno == unix.ECANCELED || errno == unix.EINTR || errno == unix.ETIME) {
		return backend.ErrTimeout
	}
	if r.flags&recCanceled != 0 && interrupted(errno) {
		// A request blocked in an io-wq thread (an openat of a FIFO) is
		// stopped by a signal to that thread: the cancel, not a failure.
		return backend.ErrCanceled
	}
	switch {
	case op.Kind == backend.KindCancel && errno == unix.EALREADY:
		return nil
	case op.Kind == backend.KindCancel && errno == unix.ENOENT:
		if r.flags&recUserSpaceHit != 0 {
			return nil
		}
		return backend.ErrNotFound
	case op.Kind == backend.KindRecv && op.Flags&backend.SelectBuffer != 0 && errno == unix.ENOBUFS:
		b.starved(op.BufferGroup)
		return backend.NewError("recv", backend.ErrNoBuffers, errno)
	}
	return unixio.ErrnoError(op.Kind.String(), errno)
}

// acceptCompletion is the completion of an accept that produced fd res (or
// failed). r holds the peer address of a single-shot accept; a native
// multishot one (r nil, or a final multishot CQE) reads it with
// getpeername.
func (b *Backend) acceptCompletion(op *backend.Op, res int32, more bool, r *record) Completion {
	c := Completion{Op: op, UserData: op.UserData, FD: backend.InvalidFD}
	if more {
		c.Flags |= backend.More
	}
	if res < 0 {
		c.Err = unixio.ErrnoError("accept", syscall.Errno(-res))
		return c
	}
	c.FD = backend.FD(res)
	if r != nil && (op.Flags&backend.Multishot == 0 || !b.nativeMultishot) {
		c.Addr = unixio.DecodeRaw(&r.x().addr, r.x().addrLen)
		r.x().addrLen = unix.SizeofSockaddrAny
		return c
	}
	if a, err := unixio.PeerAddr(int(res)); err == nil {
		c.Addr = a
	}
	return c
}

// decodeStatx converts the kernel's statx result to the contract's
// FileStat, in stat(2)'s terms (device numbers encoded as st_dev is).
func decodeStatx(x *unix.Statx_t, st *backend.FileStat) {
	ts := func(t unix.StatxTimestamp) time.Time { return time.Unix(t.Sec, int64(t.Nsec)) }
	*st = backend.FileStat{
		Mode: uint32(x.Mode), Nlink: x.Nlink, UID: x.Uid, GID: x.Gid, Blksize: x.Blksize,
		Ino: x.Ino, Dev: unix.Mkdev(x.Dev_major, x.Dev_minor), Rdev: unix.Mkdev(x.Rdev_major, x.Rdev_minor),
		Size: int64(x.Size), Blocks: int64(x.Blocks),
		Atime: ts(x.Atime), Mtime: ts(x.Mtime), Ctime: ts(x.Ctime),
	}
	if x.Mask&unix.STATX_BTIME != 0 {
		st.Btime = ts(x.Btime)
	}
}

// Restart codes the kernel uses inside for an interrupted system call;
// io_uring lets them out in the result of a request interrupted in an io-wq
// thread (a cancelled openat waiting on a FIFO gets ERESTARTSYS).
const (
	errRestartSys     = syscall.Errno(512) // ERESTARTSYS
	errRestartNoIntr  = syscall.Errno(513) // ERESTARTNOINTR
	errRestartNoHand  = syscall.Errno(514) // ERESTARTNOHAND
	errRestartRestart = syscall.Errno(516) // ERESTART_RESTARTBLOCK
)

// interrupted reports whether errno says a signal stopped the request.
func interrupted(errno syscall.Errno) bool {
	switch errno {
	case unix.EINTR, errRestartSys, errRestartNoIntr, errRestartNoHand, errRestartRestart:
		return true
	}
	return false
}
