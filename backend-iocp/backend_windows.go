//go:build windows

package iocp

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/windows"
)

// Completion keys. Every handle is associated with the port under keyIO;
// the other two mark packets this package posts itself.
const (
	keyIO   = 1 // an operation's packet; Overlapped points at its record
	keyWake = 2 // Wake: make Wait return
	keyKick = 3 // Submit: make a sleeping Wait look again (new ready completion, earlier timer)
)

// stateInFlight in op.Internal.State marks an op from Submit until Wait hands
// out its final completion (guarded by Backend.mu).
const stateInFlight = 1

// entryCount is how many packets one GetQueuedCompletionStatusEx dequeues.
const entryCount = 128

// Backend is the IOCP backend. See the package documentation.
type Backend struct {
	port  windows.Handle
	caps  backend.Caps
	epoch time.Time // origin of now()

	// waiting is set while a goroutine is in Wait (the ErrBusy check).
	waiting atomic.Bool
	// wakePending pairs Wake's post of a keyWake packet with Wait's dequeue
	// of it: set by the Wake that posts, cleared by the Wait that dequeues,
	// so that Wakes in between post nothing (coalescing).
	wakePending atomic.Bool
	// entries is Wait's packet array (owned by the goroutine in Wait);
	// closeEntries is Close's.
	entries, closeEntries []overlappedEntry

	// portMu guards the port handle's validity: Wait and Wake hold it shared
	// while they use the port, Close holds it exclusively to drain and close.
	portMu sync.RWMutex

	// mu guards everything below, and every record.
	mu         sync.Mutex
	closed     bool // Close began: Submit fails
	drained    bool // Close finished: the port is closed
	recs       []*record
	free       []uint32
	inflight   int // packets the port owes (records with inKernel, posted nops)
	timers     timerHeap
	fds        map[windows.Handle]*fdState
	ready      []backend.Completion // completions not yet handed out, from head
	head       int
	sleeping   bool  // Wait is (about to be) blocked in the port
	sleepUntil int64 // ... until then (now() units, -1 forever)
	kicked     bool  // a keyKick packet is posted and not yet dequeued

	// drainDone is closed by Close when it has drained and closed the port;
	// a Wait that finds Close under way waits for it.
	drainDone chan struct{}

	bufMu  sync.Mutex // guards groups (each group guards its own state)
	groups map[uint16]*group
	// trimPending says some group may have free buffers to release: set by
	// a group's Put, cleared by TrimIdle.
	trimPending atomic.Bool
}

// fdState is what the backend knows of a descriptor it made (guarded by
// Backend.mu).
type fdState struct {
	socket     bool
	family     backend.Family
	typ        backend.SockType
	listening  bool
	appendOnly bool    // a file opened with OpenAppend
	pending    int     // active records on the descriptor
	closeRec   *record // a KindClose waiting for pending to reach 0
	pos        int64   // the current position for Offset -1 on files
	keepAlive  int     // the last OptKeepAlive, read back where the OS cannot tell
	reuseAddr  int     // the last OptReuseAddr of a stream socket (see SetOption)
}

var _ backend.Backend = (*Backend)(nil)

// New makes a completion port and the backend around it.
func New() (*Backend, error) {
	var wsa windows.WSAData
	if err := windows.WSAStartup(uint32(0x202), &wsa); err != nil {
		return nil, sysError("wsastartup", err)
	}
	if err := procGetQueuedCompletionStatusEx.Find(); err != nil {
		return nil, backend.NewError("iocp", backend.ErrUnsupported, err)
	}
	port, err := windows.CreateIoCompletionPort(windows.InvalidHandle, 0, 0, 1)
	if err != nil {
		return nil, sysError("CreateIoCompletionPort", err)
	}
	b := &Backend{
		port:         port,
		epoch:        time.Now(),
		entries:      make([]overlappedEntry, entryCount),
		closeEntries: make([]overlappedEntry, entryCount),
		fds:          make(map[windows.Handle]*fdState),
		groups:       make(map[uint16]*group),
		ready:        make([]backend.Completion, 0, 64),
		drainDone:    make(chan struct{}),
	}
	b.caps = backend.CapCancelFD | backend.CapNativeCompletions
	if unixSocketsWork() {
		b.caps |= backend.CapUnixSockets
	}
	return b, nil
}

// unixSocketsWork reports whether this Windows makes AF_UNIX stream sockets
// (Windows 10 1803 and later).
func unixSocketsWork() bool {
	s, err := windows.WSASocket(windows.AF_UNIX, windows.SOCK_STREAM, 0, nil, 0,
		windows.WSA_FLAG_OVERLAPPED|windows.WSA_FLAG_NO_HANDLE_INHERIT)
	if err != nil {
		return false
	}
	windows.Closesocket(s)
	return true
}

// Name returns "iocp".
func (b *Backend) Name() string { return "iocp" }

// Caps reports CapCancelFD, and CapUnixSockets where AF_UNIX works.
func (b *Backend) Caps() backend.Caps { return b.caps }

// Flush does nothing: Submit starts every op at once.
func (b *Backend) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return backend.ErrClosed
	}
	return nil
}

// now is the monotonic time in nanoseconds since New.
func (b *Backend) now() int64 { return int64(time.Since(b.epoch)) }

// deadlineAfter is now plus d, or math.MaxInt64 (never) when the sum
// overflows: a duration too long for the clock, like math.MaxInt64, means
// never rather than a deadline wrapped into the past. now is not negative.
func deadlineAfter(now int64, d time.Duration) int64 {
	if int64(d) > math.MaxInt64-now {
		return math.MaxInt64
	}
	return now + int64(d)
}

// Wait hands out completions; see backend.Backend.
func (b *Backend) Wait(out []backend.Completion, timeout time.Duration) (int, error) {
	if !b.waiting.CompareAndSwap(false, true) {
		return 0, backend.ErrBusy
	}
	defer b.waiting.Store(false)
	deadline := int64(-1)
	if timeout >= 0 {
		deadline = deadlineAfter(b.now(), timeout)
	}
	for {
		b.mu.Lock()
		b.expireLocked(b.now())
		if n := b.handoutLocked(out); n > 0 || len(out) == 0 {
			b.mu.Unlock()
			return n, nil
		}
		if b.drained {
			b.mu.Unlock()
			return 0, backend.ErrClosed
		}
		if b.closed {
			// Close is draining the port; its completions will be in ready.
			b.mu.Unlock()
			<-b.drainDone
			continue
		}
		ms := b.sleepLocked(deadline)
		b.mu.Unlock()

		n, err := b.dequeue(b.entries, ms)

		b.mu.Lock()
		b.sleeping = false
		woke := b.processLocked(b.entries[:n])
		b.expireLocked(b.now())
		got := b.handoutLocked(out)
		b.mu.Unlock()
		if got > 0 || woke {
			return got, nil
		}
		if err != nil {
			return 0, err
		}
		if timeout == 0 || (deadline >= 0 && b.now() >= deadline) {
			return 0, nil
		}
	}
}

// sleepLocked computes how long Wait may block: until deadline (-1: no
// limit) or the next timer, in whole milliseconds rounded up (so that a
// sub-millisecond wait blocks rather than spins), and records it for
// Submit's kick check.
func (b *Backend) sleepLocked(deadline int64) uint32 {
	until := deadline
	if len(b.timers) > 0 && (until < 0 || b.timers[0].deadline < until) {
		until = b.timers[0].deadline
	}
	b.sleeping, b.kicked, b.sleepUntil = true, false, until
	if until < 0 {
		return windows.INFINITE
	}
	d := until - b.now()
	if d <= 0 {
		return 0
	}
	ms := (d + int64(time.Millisecond) - 1) / int64(time.Millisecond)
	if ms >= int64(windows.INFINITE) {
		ms = int64(windows.INFINITE) - 1
	}
	return uint32(ms)
}

// dequeue waits on the port while holding portMu shared.
func (b *Backend) dequeue(entries []overlappedEntry, ms uint32) (int, error) {
	b.portMu.RLock()
	defer b.portMu.RUnlock()
	if b.portClosed() {
		return 0, nil
	}
	n, err := getQueuedCompletionStatusEx(b.port, entries, ms)
	if err != nil {
		return 0, sysError("GetQueuedCompletionStatusEx", err)
	}
	return n, nil
}

// portClosed reports whether Close closed the port.
func (b *Backend) portClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.drained
}

// kickLocked makes a Wait blocked in the port look again: a completion was
// queued outside it, or a timer was armed earlier than it sleeps.
func (b *Backend) kickLocked() {
	if !b.sleeping || b.kicked || b.drained {
		return
	}
	b.kicked = true
	windows.PostQueuedCompletionStatus(b.port, 0, keyKick, nil)
}

// Wake makes the Wait in progress, or the next one, return.
func (b *Backend) Wake() error {
	if !b.wakePending.CompareAndSwap(false, true) {
		return nil
	}
	b.portMu.RLock()
	defer b.portMu.RUnlock()
	if b.portClosed() {
		return nil
	}
	if err := windows.PostQueuedCompletionStatus(b.port, 0, keyWake, nil); err != nil {
		b.wakePending.Store(false)
		return sysError("wake", err)
	}
	return nil
}

// Close cancels every op in flight, dequeues until the port owes nothing
// (the completions stay readable through Wait) and closes the port.
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return backend.ErrClosed
	}
	b.closed = true
	b.cancelAllLocked()
	b.mu.Unlock()

	// A Wait blocked in the port holds portMu shared: kick it out.
	windows.PostQueuedCompletionStatus(b.port, 0, keyKick, nil)
	b.portMu.Lock()
	defer b.portMu.Unlock()
	var err error
	for {
		b.mu.Lock()
		owed := b.inflight
		b.mu.Unlock()
		if owed == 0 {
			break
		}
		n, derr := getQueuedCompletionStatusEx(b.port, b.closeEntries, 100)
		b.mu.Lock()
		b.processLocked(b.closeEntries[:n])
		if n == 0 {
			b.cancelAllLocked() // an op that raced the first pass
		}
		b.mu.Unlock()
		if derr != nil {
			err = sysError("close", derr)
			break
		}
	}
	b.mu.Lock()
	b.expireLocked(b.now())
	b.drained = true
	b.mu.Unlock()
	if cerr := windows.CloseHandle(b.port); cerr != nil && err == nil {
		err = sysError("close", cerr)
	}
	close(b.drainDone)
	return err
}

// cancelAllLocked cancels every active record (Close).
func (b *Backend) cancelAllLocked() {
	for _, r := range b.recs {
		if r.active {
			b.cancelLocked(r)
		}
	}
}

// String describes the backend, for test failures.
func (b *Backend) String() string { return fmt.Sprintf("iocp(port %#x)", uintptr(b.port)) }
