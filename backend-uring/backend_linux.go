//go:build linux

package uring

import (
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
	"golang.org/x/sys/unix"
)

// stateInFlight in Op.Internal.State marks an op between Submit and its
// final completion. Written under mu only.
const stateInFlight = 1

// Buffer modes of a group.
const (
	bufRing    = iota + 1 // a registered provided-buffer ring
	bufProvide            // IORING_OP_PROVIDE_BUFFERS
	bufEmulate            // no kernel selection: poll, then read into a free buffer
)

// Backend is the io_uring backend. See the package doc for the protocol.
type Backend struct {
	unixio.Control

	r     *ring
	caps  backend.Caps
	epoch time.Time

	// What the kernel (and the Options) allow; fixed by New.
	nativeMultishot bool
	nativeCancelFD  bool
	pollFirst       bool
	cancelAny       bool
	extArg          bool
	curPos          bool
	bufMode         int
	// fileOps and ftruncate: the kernel has OPENAT, FSYNC and STATX, and
	// FTRUNCATE (probed; the Options can turn them off). Mirrored in caps,
	// which Submit checks.
	fileOps   bool
	ftruncate bool

	// mu guards the submission side: the SQ (r.tail and the SQEs), the
	// slab and the records, the per-fd lists, the parked closes, the
	// counters below and op.Internal of every op in flight. Wait takes it
	// while it processes CQEs, since that updates the same state.
	mu       sync.Mutex
	slab     slab
	fdHeads  fdIndex // slot+1 of the first record on each descriptor, 0 if none
	arms     armTable
	parked   []int32 // closes waiting for older ops on their descriptor
	seq      uint64
	internal int    // internal CQEs still to come (wake, timers, provides, cancels)
	timerSeq uint32 // the current internal Wait timeout
	timerTS  kernelTimespec
	closing  bool // Close has begun: Submit, Flush and Wake refuse
	fdsGone  bool // the ring and eventfd are closed
	// waiting is set, under mu, by Wait just after its last flush before
	// it blocks, and cleared after; Submit reads it under mu, so an op
	// submitted while Wait blocks is pushed to the kernel at once.
	waiting atomic.Bool
	// polling is set by StartPolling and cleared by StopPolling, under mu:
	// the waiter waits in Go's poller on the ring's descriptor, so an op
	// submitted now must reach the kernel at once, as while waiting is set.
	polling atomic.Bool

	// cqMu is held by the one goroutine consuming the CQ: Wait (ErrBusy to
	// a second one) or Close. The fields below are guarded by it.
	cqMu       sync.Mutex
	extra      []Completion // made but not yet delivered: out was full
	out        []Completion // the current harvest's destination
	outN       int
	woke       bool // the harvest saw the wake CQE
	timerFired bool // the harvest saw the current internal timer's CQE
	done       bool // Close finished: only extra is left to deliver
	waitArg    geteventsArg
	waitTS     kernelTimespec

	// eventfd is the wake descriptor; an IORING_OP_READ on it, into
	// wakeBuf, is always pending while the backend is open.
	eventfd int
	wakeBuf uint64
	// wakeFlag is set by the Wake that writes the eventfd and cleared by
	// Wait when it consumes the wake CQE: the Wakes in between coalesce.
	wakeFlag atomic.Bool

	groupsMu sync.RWMutex
	// smallGroups holds the groups of ids under smallGroupIDs too, read
	// without groupsMu: every pooled read looks its group up twice (its
	// buffer, its release), and the read lock is a shared counter that the
	// workers' cores would pass between them. Stored under groupsMu.
	smallGroups [smallGroupIDs]atomic.Pointer[group]
	groups      map[uint16]*group
	// untrimmed says that some group may have parked buffers whose pages
	// TrimIdle has not returned: set by park (under the group's mu) and by
	// a TrimIdle that left some for later, cleared by TrimIdle before it
	// looks at the groups.
	untrimmed atomic.Bool
	// pagesEmptied says that a page of fdHeads or arms.byFD went back to
	// all zeros: stored true by fdIndex.set and false by compactIndexes,
	// both under mu (so a page emptied after the clear sets it again).
	// TrimIdle loads it without mu to skip the lock when it is false; a
	// store that load misses is seen by the next TrimIdle, before the
	// worker's next sleep. pagesEmptiedAt (guarded by mu) is when TrimIdle
	// first saw it set, the zero Time before.
	pagesEmptied   atomic.Bool
	pagesEmptiedAt time.Time
}

// Completion is backend.Completion.
type Completion = backend.Completion

var _ backend.Backend = (*Backend)(nil)

// New makes an io_uring backend. When the kernel refuses io_uring (ENOSYS,
// EPERM: an old kernel, seccomp, a container, the io_uring_disabled sysctl)
// the error wraps backend.ErrUnsupported and carries the errno, so that the
// caller can fall back to epoll.
func New(opts Options) (*Backend, error) {
	opts = opts.defaults()
	r, err := setupRing(opts)
	if err != nil {
		return nil, err
	}
	b := &Backend{r: r, epoch: time.Now(), eventfd: -1, groups: make(map[uint16]*group)}
	b.fdHeads.emptied = &b.pagesEmptied
	b.arms.byFD.emptied = &b.pagesEmptied
	if err := b.detect(opts); err != nil {
		b.release()
		return nil, err
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		b.release()
		return nil, unixio.Error("eventfd", err)
	}
	b.eventfd = efd
	b.mu.Lock()
	b.armWake()
	err = b.r.submit()
	b.mu.Unlock()
	if err != nil {
		b.release()
		return nil, err
	}
	return b, nil
}

// detect probes the kernel and fixes what is native and what is emulated.
func (b *Backend) detect(o Options) error {
	p, err := b.r.probe()
	if err != nil {
		return backend.NewError("io_uring probe", backend.ErrUnsupported, err)
	}
	for _, op := range []uint8{opNop, opReadv, opWritev, opPollAdd, opSendmsg, opRecvmsg, opTimeout, opAccept,
		opAsyncCancel, opLinkTimeout, opConnect, opClose, opRead, opWrite, opSend, opRecv} {
		if !p.supports(op) {
			return backend.NewError("io_uring probe", backend.ErrUnsupported, syscall.ENOSYS)
		}
	}
	if b.r.features&featNoDrop == 0 {
		// Without NODROP the kernel drops completions on overflow; an op
		// would never complete.
		return backend.NewError("io_uring probe", backend.ErrUnsupported, syscall.ENOSYS)
	}
	new519 := kernelAtLeast(5, 19)
	b.nativeMultishot = new519 && !o.DisableMultishotAccept
	b.nativeCancelFD = new519 && !o.DisableCancelFD
	b.cancelAny = new519
	b.pollFirst = new519 && !o.DisablePollFirst
	b.extArg = b.r.features&featExtArg != 0 && !o.DisableExtArg
	b.curPos = b.r.features&featRWCurPos != 0
	b.fileOps = p.supports(opOpenat) && p.supports(opFsync) && p.supports(opStatx) && !o.DisableFileOps
	b.ftruncate = b.fileOps && p.supports(opFtruncate) && !o.DisableFtruncate
	switch {
	case o.DisableProvideBuffers || !p.supports(opProvideBuffers):
		b.bufMode = bufEmulate
	case o.DisableBufferRings || !new519:
		b.bufMode = bufProvide
	default:
		b.bufMode = bufRing
	}
	b.caps = backend.CapUnixSockets | backend.CapPoll | backend.CapNativeCompletions
	if b.nativeMultishot {
		b.caps |= backend.CapNativeMultishot
	}
	if b.bufMode != bufEmulate {
		b.caps |= backend.CapNativeBufferGroups
	}
	if b.nativeCancelFD {
		b.caps |= backend.CapCancelFD
	}
	if b.fileOps {
		b.caps |= backend.CapFileOps
	}
	if b.ftruncate {
		b.caps |= backend.CapFtruncate
	}
	return nil
}

// release closes the descriptors and unmaps the ring (New's failure path
// and the end of Close).
func (b *Backend) release() {
	b.releaseGroups()
	if b.r != nil {
		b.r.unmap()
		unix.Close(b.r.fd)
	}
	if b.eventfd >= 0 {
		unix.Close(b.eventfd)
	}
}

// Name returns "uring".
func (b *Backend) Name() string { return "uring" }

// Caps reports what is served by the kernel on this system.
func (b *Backend) Caps() backend.Caps { return b.caps }

// Submit hands op to the kernel (see backend.Backend).
func (b *Backend) Submit(op *backend.Op) error {
	if err := backend.CheckOp(op); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing {
		return backend.ErrClosed
	}
	if op.Internal.State&stateInFlight != 0 {
		return backend.NewError(op.Kind.String(), backend.ErrInvalid, errInFlight)
	}
	if err := b.submitLocked(op); err != nil {
		return err
	}
	b.r.publish()
	if b.pushesAtOnce() {
		return b.r.submit()
	}
	return nil
}

// Flush pushes the queued SQEs to the kernel.
func (b *Backend) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing {
		return backend.ErrClosed
	}
	return b.r.submit()
}

// Wake makes the blocked Wait, or the next one, return.
func (b *Backend) Wake() error {
	if !b.wakeFlag.CompareAndSwap(false, true) {
		return nil // a wake is already on its way
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fdsGone {
		return backend.ErrClosed
	}
	one := [8]byte{1}
	if isBigEndian {
		one = [8]byte{7: 1}
	}
	for {
		_, err := unix.Write(b.eventfd, one[:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return nil // the counter is saturated: a wake is pending anyway
		}
		return unixio.Error("eventfd write", err)
	}
}

// reserve makes room for n SQEs, flushing the SQ when it is full. Called
// with mu held.
func (b *Backend) reserve(n uint32) error {
	if b.r.free() >= n {
		return nil
	}
	if err := b.r.submit(); err != nil {
		return err
	}
	if b.r.free() < n {
		return backend.NewError("submit", backend.ErrNoMemory, syscall.EBUSY)
	}
	return nil
}

// push returns a zeroed SQE with user data ud, flushing first if the SQ is
// full; the caller reserved room for linked pairs. Called with mu held.
func (b *Backend) push(ud uint64) *sqe {
	if b.r.free() == 0 {
		b.r.submit()
	}
	s := b.r.next()
	s.UserData = ud
	return s
}

// pushInternal pushes an internal request whose CQE is only counted.
func (b *Backend) pushInternal(ud uint64) *sqe {
	b.internal++
	return b.push(ud)
}

// armWake queues the eventfd read that Wake completes. Called with mu.
func (b *Backend) armWake() {
	s := b.pushInternal(token(tagWake, 0, 0))
	s.Opcode = opRead
	s.FD = int32(b.eventfd)
	s.Addr = uint64(uintptrOf(&b.wakeBuf))
	s.Len = 8
	s.Off = ^uint64(0)
}

// now is the monotonic clock of deadlines.
func (b *Backend) now() int64 { return int64(time.Since(b.epoch)) }

// setTimespec sets ts to d (at least 0).
func setTimespec(ts *kernelTimespec, d time.Duration) {
	d = max(d, 0)
	ts.Sec, ts.Nsec = int64(d/time.Second), int64(d%time.Second)
}
