package uring

// Options configure New. The zero value is the default: every kernel
// feature used when the kernel has it. The Disable switches force the
// fallbacks, so that tests cover them on a kernel that has everything.
type Options struct {
	// Entries is the size of the submission queue, rounded up to a power
	// of two by the kernel; 0 means 4096.
	Entries uint32
	// CQEntries is the size of the completion queue; 0 means twice
	// Entries. Completions beyond it wait in the kernel (IORING_FEAT_NODROP)
	// until Wait makes room.
	CQEntries uint32

	// DisableMultishotAccept emulates Multishot accept by re-arming a
	// single-shot accept after each connection.
	DisableMultishotAccept bool
	// DisableBufferRings makes buffer groups use IORING_OP_PROVIDE_BUFFERS
	// instead of registered buffer rings.
	DisableBufferRings bool
	// DisableProvideBuffers turns off kernel buffer selection: a
	// SelectBuffer recv polls the socket and then reads into a group
	// buffer itself.
	DisableProvideBuffers bool
	// DisableCancelFD makes KindClose cancel the descriptor's ops one by
	// one and close it when they have completed, instead of
	// IORING_ASYNC_CANCEL_FD linked to the close.
	DisableCancelFD bool
	// DisableExtArg makes Wait time out through an internal TIMEOUT
	// request instead of IORING_ENTER_EXT_ARG.
	DisableExtArg bool
	// DisablePollFirst ignores the backend.PollFirst hint: recvs attempt
	// at once, as on kernels before 5.19.
	DisablePollFirst bool
	// DisableCoopTaskrun sets the ring up without IORING_SETUP_COOP_TASKRUN
	// (5.19 and later): a completion then interrupts the thread that
	// submitted its request (an inter-processor interrupt) when that thread
	// is running, instead of waiting for its next kernel entry.
	DisableCoopTaskrun bool
	// DisableFileOps refuses the file-system kinds (KindOpenAt,
	// KindFsync, KindStatx, KindFtruncate) with ErrUnsupported, as on a
	// kernel without IORING_OP_OPENAT, FSYNC and STATX, so that callers
	// test their blocking fallback.
	DisableFileOps bool
	// DisableFtruncate refuses KindFtruncate with ErrUnsupported, as on a
	// kernel before 6.9 (no IORING_OP_FTRUNCATE).
	DisableFtruncate bool
}

// defaults fills the zero fields.
func (o Options) defaults() Options {
	if o.Entries == 0 {
		o.Entries = 4096
	}
	if o.CQEntries == 0 {
		o.CQEntries = 2 * o.Entries
	}
	return o
}
