//go:build linux

package uring

import (
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// ring is one io_uring instance: its descriptor and the three shared
// mappings. The kernel owns sqHead and cqTail (it stores them with release
// semantics after consuming SQEs or posting CQEs); we own sqTail and cqHead
// (we store them with atomic stores, which the kernel pairs with acquire
// loads). The SQE array and the CQE array are plain memory whose publication
// those four words order.
type ring struct {
	fd       int
	features uint32
	// enters counts the io_uring_enter calls (enter), for EnterCalls. Added
	// to by whichever goroutine enters; loaded by any.
	enters atomic.Uint64

	sqMem, cqMem, sqeMem []byte // the mappings; cqMem is nil with featSingleMmap

	sqHead, sqTail, sqFlags *uint32
	sqMask, sqEntries       uint32
	sqes                    []sqe

	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []cqe

	// coop is set when the ring runs with COOP_TASKRUN|TASKRUN_FLAG: the
	// kernel never interrupts a running thread to post a completion, and
	// IORING_SQ_TASKRUN says when completions wait for a kernel entry.
	// Immutable.
	coop bool

	// tail is our copy of *sqTail: SQEs filled so far. Guarded by the
	// backend's mu.
	tail uint32
	// mayBlock says an SQE queued since the last submit may sleep on the
	// submitting thread (a close: a socket with SO_LINGER waits for its
	// data there; the file ops, which the kernel may run inline): that
	// submit is an ordinary system call, the others raw (see enter).
	// Guarded by the backend's mu.
	mayBlock bool
	// onEnter is nil outside tests, which see each enter's kind (raw) and
	// submission count. Set before the ring is used.
	onEnter func(raw bool, toSubmit uint32)
}

// setupRing makes the ring, trying the optional setup flags first.
func setupRing(o Options) (*ring, error) {
	if b, err := os.ReadFile("/proc/sys/kernel/io_uring_disabled"); err == nil && strings.TrimSpace(string(b)) == "2" {
		return nil, backend.NewError("io_uring_setup", backend.ErrUnsupported, syscall.EPERM)
	}
	var p params
	fd, errno := -1, syscall.Errno(0)
	// The optional flags, newest first: each set the kernel refuses
	// (EINVAL) is retried without its newest member.
	flagSets := []uint32{setupSubmitAll, 0}
	if !o.DisableCoopTaskrun {
		flagSets = []uint32{setupSubmitAll | setupCoopTask | setupTaskFlag, setupSubmitAll, 0}
	}
	for _, extra := range flagSets {
		p = params{Flags: setupCQSize | setupClamp | extra, CQEntries: o.CQEntries}
		fd, errno = sysSetup(o.Entries, &p)
		if errno != unix.EINVAL {
			break
		}
	}
	if errno != 0 {
		return nil, setupError(errno)
	}
	r := &ring{fd: fd, features: p.Features, coop: p.Flags&setupCoopTask != 0}
	if err := r.mmap(&p); err != nil {
		r.unmap()
		unix.Close(fd)
		return nil, err
	}
	return r, nil
}

// setupError converts the errno of io_uring_setup. Every refusal (ENOSYS
// from an old kernel or a seccomp filter, EPERM from a container or the
// io_uring_disabled sysctl, ENOMEM from a memlock limit on old kernels)
// wraps ErrUnsupported, with the errno kept as Sys, so that the runtime
// falls back to epoll whatever the reason.
func setupError(errno syscall.Errno) error {
	return backend.NewError("io_uring_setup", backend.ErrUnsupported, errno)
}

// mmap maps the rings and the SQE array and sets the pointers into them.
func (r *ring) mmap(p *params) error {
	sqSize := int(p.SQOff.Array) + int(p.SQEntries)*4
	cqSize := int(p.CQOff.Cqes) + int(p.CQEntries)*int(unsafe.Sizeof(cqe{}))
	single := p.Features&featSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	prot, flags := unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE
	if r.sqMem, err = unix.Mmap(r.fd, offSQRing, sqSize, prot, flags); err != nil {
		return backend.NewError("io_uring mmap", backend.ErrNoMemory, err)
	}
	cqMem := r.sqMem
	if !single {
		if r.cqMem, err = unix.Mmap(r.fd, offCQRing, cqSize, prot, flags); err != nil {
			return backend.NewError("io_uring mmap", backend.ErrNoMemory, err)
		}
		cqMem = r.cqMem
	}
	sqeSize := int(p.SQEntries) * int(unsafe.Sizeof(sqe{}))
	if r.sqeMem, err = unix.Mmap(r.fd, offSQEs, sqeSize, prot, flags); err != nil {
		return backend.NewError("io_uring mmap", backend.ErrNoMemory, err)
	}
	word := func(mem []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }
	r.sqHead, r.sqTail, r.sqFlags = word(r.sqMem, p.SQOff.Head), word(r.sqMem, p.SQOff.Tail), word(r.sqMem, p.SQOff.Flags)
	r.sqMask, r.sqEntries = *word(r.sqMem, p.SQOff.RingMask), *word(r.sqMem, p.SQOff.RingEntries)
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&r.sqeMem[0])), p.SQEntries)
	// The index array maps ring slots to SQEs; it stays the identity.
	array := unsafe.Slice(word(r.sqMem, p.SQOff.Array), p.SQEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.cqHead, r.cqTail = word(cqMem, p.CQOff.Head), word(cqMem, p.CQOff.Tail)
	r.cqMask = *word(cqMem, p.CQOff.RingMask)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&cqMem[p.CQOff.Cqes])), p.CQEntries)
	r.tail = atomic.LoadUint32(r.sqTail)
	return nil
}

// unmap releases the mappings.
func (r *ring) unmap() {
	for _, m := range [][]byte{r.sqeMem, r.cqMem, r.sqMem} {
		if m != nil {
			unix.Munmap(m)
		}
	}
	r.sqeMem, r.cqMem, r.sqMem, r.sqes, r.cqes = nil, nil, nil, nil, nil
}

// free returns how many SQEs can be filled before a flush.
func (r *ring) free() uint32 {
	// Acquire: pairs with the kernel's release store of the SQ head after
	// it has copied the SQEs it consumed.
	return r.sqEntries - (r.tail - atomic.LoadUint32(r.sqHead))
}

// next returns the next SQE, zeroed, and advances our tail; the caller
// checked free. The SQE becomes visible to the kernel at publish.
func (r *ring) next() *sqe {
	s := &r.sqes[r.tail&r.sqMask]
	*s = sqe{}
	r.tail++
	return s
}

// publish makes the filled SQEs visible: release store of the SQ tail,
// paired with the kernel's acquire load in io_uring_enter.
func (r *ring) publish() { atomic.StoreUint32(r.sqTail, r.tail) }

// pending is how many published SQEs the kernel has not consumed.
func (r *ring) pending() uint32 { return r.tail - atomic.LoadUint32(r.sqHead) }

// submit pushes the pending SQEs to the kernel, retrying EINTR and
// continuing after partial submission. EAGAIN and EBUSY (the kernel is
// short of memory, or holds overflowed CQEs on old kernels) leave the rest
// queued for the next flush.
func (r *ring) submit() error {
	r.publish()
	for {
		n := r.pending()
		if n == 0 {
			r.mayBlock = false // what may block is in the kernel's hands
			return nil
		}
		got, errno := r.enterRaw(n, 0, !r.mayBlock)
		switch {
		case errno == unix.EINTR:
			continue
		case errno == unix.EAGAIN || errno == unix.EBUSY:
			return nil
		case errno != 0:
			return backend.NewError("io_uring_enter", backend.ErrIO, errno)
		case got == 0:
			return nil
		}
	}
}

// taskRunPending reports whether completions wait as task work that a
// kernel entry of their thread would run (only with coop).
func (r *ring) taskRunPending() bool {
	// Acquire: pairs with the kernel's atomic update of the SQ flags.
	return r.coop && atomic.LoadUint32(r.sqFlags)&sqTaskRun != 0
}

// overflowed reports whether CQEs wait in the kernel's overflow list.
func (r *ring) overflowed() bool {
	// Acquire: pairs with the kernel's atomic update of the SQ flags.
	return atomic.LoadUint32(r.sqFlags)&sqCQOverflow != 0
}

// probe reads which opcodes the kernel supports.
func (r *ring) probe() (*probe, error) {
	p := new(probe)
	if errno := sysRegister(r.fd, registerProbe, unsafe.Pointer(p), uint32(len(p.Ops))); errno != 0 {
		return nil, errno
	}
	return p, nil
}

// supports reports whether opcode op is supported by the probe result.
func (p *probe) supports(op uint8) bool {
	return op <= p.LastOp && int(op) < len(p.Ops) && p.Ops[op].Flags&probeOpSupported != 0
}

// kernelAtLeast reports whether the running kernel is major.minor or newer:
// for features that no probe reveals (multishot accept, cancel by fd, both
// 5.19).
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	rel := unix.ByteSliceToString(u.Release[:])
	maj, rest := leadingInt(rel)
	if len(rest) == 0 || rest[0] != '.' {
		return false
	}
	mnr, _ := leadingInt(rest[1:])
	return maj > major || maj == major && mnr >= minor
}

// leadingInt parses the decimal number at the start of s.
func leadingInt(s string) (int, string) {
	n, i := 0, 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n, s[i:]
}

// errnoOf extracts an errno from err, or 0.
func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

// enter is io_uring_enter(2) on the ring, counted in enters: an ordinary
// system call, for a wait (minComplete > 0), which may sleep.
func (r *ring) enter(toSubmit, minComplete, flags uint32, arg unsafe.Pointer, argSize uintptr) (int, syscall.Errno) {
	return r.call(false, toSubmit, minComplete, flags, arg, argSize)
}

// enterRaw is an io_uring_enter(2) that waits for nothing (a submission, a
// harvest of completions kept in the kernel): a raw system call when raw is
// set, as the Unix backends' socket calls are (unixio.Read says why),
// since it cannot sleep unless it submits an op that may (ring.mayBlock).
func (r *ring) enterRaw(toSubmit, flags uint32, raw bool) (int, syscall.Errno) {
	return r.call(raw, toSubmit, 0, flags, nil, 0)
}

// call is enter and enterRaw: the count in enters, the test hook, the call.
func (r *ring) call(raw bool, toSubmit, minComplete, flags uint32, arg unsafe.Pointer, argSize uintptr) (int, syscall.Errno) {
	r.enters.Add(1)
	if r.onEnter != nil {
		r.onEnter(raw, toSubmit)
	}
	return sysEnter(r.fd, toSubmit, minComplete, flags, arg, argSize, raw)
}
