//go:build linux

package uring

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel ABI of io_uring (include/uapi/linux/io_uring.h), defined here
// because x/sys/unix has only the system call numbers. Every struct's size
// is checked by TestLayout.

// Setup flags (io_uring_params.flags).
const (
	setupCQSize    = 1 << 3 // IORING_SETUP_CQSIZE: cq_entries is given
	setupClamp     = 1 << 4 // IORING_SETUP_CLAMP: clamp entries to the maximum
	setupSubmitAll = 1 << 7 // IORING_SETUP_SUBMIT_ALL: a failing SQE does not stop the batch
	setupCoopTask  = 1 << 8 // IORING_SETUP_COOP_TASKRUN: task work never interrupts a running thread
	setupTaskFlag  = 1 << 9 // IORING_SETUP_TASKRUN_FLAG: IORING_SQ_TASKRUN says task work is pending
)

// Feature flags (io_uring_params.features).
const (
	featSingleMmap = 1 << 0 // IORING_FEAT_SINGLE_MMAP: SQ and CQ rings share one mapping
	featNoDrop     = 1 << 1 // IORING_FEAT_NODROP: overflowed CQEs are kept, not dropped
	featRWCurPos   = 1 << 3 // IORING_FEAT_RW_CUR_POS: offset -1 means the file position
	featFastPoll   = 1 << 5 // IORING_FEAT_FAST_POLL: sockets are polled, not punted to threads
	featExtArg     = 1 << 8 // IORING_FEAT_EXT_ARG: io_uring_enter takes a timeout
)

// io_uring_enter flags.
const (
	enterGetEvents = 1 << 0 // IORING_ENTER_GETEVENTS
	enterExtArg    = 1 << 3 // IORING_ENTER_EXT_ARG
)

// SQ ring flags (the shared sq flags word).
const (
	sqCQOverflow = 1 << 1 // IORING_SQ_CQ_OVERFLOW: CQEs wait in the kernel's overflow list
	sqTaskRun    = 1 << 2 // IORING_SQ_TASKRUN: completions wait as task work for a kernel entry
)

// SQE flags.
const (
	sqeIOLink       = 1 << 2 // IOSQE_IO_LINK
	sqeIOHardlink   = 1 << 3 // IOSQE_IO_HARDLINK
	sqeBufferSelect = 1 << 5 // IOSQE_BUFFER_SELECT
)

// CQE flags.
const (
	cqeFBuffer     = 1 << 0 // IORING_CQE_F_BUFFER: the upper 16 bits are a buffer id
	cqeFMore       = 1 << 1 // IORING_CQE_F_MORE: the request stays armed
	cqeBufferShift = 16
)

// Opcodes.
const (
	opNop            = 0
	opReadv          = 1
	opWritev         = 2
	opFsync          = 3
	opPollAdd        = 6
	opSendmsg        = 9
	opRecvmsg        = 10
	opTimeout        = 11
	opTimeoutRemove  = 12
	opAccept         = 13
	opAsyncCancel    = 14
	opLinkTimeout    = 15
	opConnect        = 16
	opOpenat         = 18
	opClose          = 19
	opStatx          = 21
	opRead           = 22
	opWrite          = 23
	opSend           = 26
	opRecv           = 27
	opProvideBuffers = 31
	opFtruncate      = 55 // Linux 6.9
)

// Operation flags.
const (
	acceptMultishot = 1 << 0 // IORING_ACCEPT_MULTISHOT, in sqe.ioprio
	pollFirst       = 1 << 0 // IORING_RECVSEND_POLL_FIRST, in sqe.ioprio of recv and recvmsg
	cancelAll       = 1 << 0 // IORING_ASYNC_CANCEL_ALL
	cancelFD        = 1 << 1 // IORING_ASYNC_CANCEL_FD
	cancelAny       = 1 << 2 // IORING_ASYNC_CANCEL_ANY
	fsyncDataSync   = 1 << 0 // IORING_FSYNC_DATASYNC, in sqe.fsync_flags
)

// io_uring_register opcodes.
const (
	registerProbe     = 8  // IORING_REGISTER_PROBE
	registerPbufRing  = 22 // IORING_REGISTER_PBUF_RING
	unregisterPbufRng = 23 // IORING_UNREGISTER_PBUF_RING
)

// mmap offsets.
const (
	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000
)

// sqringOffsets is struct io_sqring_offsets.
type sqringOffsets struct {
	Head, Tail, RingMask, RingEntries, Flags, Dropped, Array, Resv1 uint32
	UserAddr                                                        uint64
}

// cqringOffsets is struct io_cqring_offsets.
type cqringOffsets struct {
	Head, Tail, RingMask, RingEntries, Overflow, Cqes, Flags, Resv1 uint32
	UserAddr                                                        uint64
}

// params is struct io_uring_params.
type params struct {
	SQEntries, CQEntries, Flags, SQThreadCPU, SQThreadIdle, Features, WQFD uint32
	Resv                                                                   [3]uint32
	SQOff                                                                  sqringOffsets
	CQOff                                                                  cqringOffsets
}

// sqe is struct io_uring_sqe (64 bytes).
type sqe struct {
	Opcode      uint8
	Flags       uint8
	Ioprio      uint16
	FD          int32
	Off         uint64 // also addr2
	Addr        uint64
	Len         uint32
	OpFlags     uint32 // rw_flags, msg_flags, poll32_events, timeout_flags, cancel_flags, accept_flags
	UserData    uint64
	BufIndex    uint16 // also buf_group
	Personality uint16
	SpliceFDIn  int32
	Addr3       uint64
	pad         uint64
}

// cqe is struct io_uring_cqe (16 bytes).
type cqe struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

// probeOp is struct io_uring_probe_op.
type probeOp struct {
	Op    uint8
	Resv  uint8
	Flags uint16 // probeOpSupported
	Resv2 uint32
}

const probeOpSupported = 1 << 0

// probe is struct io_uring_probe with room for every opcode.
type probe struct {
	LastOp uint8
	OpsLen uint8
	Resv   uint16
	Resv2  [3]uint32
	Ops    [256]probeOp
}

// kernelTimespec is struct __kernel_timespec: 64-bit fields on every arch
// (unix.Timespec is 32-bit on 386 and arm).
type kernelTimespec struct {
	Sec  int64
	Nsec int64
}

// geteventsArg is struct io_uring_getevents_arg, for IORING_ENTER_EXT_ARG.
type geteventsArg struct {
	Sigmask   uint64
	SigmaskSz uint32
	MinWait   uint32
	TS        uint64
}

// bufReg is struct io_uring_buf_reg, for IORING_REGISTER_PBUF_RING.
type bufReg struct {
	RingAddr    uint64
	RingEntries uint32
	Bgid        uint16
	Flags       uint16
	Resv        [3]uint64
}

// ringBuf is struct io_uring_buf, one entry of a provided buffer ring. The
// ring's tail (a uint16) overlays bytes 14..15 of entry 0.
type ringBuf struct {
	Addr uint64
	Len  uint32
	Bid  uint16
	Resv uint16
}

// isBigEndian says how the buffer ring's tail sits in its 32-bit word.
var isBigEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 0
}()

// sysSetup is io_uring_setup(2).
func sysSetup(entries uint32, p *params) (int, syscall.Errno) {
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	return int(fd), e
}

// sysEnter is io_uring_enter(2), a raw system call if raw is set. arg and
// argSize are an io_uring_getevents_arg with enterExtArg, else zero.
func sysEnter(fd int, toSubmit, minComplete, flags uint32, arg unsafe.Pointer, argSize uintptr, raw bool) (int, syscall.Errno) {
	call := unix.Syscall6
	if raw {
		call = unix.RawSyscall6
	}
	n, _, e := call(unix.SYS_IO_URING_ENTER, uintptr(fd), uintptr(toSubmit), uintptr(minComplete),
		uintptr(flags), uintptr(arg), argSize)
	return int(n), e
}

// sysRegister is io_uring_register(2).
func sysRegister(fd int, opcode uint32, arg unsafe.Pointer, nrArgs uint32) syscall.Errno {
	_, _, e := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(fd), uintptr(opcode), uintptr(arg), uintptr(nrArgs), 0, 0)
	return e
}
